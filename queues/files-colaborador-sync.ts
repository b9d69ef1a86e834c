import { filaDeColaboradorSync } from './colaborador-sync';

export const filaFilesColaboradorSync = filaDeColaboradorSync('files');
