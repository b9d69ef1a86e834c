import { acessoSales } from '../api/sales/acesso';
import { processadorDeColaboradorSync } from './colaborador-sync';

export const processarSalesColaboradorSync = processadorDeColaboradorSync(acessoSales);
