import { filaDeContagem } from './contagem';

/** The conversations' per-status counts (api/sales/contagem.ts). */
export const filaSalesContagem = filaDeContagem('sales', 'Consolidação da contagem de conversas por status');
