import { DefinicaoDeFila } from './fila';

/**
 * A repeatable job that folds the error-queue count deltas into the base counts
 * (api/hub/contagem.ts), so each subscription's count stays one small read. One at a time.
 */
export const filaHubContagem: DefinicaoDeFila = {
  nome: 'hub-contagem',
  servico: 'hub',
  descricao: 'Consolidação da contagem de entregas na fila de erro',
  opcoesDosJobs: { attempts: 1, removeOnComplete: { count: 100 }, removeOnFail: { count: 100 } },
  opcoesDoWorker: { concurrency: 1 },
};

export const INTERVALO_DA_CONSOLIDACAO_DA_FILA_DE_ERRO_MS = 10_000;
