import { acessoHub } from '../api/hub/acesso';
import { processadorDeColaboradorSync } from './colaborador-sync';

export const processarHubColaboradorSync = processadorDeColaboradorSync(acessoHub);
