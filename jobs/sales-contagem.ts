import { compactarContagem } from '../api/sales/contagem';
import { processadorDeContagem } from './contagem';

export const processarSalesContagem = processadorDeContagem(compactarContagem);
