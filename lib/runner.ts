import { randomUUID } from 'node:crypto';
import { statSync } from 'node:fs';
import { AddressInfo } from 'node:net';
import path from 'node:path';
import { Worker } from 'bullmq';
import { servico, SERVICOS_DA_SUITE } from '../api';
import { Servico } from '../api/shared/servico';
import { config, ConfigError } from '../config';
import { NomeDoServico } from '../config/services';
import { appDoDashboard, conferirCredenciaisDoDashboard } from '../dashboards/bull-board';
import { AO_INICIAR_WORKER, conferirProcessadores, PROCESSADORES } from '../jobs';
import { definicaoDaFila, FILAS } from '../queues';
import { DefinicaoDeFila, emCursoNoWorker, esperarFimDoJob, eventosDaFila, fila, iniciarWorker } from '../queues/fila';
import { INTERVALO_DA_CONSOLIDACAO_MS } from '../queues/contagem';
import { filaFilesContagem } from '../queues/files-contagem';
import { filaFilesLimpeza, INTERVALO_DA_LIMPEZA_DE_ARQUIVOS_MS } from '../queues/files-limpeza';
import { filaHubContagem } from '../queues/hub-contagem';
import { filaHubRetencao, INTERVALO_DA_RETENCAO_MS, INTERVALO_DA_VARREDURA_DE_ENTREGAS_MS } from '../queues/hub-retencao';
import { filaIdentityOutbox, INTERVALO_DA_PURGA_MS, INTERVALO_DA_VARREDURA_MS } from '../queues/identity-outbox';
import { enfileirarImportacao, filaLeadsImportacao } from '../queues/leads-importacao';
import { filaSalesAnexo, INTERVALO_DA_VARREDURA_DE_ANEXOS_MS } from '../queues/sales-anexo';
import { filaSalesContagem } from '../queues/sales-contagem';
import { filaSalesTransferencia } from '../queues/sales-transferencia';
import { abrirBanco, esperarBanco, migrar } from './database';
import { escutar } from './http-server';
import { aoComecarOEncerramento, aoEncerrar } from './lifecycle';
import { logger } from './logger';
import { esperarRedis } from './redis';

/** Every process of the suite is made of these parts (DESIGN §1 commands). */

const abertos = new Map<NomeDoServico, Promise<void>>();

/** Connects a service's database, migrates it, prepares its seeds and keys and opens its queues (once per process). */
export function abrirServico(s: Servico): Promise<void> {
  let p = abertos.get(s.nome);
  if (!p) {
    p = (async () => {
      await Promise.all([esperarRedis(), esperarBanco()]);
      await abrirBanco(s.nome, s.modelos);
      await migrar(s.nome, s.migracoes, () => s.preparar());
      // the service's queues open now, Redis up: one first used while Redis is away waits for it
      // without limit, or fails for good, instead of failing fast (DESIGN §8)
      await Promise.all(FILAS.filter((f) => f.servico === s.nome).map((f) => fila(f).waitUntilReady()));
    })();
    abertos.set(s.nome, p);
    p.catch(() => abertos.delete(s.nome));
  }
  return p;
}

/** A service's database alone, migrated: a command that needs nothing else (no Redis, no queues, no seeds). */
export async function abrirBancoDoServico(s: Servico): Promise<void> {
  await esperarBanco();
  await abrirBanco(s.nome, s.modelos);
  await migrar(s.nome, s.migracoes);
}

/**
 * A service about to answer HTTP: open, its own start done, and the rate limits' Redis connection
 * up, so the first requests are counted where every process counts them.
 */
async function prepararApi(s: Servico): Promise<void> {
  await Promise.all([abrirServico(s), esperarRedis('limites')]);
  await s.aoServir?.();
}

export async function iniciarApi(nome: string, porta = config().servicos[nome as NomeDoServico]?.porta) {
  const s = servico(nome);
  await prepararApi(s);
  return escutar(s.app(), porta, s.nome, config().listenHost, s.prazoDaRequisicaoMs?.());
}

/**
 * Tests and benchmarks: the named services on free loopback ports, identity first, each service's
 * address set in config as soon as it listens (identity's is the issuer every service verifies).
 */
export async function iniciarApisEmPortasLivres(nomes: NomeDoServico[]): Promise<Record<string, string>> {
  const ordem = [...nomes].sort((a, b) => (a === 'identity' ? -1 : b === 'identity' ? 1 : 0));
  const url: Record<string, string> = {};
  for (const nome of ordem) {
    const s = servico(nome);
    await prepararApi(s);
    const server = await escutar(s.app(), 0, nome, '127.0.0.1', s.prazoDaRequisicaoMs?.());
    url[nome] = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    config().servicos[nome].url = url[nome];
  }
  return url;
}

export async function iniciarWorkers(nomes: string[]) {
  conferirProcessadores();
  // a queue named twice (`suite worker hub-entrega hub-entrega`) is one worker, not twice its concurrency
  const defs = [...new Set(nomes)].map(definicaoDaFila);
  for (const def of defs) await abrirServico(servico(def.servico));
  return defs.map((def) => {
    const worker = iniciarWorker(def, PROCESSADORES[def.nome]);
    AO_INICIAR_WORKER[def.nome]?.(worker);
    return worker;
  });
}

/** How often `import-cnpj`, while it waits, looks for a worker of the import queue. */
const VIGILANCIA_DOS_WORKERS_MS = 2000;

/** BullMQ's failure of a job whose worker stopped, where its queue allows no stall (maxStalledCount). */
const FALHA_POR_PARADA = 'job stalled more than allowable limit';

/**
 * CLIENT LIST refused by the server's ACL, or the command renamed away (BullMQ itself allows for
 * both): no workers seen, and said; any other failure stands.
 */
function semListaDeClientes(err: Error): number {
  if (!/NOPERM|unknown command ['`]?client/i.test(err.message)) throw err;
  logger('import-cnpj').warn({ erro: err.message }, 'o Redis não diz quantos workers há (CLIENT LIST recusado): o comando roda o seu');
  return 0;
}

/**
 * `suite import-cnpj <dir>`: enqueues the import and waits for it, passing its progress on. When no
 * worker serves the import queue, this process runs one, so the command works on its own too.
 * A worker elsewhere must see the same directory. Only a worker's stalled check sees that the
 * worker running a job died (its lock lapses): with no worker left, the job would stay active and
 * the command wait for ever. So while it waits it looks for a worker every
 * VIGILANCIA_DOS_WORKERS_MS and, finding none, starts its own (once; `aoAssumir` is told): a job
 * still waiting runs here, and one whose worker died fails (the queue's rule,
 * queues/leads-importacao.ts), the command saying so: about a minute after the death with the
 * default lock, once the lock has lapsed and two stalled checks have passed.
 */
export async function importarCnpjPelaFila(diretorio: string, aoProgredir: (p: unknown) => void, aoAssumir: () => void = () => undefined): Promise<unknown> {
  const dir = path.resolve(diretorio);
  if (!statSync(dir, { throwIfNoEntry: false })?.isDirectory()) throw new ConfigError(`import-cnpj: no such directory: ${dir}`);
  await abrirServico(servico('leads'));
  const q = fila(filaLeadsImportacao);
  const eventos = eventosDaFila(filaLeadsImportacao);
  await eventos.waitUntilReady();
  const idDoJob = randomUUID();
  let proprio = false;
  const assumir = () => {
    proprio = true;
    if (workerDoComando) workerDoComando.resume();
    else workerDoComando = iniciarWorkerDoComando();
  };
  const ouvir = ({ jobId, data }: { jobId: string; data: unknown }) => jobId === idDoJob && aoProgredir(data);
  eventos.on('progress', ouvir);
  let esperando = true;
  let vigia: NodeJS.Timeout | undefined;
  try {
    jobsDoComando.add(idDoJob);
    // this process's worker, paused after an earlier run of the command (tests run it more than
    // once); CLIENT LIST refused (left out of an ACL, as some managed Redis do) tells nothing, so
    // the command runs its own, which at worst shares the queue with another
    const workers = workerDoComando ? 0 : await q.getWorkersCount().catch(semListaDeClientes);
    if (workers === 0) assumir();
    await enfileirarImportacao(dir, idDoJob);
    if (!proprio) {
      vigia = setInterval(() => {
        q.getWorkersCount().then(
          (n) => {
            // none once the wait is over: the command is closing, and the worker would outlive the close
            if (n > 0 || proprio || !esperando) return;
            clearInterval(vigia);
            assumir();
            aoAssumir();
          },
          () => undefined, // Redis a moment away: the next look tells
        );
      }, VIGILANCIA_DOS_WORKERS_MS);
    }
    return await esperarFimDoJob(q, idDoJob, eventos);
  } catch (err) {
    if ((err as Error).message !== FALHA_POR_PARADA) throw err;
    throw new Error('the worker running the import stopped before it ended (killed?); running import-cnpj again is harmless (it drops the work tables this run left)');
  } finally {
    esperando = false;
    clearInterval(vigia);
    eventos.off('progress', ouvir);
    jobsDoComando.delete(idDoJob);
    if (proprio && workerDoComando) await largarAFila(workerDoComando);
  }
}

/**
 * The worker `import-cnpj` started takes nothing more, and an import it took that was not the
 * command's (another operator's, waiting when it took the queue over) runs to its end before the
 * command exits, which would cut it. Waited for by its processor, not through Redis (which may be
 * what failed); a failure here never hides the command's own outcome.
 */
async function largarAFila(worker: Worker): Promise<void> {
  try {
    await worker.pause(true);
    const { promessas, ids } = emCursoNoWorker(worker);
    if (!promessas.length) return;
    logger('import-cnpj').warn({ jobs: ids }, 'uma importação de outro comando corre neste processo: o comando espera que termine');
    await Promise.allSettled(promessas);
  } catch (err) {
    logger('import-cnpj').warn({ erro: (err as Error).message }, 'o worker do comando não parou');
  }
}

/** The import worker `import-cnpj` started in this process, if it did, and the jobs it enqueued. */
let workerDoComando: Worker | undefined;
const jobsDoComando = new Set<string>();

/**
 * The import worker of `import-cnpj`: it stops taking jobs once the command's own has ended. The
 * command ends with its job, and BullMQ hands a worker the next waiting job as it records one's end:
 * another `import-cnpj`'s, taken then, would be cut by this process's exit.
 */
function iniciarWorkerDoComando(): Worker {
  const processar = PROCESSADORES[filaLeadsImportacao.nome];
  const worker = iniciarWorker(filaLeadsImportacao, async (job, token, sinal) => {
    try {
      return await processar(job, token, sinal);
    } finally {
      // not waiting for the job under way (this one): paused now, its end fetches no other
      if (job.id && jobsDoComando.has(job.id)) await worker.pause(true);
    }
  });
  return worker;
}

/**
 * A repeatable job runs once: BullMQ would give it its queue's retries, made for the queue's other
 * jobs (an outbox event retried for days, a copy every 30 minutes), and a sweep failing through a
 * long outage would then pile up a retrying job per run. Its next run is the retry. It keeps the
 * queue's retention (a count there trims the queue's whole list of finished jobs, not its own).
 */
const DO_AGENDADOR = { attempts: 1 };

/** The suite's repeatable jobs: each queue's key and interval. */
function repetiveis(): { fila: DefinicaoDeFila; chave: string; cadaMs: number }[] {
  return [
    { fila: filaIdentityOutbox, chave: 'varrer', cadaMs: INTERVALO_DA_VARREDURA_MS },
    { fila: filaIdentityOutbox, chave: 'purgar', cadaMs: INTERVALO_DA_PURGA_MS },
    { fila: filaHubRetencao, chave: 'purgar', cadaMs: INTERVALO_DA_RETENCAO_MS },
    { fila: filaHubRetencao, chave: 'varrer', cadaMs: INTERVALO_DA_VARREDURA_DE_ENTREGAS_MS },
    { fila: filaHubContagem, chave: 'compactar', cadaMs: INTERVALO_DA_CONSOLIDACAO_MS },
    { fila: filaSalesTransferencia, chave: 'transferir', cadaMs: config().sales.transferenciaIntervaloSegundos * 1000 },
    { fila: filaSalesAnexo, chave: 'varrer', cadaMs: INTERVALO_DA_VARREDURA_DE_ANEXOS_MS },
    { fila: filaSalesContagem, chave: 'compactar', cadaMs: INTERVALO_DA_CONSOLIDACAO_MS },
    { fila: filaFilesLimpeza, chave: 'varrer', cadaMs: INTERVALO_DA_LIMPEZA_DE_ARQUIVOS_MS },
    { fila: filaFilesContagem, chave: 'compactar', cadaMs: INTERVALO_DA_CONSOLIDACAO_MS },
  ];
}

/**
 * Schedules the repeatable jobs of `filas` (every queue of the suite's services by default),
 * idempotently: a schedule unchanged keeps its next run. Only the queues a process serves, so a
 * worker of one queue never puts back another queue's interval as its own settings say.
 */
export async function agendarRepetiveis(filas: string[] = FILAS.map((f) => f.nome)): Promise<void> {
  for (const r of repetiveis()) {
    if (!SERVICOS_DA_SUITE[r.fila.servico] || !filas.includes(r.fila.nome)) continue;
    // kept in Redis beside the schedule, and lost with it: set again with it
    if (r.fila.concorrenciaGlobal) await fila(r.fila).setGlobalConcurrency(r.fila.concorrenciaGlobal);
    await fila(r.fila).upsertJobScheduler(r.chave, { every: r.cadaMs }, { name: r.chave, opts: DO_AGENDADOR });
  }
}

/**
 * Schedules the repeatable jobs of the queues this process serves, now and every `cadaMs` until
 * the shutdown; answers a function that stops it sooner. Again, because BullMQ adds a job's next
 * run when a worker takes the job, and a failure there (Redis away at that moment), Redis coming
 * back empty or the next run deleted from the dashboard ends the chain: the sweeps that recover
 * what such an accident lost would never run again until a restart.
 */
export async function manterRepetiveis(filas: string[], cadaMs = 5 * 60_000): Promise<() => Promise<void>> {
  await agendarRepetiveis(filas);
  let emCurso: Promise<void> | undefined;
  const vez = setInterval(() => {
    // one at a time: while Redis is away, the calls would pile up
    emCurso ??= agendarRepetiveis(filas)
      .catch((err) => logger('worker').warn({ erro: (err as Error).message }, 'os jobs repetitivos não puderam ser agendados de novo'))
      .finally(() => (emCurso = undefined));
  }, cadaMs);
  vez.unref();
  const parar = async () => {
    clearInterval(vez);
    await emCurso;
  };
  // stopped as the shutdown begins; a call under way is waited for before the queues close
  aoComecarOEncerramento(async () => clearInterval(vez));
  aoEncerrar('workers', 'repetiveis', parar);
  return parar;
}

export async function iniciarDashboard(porta = config().dashboard.porta) {
  conferirCredenciaisDoDashboard();
  await esperarRedis();
  return escutar(appDoDashboard(), porta, 'dashboard', config().listenHost);
}

/** `npm start`: every service built so far, every worker and the dashboard, in one process. */
/**
 * In one process every service and the dashboard listen on ports of their own: two set to the same
 * one stop the start before anything opens, naming them, instead of an EADDRINUSE once the first
 * of them already serves (apart, on hosts of their own, they may share a number).
 */
function conferirPortasDistintas(servicos: Servico[]): void {
  const porPorta = new Map<number, string[]>();
  const portas: [string, number][] = [...servicos.map((s): [string, number] => [s.nome, config().servicos[s.nome].porta]), ['dashboard', config().dashboard.porta]];
  for (const [nome, porta] of portas) porPorta.set(porta, [...(porPorta.get(porta) ?? []), nome]);
  const repetidas = [...porPorta].filter(([, nomes]) => nomes.length > 1);
  if (repetidas.length) {
    throw new ConfigError(`one port for more than one part of \`suite start\`: ${repetidas.map(([porta, nomes]) => `${nomes.join(' and ')} on ${porta}`).join('; ')}`);
  }
}

export async function iniciarTudo(): Promise<void> {
  conferirCredenciaisDoDashboard();
  const servicos = Object.values(SERVICOS_DA_SUITE);
  conferirPortasDistintas(servicos);
  for (const s of servicos) await abrirServico(s);
  const filas = FILAS.filter((f) => SERVICOS_DA_SUITE[f.servico]).map((f) => f.nome);
  await iniciarWorkers(filas);
  await manterRepetiveis(filas);
  for (const s of servicos) await iniciarApi(s.nome);
  await iniciarDashboard();
}

/** `suite migrate`: as a start, it waits for a server still coming up (a deploy job beside it). */
export async function migrarTudo(): Promise<void> {
  for (const s of Object.values(SERVICOS_DA_SUITE)) await abrirBancoDoServico(s);
}
