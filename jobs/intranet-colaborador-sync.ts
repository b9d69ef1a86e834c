import { acessoIntranet } from '../api/intranet/acesso';
import { processadorDeColaboradorSync } from './colaborador-sync';

export const processarIntranetColaboradorSync = processadorDeColaboradorSync(acessoIntranet);
