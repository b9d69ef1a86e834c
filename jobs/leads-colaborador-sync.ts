import { acessoLeads } from '../api/leads/acesso';
import { processadorDeColaboradorSync } from './colaborador-sync';

export const processarLeadsColaboradorSync = processadorDeColaboradorSync(acessoLeads);
