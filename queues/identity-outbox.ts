import { DefinicaoDeFila } from './fila';

/**
 * `colaborador.*` events of the identity service on their way to the hub (DESIGN §3). A job per
 * stored event (jobId = event id); it retries with a capped back-off for as long as the hub is
 * out of reach, so nothing is lost. A repeatable `varrer` job re-enqueues stored events that never
 * reached the queue (Redis down at the time of the change); a repeatable `purgar` deletes the events
 * sent more than IDENTITY_OUTBOX_RETENCAO_DIAS ago.
 */
export const filaIdentityOutbox: DefinicaoDeFila = {
  nome: 'identity-outbox',
  servico: 'identity',
  descricao: 'Eventos colaborador.* do identity publicados no hub; varredura dos esquecidos e retenção dos enviados',
  opcoesDosJobs: {
    attempts: 1_000_000,
    backoff: { type: 'limitado', delay: 1000 },
    removeOnComplete: { age: 24 * 3600, count: 1000 },
    // a week of failures, at most the last 5,000 (each with its stacks and log lines)
    removeOnFail: { age: 7 * 24 * 3600, count: 5000 },
  },
  opcoesDoWorker: {
    concurrency: 4,
    settings: {
      // exponential from 1 s, capped at 5 minutes: an outage of hours still retries often enough
      backoffStrategy: (tentativas: number) => Math.min(300_000, 1000 * 2 ** Math.max(0, tentativas - 1)),
    },
  },
};

export const INTERVALO_DA_VARREDURA_MS = 60_000;
export const INTERVALO_DA_PURGA_MS = 60 * 60_000;
