import { filaDeColaboradorSync } from './colaborador-sync';

export const filaLeadsColaboradorSync = filaDeColaboradorSync('leads');
