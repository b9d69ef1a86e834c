import { filaDeColaboradorSync } from './colaborador-sync';

export const filaHubColaboradorSync = filaDeColaboradorSync('hub');
