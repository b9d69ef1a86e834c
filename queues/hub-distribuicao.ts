import { DefinicaoDeFila } from './fila';

/**
 * Fan-out of published events (DESIGN §5): POST /eventos stores each batch of events with their
 * deliveries, then enqueues one job here per batch (up to DISTRIBUICAO_MAXIMA deliveries) instead
 * of one delivery job each, so a publication costs one queue write however many subscriptions
 * match. The processor adds the delivery jobs (job id = delivery id, so a retried batch adds
 * nothing twice); the sweep of forgotten deliveries still covers a batch Redis lost.
 */
export const filaHubDistribuicao: DefinicaoDeFila = {
  nome: 'hub-distribuicao',
  servico: 'hub',
  descricao: 'Distribuição dos eventos publicados em jobs de entrega',
  opcoesDosJobs: {
    attempts: 10,
    backoff: { type: 'exponential', delay: 1000 },
    removeOnComplete: true,
    removeOnFail: { count: 1000 },
  },
  opcoesDoWorker: { concurrency: 2 },
};

/** Deliveries per distribution job: job data of a few tens of KiB. */
export const DISTRIBUICAO_MAXIMA = 1000;
