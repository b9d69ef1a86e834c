import { DefinicaoDeFila } from './fila';

/**
 * Fan-out of published events (DESIGN §5): POST /eventos stores each batch of events with their
 * deliveries, then enqueues one job here per batch (up to DISTRIBUICAO_MAXIMA deliveries) instead
 * of one delivery job each, so a publication costs one queue write however many subscriptions
 * match. The processor adds the delivery jobs with job id = delivery id: a retried batch adds
 * nothing while those jobs wait, and a job re-added after its delivery was made finds it no
 * longer pending and sends nothing. The sweep of forgotten deliveries covers a batch Redis lost.
 * Every deployment of the hub must run this queue's worker (`suite start` does).
 */
export const filaHubDistribuicao: DefinicaoDeFila = {
  nome: 'hub-distribuicao',
  servico: 'hub',
  descricao: 'Distribuição dos eventos publicados em jobs de entrega',
  opcoesDosJobs: {
    attempts: 10,
    backoff: { type: 'exponential', delay: 1000 },
    removeOnComplete: true,
    // a failed job holds up to 1,000 ids (about 40 KB) and the sweep redoes its work: a few kept
    // for a look are enough
    removeOnFail: { count: 100 },
  },
  opcoesDoWorker: { concurrency: 2 },
};

/** Deliveries per distribution job: job data of a few tens of KiB. */
export const DISTRIBUICAO_MAXIMA = 1000;
