import { filaDeColaboradorSync } from './colaborador-sync';

export const filaSalesColaboradorSync = filaDeColaboradorSync('sales');
