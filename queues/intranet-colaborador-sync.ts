import { filaDeColaboradorSync } from './colaborador-sync';

export const filaIntranetColaboradorSync = filaDeColaboradorSync('intranet');
