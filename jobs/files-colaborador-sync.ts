import { acessoFiles } from '../api/files/acesso';
import { processadorDeColaboradorSync } from './colaborador-sync';

export const processarFilesColaboradorSync = processadorDeColaboradorSync(acessoFiles);
