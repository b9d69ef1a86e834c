import { DefinicaoDeFila } from './fila';

/**
 * A repeatable job that folds the conversations' count deltas into the base counts
 * (api/sales/contagem.ts), so the listing's total stays one small read. One at a time.
 */
export const filaSalesContagem: DefinicaoDeFila = {
  nome: 'sales-contagem',
  servico: 'sales',
  descricao: 'Consolidação da contagem de conversas por status',
  opcoesDosJobs: { attempts: 1, removeOnComplete: { count: 100 }, removeOnFail: { count: 100 } },
  opcoesDoWorker: { concurrency: 1 },
};

export const INTERVALO_DA_CONSOLIDACAO_MS = 10_000;
