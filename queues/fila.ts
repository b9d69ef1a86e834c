import { JobsOptions, Processor, Queue, QueueEvents, Worker, WorkerOptions } from 'bullmq';
import { config } from '../config';
import { NomeDoServico } from '../config/services';
import { aoEncerrar } from '../lib/lifecycle';
import { logger } from '../lib/logger';
import { novaConexaoRedis, redis } from '../lib/redis';

/** A queue's definition: its name (never renamed casually), owner service and options. */
export interface DefinicaoDeFila {
  nome: string;
  servico: NomeDoServico;
  descricao: string;
  opcoesDosJobs: JobsOptions;
  opcoesDoWorker?: Omit<WorkerOptions, 'connection' | 'prefix'>;
}

const filas = new Map<string, Queue>();
const eventos = new Map<string, QueueEvents>();

/** The producer side of a queue (fail-fast connection), opened once per process. */
export function fila(def: DefinicaoDeFila): Queue {
  let q = filas.get(def.nome);
  if (!q) {
    q = new Queue(def.nome, { connection: redis('produtor'), prefix: config().queuePrefix, defaultJobOptions: def.opcoesDosJobs });
    q.on('error', (err) => logger('filas').warn({ err, fila: def.nome }, 'erro na fila'));
    filas.set(def.nome, q);
    const aberta = q;
    aoEncerrar('filas', `fila:${def.nome}`, async () => {
      filas.delete(def.nome);
      await aberta.close();
    });
  }
  return q;
}

/** Completion events of a queue, for routes that wait on a job a bounded time. */
export function eventosDaFila(def: DefinicaoDeFila): QueueEvents {
  let e = eventos.get(def.nome);
  if (!e) {
    e = new QueueEvents(def.nome, { connection: novaConexaoRedis('worker', `eventos:${def.nome}`), prefix: config().queuePrefix });
    // every request waiting on a job listens here for a moment: many at once is normal
    e.setMaxListeners(1000);
    e.on('error', (err) => logger('filas').warn({ err, fila: def.nome }, 'erro nos eventos da fila'));
    eventos.set(def.nome, e);
    const abertos = e;
    aoEncerrar('filas', `eventos:${def.nome}`, async () => {
      eventos.delete(def.nome);
      await abertos.close();
    });
  }
  return e;
}

/** Starts a worker; on shutdown it finishes its current jobs (or hands them back) before closing. */
export function iniciarWorker(def: DefinicaoDeFila, processador: Processor): Worker {
  const worker = new Worker(def.nome, processador, {
    concurrency: 1,
    ...def.opcoesDoWorker,
    connection: novaConexaoRedis('worker', `worker:${def.nome}`),
    prefix: config().queuePrefix,
  });
  const log = logger('worker').child({ fila: def.nome });
  worker.on('failed', (job, err) => log.warn({ job_id: job?.id, tentativas: job?.attemptsMade, err: err.message }, 'job falhou'));
  worker.on('error', (err) => log.error({ err }, 'erro no worker'));
  aoEncerrar('workers', `worker:${def.nome}`, () => worker.close());
  return worker;
}
