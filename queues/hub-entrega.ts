import { config } from '../config';
import { DefinicaoDeFila, FalhaEsperada } from './fila';

/**
 * Hub deliveries (DESIGN §5), two kinds of job in one queue, one processor:
 * - `entregar-lote` `{entregas}`: the first attempts of a batch of published events, about
 *   LOTE_MAXIMO deliveries, tried side by side. POST /eventos enqueues one per batch, so a
 *   publication costs one queue write however many subscriptions match (docs/decisoes.md);
 * - `entregar` `{id}`: one delivery, job id = delivery id (= webhook-id): its retries after a
 *   failed attempt, a replay, a delivery the sweep found without a job. Adding it twice is a no-op.
 * The processor counts attempts against the subscription's `maximo_de_tentativas` (so a PATCH
 * counts at once); BullMQ only spaces the retries, on the schedule below.
 */
export const filaHubEntrega: DefinicaoDeFila = {
  nome: 'hub-entrega',
  servico: 'hub',
  descricao: 'Entregas de eventos às assinaturas',
  opcoesDosJobs: {
    attempts: 20,
    backoff: { type: 'agenda' },
    removeOnComplete: true,
    removeOnFail: true,
  },
  get opcoesDoWorker() {
    return {
      concurrency: config().hub.entregaConcorrencia,
      lockDuration: config().hub.entregaLockMs,
      // a dead worker's deliveries are taken up again within about two checks (BullMQ's default is every 30 s)
      stalledInterval: Math.min(config().hub.entregaLockMs, 30_000),
      settings: { backoffStrategy: atrasoDoJob },
    };
  },
};

/**
 * Deliveries per batch job, about: an event's are never split, so one with more subscriptions makes
 * a larger job of its own. A worker holds up to HUB_ENTREGA_CONCORRENCIA jobs, so this bounds the
 * first attempts one worker can hold while another, started to drain a backlog, finds the queue
 * empty (50 x 100 by default); a batch costs the API one job in its queue write and the worker one
 * job's fetch and lock, small beside its hundred signed calls.
 */
export const LOTE_MAXIMO = 100;

/**
 * A batch job fails only on an error other than a failed attempt (the database away): it runs
 * again soon, not on the deliveries' schedule of minutes and hours, and after the last try its
 * deliveries are left to the sweep.
 */
export const RETENTATIVAS_DO_LOTE = { attempts: 12, backoff: { type: 'exponential', delay: 1000 } };

export type JobDeEntrega = { id: string } | { entregas: string[] };

/**
 * The failure of one attempt; `retryAfterMs` when the subscriber answered 429/503 with Retry-After;
 * `atrasoMs` the delay the processor chose for the next attempt and stored as its
 * `proxima_tentativa_em`.
 */
export class FalhaDeTentativa extends FalhaEsperada {
  atrasoMs?: number;

  constructor(
    message: string,
    readonly retryAfterMs?: number,
  ) {
    super(message);
    this.name = 'FalhaDeTentativa';
  }
}

/**
 * A job of one delivery that failed on something other than an attempt (the database away) runs
 * again after 1, 2, 4 … seconds, up to a minute: as a batch job does, not on the deliveries'
 * schedule of hours, since no attempt was made. Its last try leaves the delivery to the sweep.
 */
const ATRASO_APOS_ERRO_MAXIMO_MS = 60_000;

/**
 * BullMQ's backoff: the delay already chosen with a failed attempt, so the retry runs when the
 * stored `proxima_tentativa_em` says (a second draw of the jitter would disagree, and the job's own
 * count restarts when the sweep queues a delivery again); a short one after any other error.
 */
export function atrasoDoJob(tentativasFeitas: number, _tipo?: string, erro?: Error): number {
  if (erro instanceof FalhaDeTentativa && erro.atrasoMs !== undefined) return erro.atrasoMs;
  return Math.min(1000 * 2 ** (Math.max(tentativasFeitas, 1) - 1), ATRASO_APOS_ERRO_MAXIMO_MS);
}

/**
 * HUB_RETRY_SCHEDULE_MS with ±20% jitter, the last delay repeating; a Retry-After is honoured up to
 * twice the scheduled delay, jittered too: deliveries a subscriber turned away together with a long
 * Retry-After must not all come back at one instant.
 */
export function atrasoDaProximaTentativa(tentativasFeitas: number, _tipo?: string, erro?: Error): number {
  const agenda = config().hub.retryScheduleMs;
  const base = agenda[Math.min(Math.max(tentativasFeitas, 1), agenda.length) - 1];
  const comJitter = Math.round(base * (0.8 + Math.random() * 0.4));
  const pedido = erro instanceof FalhaDeTentativa ? erro.retryAfterMs : undefined;
  if (pedido === undefined) return comJitter;
  return Math.min(Math.max(pedido, comJitter), 2 * comJitter);
}
