import type { EventEmitter } from 'node:events';
import { createHmac } from 'node:crypto';
import { DelayedError, Job, JobsOptions, Processor, Queue, QueueEvents, Worker, WorkerOptions } from 'bullmq';
import { config } from '../config';
import { NomeDoServico } from '../config/services';
import { CacheComPrazo } from '../lib/cache';
import { Cifra } from '../lib/cifra';
import { banco } from '../lib/database';
import { aoComecarOEncerramento, aoEncerrar, dentroDe, tempoRestanteDoEncerramento } from '../lib/lifecycle';
import { logger, umaVezPorMinuto, umaVezPorMinutoPorChave } from '../lib/logger';
import { segredoGerado } from '../lib/segredo-local';
import { novaConexaoRedis, redis } from '../lib/redis';

/** A queue's definition: its name (never renamed casually), owner service and options. */
export interface DefinicaoDeFila {
  nome: string;
  servico: NomeDoServico;
  descricao: string;
  opcoesDosJobs: JobsOptions;
  opcoesDoWorker?: Omit<WorkerOptions, 'connection' | 'prefix'>;
  /** jobs running at once across every worker process (BullMQ's global concurrency), set with its schedule */
  concorrenciaGlobal?: number;
}

/**
 * Every job keeps the stacks of its last failures only: BullMQ keeps one per failed attempt and
 * rewrites them all at each, and the identity outbox retries for as long as the hub refuses (every
 * 5 minutes, for days), which filled a `noeviction` Redis.
 */
export const PILHAS_POR_JOB = 5;

/** The job options a queue's jobs get unless an add says otherwise: the queue's own, over the suite's. */
export const opcoesDosJobsDe = (def: DefinicaoDeFila): JobsOptions => ({ stackTraceLimit: PILHAS_POR_JOB, ...def.opcoesDosJobs });

/**
 * While Redis is away each connection fails at every reconnection (every 2 s), and each queue,
 * queue-events and worker on it says so: the same error is logged once a minute per process, with
 * how many times it was not (about 60 lines every 5 s in `suite start` otherwise).
 */
const avisarErroDeFila = umaVezPorMinutoPorChave(
  (calados: number, componente: 'filas' | 'worker', nivel: 'warn' | 'error', fila: string, err: Error, mensagem: string) =>
    logger(componente)[nivel]({ err, fila, ...(calados ? { repetidos_sem_registro: calados } : {}) }, mensagem),
);
const errosDe = (componente: 'filas' | 'worker', nivel: 'warn' | 'error', fila: string, mensagem: string) => (err: Error) =>
  avisarErroDeFila(`${mensagem}\n${err.message}`, componente, nivel, fila, err, mensagem);

const filas = new Map<string, Queue>();
const eventos = new Map<string, QueueEvents>();

/**
 * The producer side of a queue (fail-fast connection), opened once per process. `conexao`
 * 'painel': the dashboard's, whose bulk actions (clean a queue, retry every failed job) may take
 * Redis longer than a producer's command deadline (lib/redis.ts).
 */
export function fila(def: DefinicaoDeFila, conexao: 'produtor' | 'painel' = 'produtor'): Queue {
  const chave = `${conexao}:${def.nome}`;
  let q = filas.get(chave);
  if (!q) {
    q = new Queue(def.nome, { connection: redis(conexao), prefix: config().queuePrefix, defaultJobOptions: opcoesDosJobsDe(def) });
    q.on('error', errosDe('filas', 'warn', def.nome, 'erro na fila'));
    filas.set(chave, q);
    const aberta = q;
    aoEncerrar('filas', `fila:${chave}`, async () => {
      filas.delete(chave);
      await aberta.close();
    });
  }
  return q;
}

/** The fields of the jobs' reports that say how far a job got: done, of. */
const FEITO_DE = [
  ['feitas', 'de'],
  ['apagados', 'de'],
  ['vistas', 'de'],
  ['bytes', 'total'],
] as const;

/** How far a report says its job got, 0 to 100, when it says so (`percentual`, or done of a total). */
function percentualDoRelatorio(relatorio: object): number | undefined {
  const r = relatorio as Record<string, unknown>;
  if (typeof r.percentual === 'number') return r.percentual;
  for (const [feito, de] of FEITO_DE) {
    const [a, b] = [r[feito], r[de]];
    if (typeof a === 'number' && typeof b === 'number' && b > 0) return Math.min(100, Math.floor((a / b) * 100));
  }
  return undefined;
}

/**
 * A long job's progress callback: each report becomes the job's progress on the dashboard, with
 * `progress` (0 to 100), which Bull Board draws on the job's card, when the report tells it. A
 * report that cannot be written (Redis a moment out of reach) is let go: the next one replaces it.
 */
export const progressoNoPainel =
  (job: Job) =>
  (progresso: object): void => {
    const percentual = percentualDoRelatorio(progresso);
    void job.updateProgress({ ...progresso, ...(percentual === undefined ? {} : { progress: percentual }) }).catch(() => undefined);
  };

/**
 * progressoNoPainel at most once per `intervaloMs`, for jobs that are most often short and
 * numerous (a batch of deliveries): one done within the interval writes nothing more to Redis, and
 * one held up (slow subscribers) still shows how far it got.
 */
export function progressoEspacado(job: Job, intervaloMs = 1000): (progresso: object) => void {
  const reportar = progressoNoPainel(job);
  let ultimo = Date.now();
  return (progresso) => {
    const agora = Date.now();
    if (agora - ultimo < intervaloMs) return;
    ultimo = agora;
    reportar(progresso);
  };
}

/** A job stopped by shutdown is taken up again this soon (by another worker, as a rule). */
const RETOMADA_MS = 1000;

/**
 * A job stopped by shutdown (or that must wait until `em`) goes back to the queue without counting
 * as a failed attempt (BullMQ's manual delay): its processor returns this, with the worker's token.
 */
export async function devolverAFila(job: Job, token?: string, em = Date.now() + RETOMADA_MS): Promise<never> {
  await job.moveToDelayed(em, token);
  throw new DelayedError();
}

/** A job whose id is the record it works on (a stored event, an attachment). */
export interface JobDoRegistro {
  name: string;
  data: object;
  opts: { jobId: string };
}

/**
 * A sweep's add of records whose work is still undone. BullMQ ignores an add while a job of that
 * id exists, and a finished one is kept for a while (a job failed after stalling twice, by
 * crashes or by shutdowns that left it behind, is kept a week): the sweep would then add nothing
 * for as long. Finished jobs of those ids are removed first; waiting, delayed and active ones
 * are left to run. `promoverAdiados` (work asked for now, not a sweep): the delayed ones, a retry
 * of BullMQ's due later, are promoted to run now, read in the same pass over the jobs' states.
 */
export async function reenfileirar(def: DefinicaoDeFila, jobs: JobDoRegistro[], opcoes: { promoverAdiados?: boolean } = {}): Promise<void> {
  if (!jobs.length) return;
  const q = fila(def);
  const estados = await Promise.all(jobs.map((j) => q.getJobState(j.opts.jobId)));
  const terminados = jobs.filter((_, i) => estados[i] === 'failed' || estados[i] === 'completed');
  // one that started again meanwhile cannot be removed (it is locked): it runs, nothing lost
  await Promise.all(terminados.map((j) => q.remove(j.opts.jobId).catch(() => 0)));
  await q.addBulk(jobs);
  if (!opcoes.promoverAdiados) return;
  const adiados = await Promise.all(jobs.filter((_, i) => estados[i] === 'delayed').map((j) => q.getJob(j.opts.jobId)));
  // one that started meanwhile cannot be promoted: it runs, which is what was asked
  await Promise.all(adiados.map((j) => j?.promote().catch(() => undefined)));
}

/** Completion events of a queue, for routes that wait on a job a bounded time. */
export function eventosDaFila(def: DefinicaoDeFila): QueueEvents {
  let e = eventos.get(def.nome);
  if (!e) {
    // BullMQ reads the events on a copy of the connection it is given (a blocking read must not
    // hold a shared one): the one given never connects, only its copy does
    e = new QueueEvents(def.nome, { connection: novaConexaoRedis('worker', `eventos:${def.nome}`, true), prefix: config().queuePrefix });
    // every request waiting on a job listens here for a moment: many at once is normal
    e.setMaxListeners(1000);
    e.on('error', errosDe('filas', 'warn', def.nome, 'erro nos eventos da fila'));
    eventos.set(def.nome, e);
    const abertos = e;
    aoEncerrar('filas', `eventos:${def.nome}`, async () => {
      eventos.delete(def.nome);
      // bounded: a connection closed while it reconnects (after a Redis outage) never settles the
      // blocking read BullMQ's close waits for (ioredis), and the shutdown waited for it forever
      // (its connection was told to disconnect first, so nothing is left reconnecting: only that read's promise waits)
      if (!(await dentroDe(abertos.close(), 1000))) logger('filas').warn({ fila: def.nome }, 'os eventos da fila não fecharam a tempo');
    });
  }
  return e;
}

/**
 * How often a wait reads its job's state besides hearing its events: an end heard by no one (a
 * QueueEvents just made reads its stream only a moment after it says it is ready) is read there.
 */
export const REVISAO_DO_ESTADO = { ms: 5000 };

/**
 * Waits for job `id` of `q` to end, as BullMQ's Job.waitUntilFinished: its return value, or its
 * failure as an Error with the job's reason (also a job gone before its end was read, and the
 * `prazoMs` passing). BullMQ's own reads the job's state inside an async Promise executor, so a
 * Redis error there (a stall past the command deadline) escaped as an unhandled rejection, which
 * ends the process (lib/lifecycle.ts), and left its caller waiting out the whole time.
 */
export function esperarFimDoJob(q: Queue, id: string, eventos: QueueEvents, prazoMs?: number): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const concluido = ({ returnvalue }: { returnvalue: unknown }) => (soltar(), resolve(returnvalue));
    const falhou = ({ failedReason }: { failedReason: string }) => (soltar(), reject(new Error(failedReason)));
    const prazo = prazoMs ? setTimeout(() => falhou({ failedReason: `job ${id} sem fim em ${prazoMs} ms` }), prazoMs) : undefined;
    // QueueEvents also emits each job's end under its id, as BullMQ's own wait hears it (untyped)
    const porJob = eventos as unknown as EventEmitter;
    let largar: (() => void) | undefined;
    let revisao: NodeJS.Timeout | undefined;
    const soltar = () => {
      clearTimeout(prazo);
      clearInterval(revisao);
      largar?.();
      porJob.off(`completed:${id}`, concluido);
      porJob.off(`failed:${id}`, falhou);
    };
    porJob.on(`completed:${id}`, concluido);
    porJob.on(`failed:${id}`, falhou);
    // a bounded wait (a route's) on a queue this process works ends as its shutdown begins: its
    // workers pause then, and the drain would hold the request for its whole time only to answer
    // as if it had passed. Workers elsewhere (an API process alone) go on, and so does the wait
    if (prazoMs && filasComWorkerAqui.has(q.name)) {
      largar = aoComecarOEncerramento(async () => falhou({ failedReason: 'encerramento do processo' }));
    }
    // it may have ended before the listeners: asked once they hear (an ended job changes no more),
    // and again now and then
    const conferir = async () => {
      const estado = await q.getJobState(id);
      if (estado !== 'completed' && estado !== 'failed' && estado !== 'unknown') return;
      const job = estado === 'unknown' ? undefined : await Job.fromId(q, id);
      if (!job) falhou({ failedReason: `job ${id} removido antes de seu fim ser lido` });
      else if (estado === 'completed') concluido({ returnvalue: job.returnvalue });
      else falhou({ failedReason: job.failedReason });
    };
    void eventos
      .waitUntilReady()
      .then(conferir)
      .catch((err: Error) => falhou({ failedReason: err.message }));
    // a later read that fails (Redis a moment away) fails nothing: the events, or the next read, tell
    revisao = setInterval(() => void conferir().catch(() => undefined), REVISAO_DO_ESTADO.ms).unref();
  });
}

/** The queues whose workers were counted here in the last minute (CLIENT LIST is no free call). */
const workersContados = new CacheComPrazo<string, true>(() => 60_000);

/**
 * After a wait for a job of `def` ran out or failed: when no process serves the queue at all (APIs
 * run apart without `suite worker <queue>`), that is the likely cause, and the log says so. Looked
 * at once a minute at most, so a lasting state is said once a minute. A Redis that refuses CLIENT
 * LIST tells nothing, and nothing is said.
 */
export async function avisarSeNenhumWorker(def: DefinicaoDeFila): Promise<void> {
  if (workersContados.obter(def.nome)) return;
  workersContados.guardar(def.nome, true);
  const workers = await fila(def)
    .getWorkersCount()
    .catch(() => -1);
  if (workers === 0) logger('filas').error({ fila: def.nome }, `nenhum processo atende a fila ${def.nome}: inicie \`suite worker ${def.nome}\``);
}

/**
 * The callers' tokens a queue's next job acts with (masters', for the syncs with identity), kept
 * out of the job's data, which the dashboard shows to whoever opens it: in a Redis sorted set of
 * the queue, each scored by when it lapses (as long as a job may take to start). Concurrent
 * callers share the job, which tries the newest token first (comTokenDaFila). Each is sealed
 * (AES-256-GCM) under a key kept in the service's own database (lacreDosTokens): whoever reads
 * Redis (a replica, a backup of its files, a suite sharing it) finds no master's token to use at
 * identity.
 */
export const tokenDaFila = {
  async guardar(def: DefinicaoDeFila, token: string, segundos = 120): Promise<void> {
    const chave = chaveDoToken(def);
    const selado = selar(await lacreDosTokens(def.servico), token);
    const agora = Date.now();
    await redis('produtor')
      .multi()
      .zadd(chave, agora + segundos * 1000, selado)
      .zremrangebyscore(chave, '-inf', agora)
      // the newest few: many callers within two minutes need no more to fall back on
      .zremrangebyrank(chave, 0, -(TOKENS_GUARDADOS + 1))
      .pexpire(chave, segundos * 1000)
      .exec();
  },
  /**
   * The tokens not yet lapsed, newest first, each with its stored form (to drop it by); one that
   * does not open under the key (stored in clear by an earlier version, or under another key) is
   * dropped.
   */
  async ler(def: DefinicaoDeFila): Promise<{ token: string; guardado: string }[]> {
    const lacre = await lacreDosTokens(def.servico);
    const lidos: { token: string; guardado: string }[] = [];
    for (const guardado of await redis('produtor').zrevrangebyscore(chaveDoToken(def), '+inf', Date.now())) {
      try {
        lidos.push({ token: lacre.decifrar(guardado), guardado });
      } catch {
        avisarTokenDescartado(def.nome);
        await tokenDaFila.descartar(def, guardado);
      }
    }
    return lidos;
  },
  descartar: (def: DefinicaoDeFila, guardado: string) => redis('produtor').zrem(chaveDoToken(def), guardado),
};

const NOME_DO_LACRE = 'tokens-dos-chamadores';
const lacres = new CacheComPrazo<NomeDoServico, Promise<Cifra>>(() => Infinity);

/**
 * The key that seals a service's stored tokens: made by the first process that needs it and kept in
 * its database (`segredo_do_acesso`), where every process of the service finds the same one. A
 * failure (the database away) is not kept: the next call asks again.
 */
function lacreDosTokens(servico: NomeDoServico): Promise<Cifra> {
  return lacres.compartilhar(servico, async () => new Cifra(await segredoGerado(banco(servico), 'segredo_do_acesso', NOME_DO_LACRE)));
}

/**
 * A token sealed always the same way (its IV derived from it under the key): stored again, it is the
 * same member of the set, which only moves its lapse; with a random IV each listing of one master
 * added a copy, and ten of them pushed every other master's token out.
 */
function selar(lacre: Cifra, token: string): string {
  return lacre.cifrar(token, createHmac('sha256', lacre.derivar('iv-dos-tokens')).update(token).digest().subarray(0, 12));
}

const avisarTokenDescartado = umaVezPorMinuto((fila: string) =>
  logger('filas').warn({ fila }, 'token guardado que não abre com a chave do serviço descartado (de uma versão anterior, ou de outra chave)'),
);

// outside the queue's own keys (`<prefix>:<queue>:<job id>`), where a job named `token` would be;
// named apart from the single string of earlier versions, which processes of both kinds would
// otherwise read with the wrong type during a rolling upgrade
export const chaveDoToken = (def: DefinicaoDeFila) => `${config().queuePrefix}:tokens-dos-chamadores:${def.nome}`;
const TOKENS_GUARDADOS = 10;

/**
 * Identity refused (401, 403) a caller's token a job acted with: `statusDoIdentity` says what
 * identity answered, which is no fault of whoever the service is answering.
 */
export class TokenRecusado extends Error {
  constructor(
    readonly statusDoIdentity: 401 | 403,
    mensagem: string,
  ) {
    super(mensagem);
  }
}

/**
 * Runs `agir` with the queue's stored tokens, newest first, until one is not refused; null when
 * none is left. A token outlives its holder's removal or demotion (other services still take its
 * `master` claim, identity does not): a refused one is dropped and the one before it tried, so a
 * stale master's listing cannot spoil the sync a real master asked for, nor the next ones.
 */
export async function comTokenDaFila<T>(def: DefinicaoDeFila, agir: (token: string) => Promise<T>): Promise<{ resultado: T } | null> {
  for (const { token, guardado } of await tokenDaFila.ler(def)) {
    try {
      return { resultado: await agir(token) };
    } catch (err) {
      if (!(err instanceof TokenRecusado)) throw err;
      await tokenDaFila.descartar(def, guardado);
    }
  }
  return null;
}

/**
 * A failure that is an outcome, not a fault (a subscriber refusing a delivery): its job's log line
 * carries the message alone, where any other carries its stack. A subscriber down fails every
 * attempt, and a stack per attempt would only fill the logs; nor does the job keep one (it keeps
 * the message where BullMQ keeps stacks): a subscriber down holds each of its deliveries in Redis
 * as a delayed job for hours or days, and stacks were most of each job's size.
 */
export class FalhaEsperada extends Error {
  constructor(message: string) {
    super(message);
    this.stack = message;
  }
}

/** Each worker's jobs under way (their run, and the job's id), so that shutdown can wait for them a bounded time. */
const jobsEmCurso = new WeakMap<Worker, Map<Promise<unknown>, string | undefined>>();

/** The jobs `worker` (started by iniciarWorker) is running now: their processors' promises and ids. */
export const emCursoNoWorker = (worker: Worker): { promessas: Promise<unknown>[]; ids: (string | undefined)[] } => {
  const emCurso = jobsEmCurso.get(worker) ?? new Map<Promise<unknown>, string | undefined>();
  return { promessas: [...emCurso.keys()], ids: [...emCurso.values()] };
};

/** The queues this process runs a worker of. */
const filasComWorkerAqui = new Set<string>();

/** Starts a worker; on shutdown it lets its current jobs end, within bounds (fecharWorker). */
export function iniciarWorker(def: DefinicaoDeFila, processador: Processor): Worker {
  filasComWorkerAqui.add(def.nome);
  const emCurso = new Map<Promise<unknown>, string | undefined>();
  const acompanhado: Processor = (job, token, sinal) => {
    const p = processador(job, token, sinal);
    emCurso.set(p, job.id);
    const fim = () => emCurso.delete(p);
    p.then(fim, fim);
    return p;
  };
  const worker = new Worker(def.nome, acompanhado, {
    concurrency: 1,
    ...def.opcoesDoWorker,
    connection: novaConexaoRedis('worker', `worker:${def.nome}`),
    prefix: config().queuePrefix,
  });
  const log = logger('worker').child({ fila: def.nome });
  worker.on('failed', (job, err) =>
    log.warn({ job_id: job?.id, job: job?.name, tentativas: job?.attemptsMade, ...(err instanceof FalhaEsperada ? { erro: err.message } : { err }) }, 'job falhou'),
  );
  worker.on('error', errosDe('worker', 'error', def.nome, 'erro no worker'));
  jobsEmCurso.set(worker, emCurso);
  // no new job from the signal on, while the HTTP servers still drain (their stage comes first)
  worker.once('closed', aoComecarOEncerramento(() => worker.pause(true)));
  aoEncerrar('workers', `worker:${def.nome}`, () => fecharWorker(worker, log));
  return worker;
}

/**
 * Shutdown of a worker within what is left of the grace period (lib/lifecycle.ts): it takes no new
 * job, and its jobs under way get half that time to end; then they are asked to stop (the abort
 * signal BullMQ hands processors: the CNPJ import cuts its loads and fails) and get a quarter
 * more. One still running after that is left behind as the worker closes: its lock lapses and
 * BullMQ's stalled check hands it to another worker (or fails it, where the queue allows no stall).
 * A job the worker was already fetching when paused may still start: the waits follow the jobs
 * under way as they are at each moment, so it is waited for, and asked to stop, like the others.
 */
export async function fecharWorker(worker: Worker, log = logger('worker')): Promise<void> {
  const prazo = Math.max(1000, tempoRestanteDoEncerramento());
  const emCurso = jobsEmCurso.get(worker) ?? new Map<Promise<unknown>, string | undefined>();
  // no new job from here on (not waiting for the active ones: that is below, bounded)
  await dentroDe(worker.pause(true), prazo / 4);
  /** Whether every job under way, those starting meanwhile included, ends within `ms`. */
  const terminamEm = async (ms: number) => {
    const fim = Date.now() + ms;
    while (emCurso.size) {
      const resta = fim - Date.now();
      if (resta <= 0 || !(await dentroDe(Promise.allSettled([...emCurso.keys()]), resta))) return false;
    }
    return true;
  };
  let terminaram = await terminamEm(prazo / 2);
  if (!terminaram) {
    log.warn({ jobs: [...emCurso.values()] }, 'jobs ainda em curso no encerramento: pedindo que parem');
    worker.cancelAllJobs('encerramento do processo');
    terminaram = await terminamEm(prazo / 4);
  }
  // their ids, to find them on the dashboard: their locks lapse and another worker takes them up
  if (!terminaram) log.warn({ jobs: [...emCurso.values()] }, 'jobs não pararam: o worker fecha sem eles');
  // a plain close also waits for BullMQ to record the jobs' ends; bounded, should Redis be gone
  if (terminaram && (await dentroDe(worker.close(), prazo / 4))) return;
  if (terminaram) log.warn('o worker não fechou a tempo (Redis fora do alcance?)');
  else await dentroDe(worker.close(true), prazo / 4);
}
