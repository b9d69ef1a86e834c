import { config } from '../config';
import { logger } from './logger';

type Closer = { nome: string; fechar: () => Promise<unknown> };

/**
 * What the process has opened, closed in the order of STYLE §7: HTTP servers first, then workers,
 * queues, databases and Redis. Each part registers itself in its stage when it opens.
 */
const ESTAGIOS = ['http', 'workers', 'filas', 'bancos', 'redis'] as const;
export type Estagio = (typeof ESTAGIOS)[number];

const abertos: Record<Estagio, Closer[]> = { http: [], workers: [], filas: [], bancos: [], redis: [] };
let encerrando: Promise<void> | undefined;
/** When the grace period of the shutdown under way ends (SHUTDOWN_GRACE_MS after it began). */
let fimDoPrazo: number | undefined;

/**
 * What is left of the shutdown's grace period, for a stage that waits (the whole period outside a
 * shutdown): every stage counts from the signal, so together they fit in the period.
 */
export function tempoRestanteDoEncerramento(): number {
  return fimDoPrazo === undefined ? config().shutdownGraceMs : Math.max(0, fimDoPrazo - Date.now());
}

/** Whether `p` settles (resolved or rejected) within `ms`: the bounded waits of a shutdown. */
export async function dentroDe(p: Promise<unknown>, ms: number): Promise<boolean> {
  let prazo: NodeJS.Timeout | undefined;
  const esgotado = new Promise<false>((resolve) => (prazo = setTimeout(() => resolve(false), ms)));
  try {
    return await Promise.race([p.then(() => true, () => true), esgotado]);
  } finally {
    clearTimeout(prazo);
  }
}

/** How many stages the shutdown under way has reached (0 when none is under way). */
let estagiosAlcancados = 0;

/** The parts whose close is under way: the forced exit names those that held it. */
const fechandoAgora = new Set<string>();

async function fecharLogando(c: Closer): Promise<void> {
  fechandoAgora.add(c.nome);
  try {
    await c.fechar();
  } catch (err) {
    logger('lifecycle').warn({ err, parte: c.nome }, 'erro ao fechar');
  } finally {
    fechandoAgora.delete(c.nome);
  }
}

/** Closes of parts opened after their stage, started at once: the later stages wait for them. */
const fechamentosForaDeHora = new Set<Promise<void>>();

/** Until none is under way, those begun meanwhile included. */
async function fechamentosForaDeHoraConcluidos(): Promise<void> {
  while (fechamentosForaDeHora.size) await Promise.all([...fechamentosForaDeHora]);
}

/**
 * Registers a part to close in its stage. One opened after the shutdown under way has reached its
 * stage (a start still going on when SIGTERM came) is closed at once: left on the list, it would
 * never be, and a worker would go on taking jobs against closed databases until the exit.
 */
export function aoEncerrar(estagio: Estagio, nome: string, fechar: () => Promise<unknown>): void {
  if (ESTAGIOS.indexOf(estagio) < estagiosAlcancados) {
    const fechamento: Promise<void> = fecharLogando({ nome, fechar }).finally(() => fechamentosForaDeHora.delete(fechamento));
    fechamentosForaDeHora.add(fechamento);
  } else abertos[estagio].push({ nome, fechar });
}

/** Called at once when a shutdown begins, beside the HTTP stage (workers stop taking jobs). */
const noInicio: (() => Promise<unknown>)[] = [];

/**
 * Runs what a shutdown's start asks for at once (a worker paused before its next fetch), not
 * waited for; a failure, even a throw at once, is logged.
 */
function comecar(agir: () => Promise<unknown>): void {
  const avisar = (err: unknown) => logger('lifecycle').warn({ err }, 'erro ao começar o encerramento');
  try {
    agir().catch(avisar);
  } catch (err) {
    avisar(err);
  }
}

/**
 * Answers a function that takes `agir` off the list (a worker closed before any shutdown). Given
 * once a shutdown is under way, `agir` runs at once.
 */
export function aoComecarOEncerramento(agir: () => Promise<unknown>): () => void {
  if (encerrando) {
    comecar(agir);
    return () => undefined;
  }
  noInicio.push(agir);
  return () => {
    const i = noInicio.indexOf(agir);
    if (i >= 0) noInicio.splice(i, 1);
  };
}

/** Work a request left running after its answer (emSegundoPlano). */
const emSegundoPlanoAgora = new Set<Promise<unknown>>();

/**
 * Work a request leaves running once it has answered (a replay's jobs, queued page by page):
 * shutdown waits for it, within its grace period, before closing the queues and databases it uses.
 * Its failure is its own to log.
 */
export function emSegundoPlano(trabalho: Promise<unknown>): void {
  const p: Promise<unknown> = trabalho.catch(() => undefined).finally(() => emSegundoPlanoAgora.delete(p));
  emSegundoPlanoAgora.add(p);
}

/** Whether a shutdown has begun: long work (migrations one after another) starts nothing more. */
export const encerramentoComecou = (): boolean => encerrando !== undefined;

/** Whether SIGTERM or SIGINT began the close under way (not a failure, nor a command's own end). */
export const encerramentoPorSinal = (): boolean => fechandoPorSinalDesde !== undefined;

/**
 * Closes everything once; later calls wait for the first. Async, so a setting in error (its grace
 * period) rejects the promise instead of throwing where a caller only catches rejections.
 */
export async function encerrar(): Promise<void> {
  if (!encerrando) {
    fimDoPrazo = Date.now() + config().shutdownGraceMs;
    encerrando = (async () => {
      // not waited for here: each stage that depends on it waits for its own part (fecharWorker)
      for (const agir of noInicio.splice(0)) comecar(agir);
      for (const [i, estagio] of ESTAGIOS.entries()) {
        if (estagio === 'filas') await dentroDe(Promise.all(emSegundoPlanoAgora), tempoRestanteDoEncerramento());
        await fechamentosForaDeHoraConcluidos();
        estagiosAlcancados = i + 1;
        await Promise.all(abertos[estagio].splice(0).reverse().map(fecharLogando));
      }
      await fechamentosForaDeHoraConcluidos();
    })().finally(() => {
      encerrando = undefined;
      fimDoPrazo = undefined;
      estagiosAlcancados = 0;
    });
  }
  return encerrando;
}

/**
 * Closes in order and exits with the code the process has set (0 unless a command said otherwise:
 * an import stopped midway has not succeeded; 1 after a failure nothing handled); a forced exit
 * after the grace period. Once: a failure or a signal meanwhile starts no other close.
 */
function encerrarESair(sinal = false): void {
  if (saindo) return;
  saindo = true;
  fechandoPorSinalDesde = sinal ? performance.now() : undefined;
  const forcar = setTimeout(() => {
    logger('lifecycle').error({ fechando: [...fechandoAgora] }, 'encerramento passou do prazo: saída forçada');
    process.exit(1);
  }, config().shutdownGraceMs + 5000);
  forcar.unref();
  encerrar().then(
    () => process.exit(process.exitCode ?? 0),
    () => process.exit(1),
  );
}
let saindo = false;
/** when a signal began the close (undefined: a failure began it, or none) */
let fechandoPorSinalDesde: number | undefined;

/**
 * SIGTERM/SIGINT close the process in order (encerrarESair). So does a rejection or an exception
 * nothing handled, logged first (`fatal`, with its stack), exiting 1: Node would print a bare stack
 * and die with its connections and jobs open. Failures during the close are logged too. A Ctrl-C
 * reaches both `npm start` and the process npm passes it on to: a signal again within a second
 * of the close's start is that one, and changes nothing; one later, during a close a signal
 * began, is someone who will not wait, and ends the process at once (exit 1).
 */
export function encerrarNoSinal(): void {
  const aoSinal = (sinal: string) => {
    if (saindo) {
      // a close a failure began goes on: a supervisor's signal then is no one losing patience
      if (fechandoPorSinalDesde === undefined || performance.now() - fechandoPorSinalDesde < 1000) return;
      logger('lifecycle').warn({ sinal }, 'sinal de novo durante o encerramento: saída imediata');
      process.exit(1);
    }
    logger('lifecycle').info({ sinal }, 'encerrando');
    encerrarESair(true);
  };
  const aoFalhar = (tipo: string) => (err: unknown) => {
    logger('lifecycle').fatal({ err }, tipo);
    // 1 however the process ends: this close, one already under way, or the loop running empty
    process.exitCode = 1;
    encerrarESair();
  };
  process.on('SIGTERM', () => aoSinal('SIGTERM'));
  process.on('SIGINT', () => aoSinal('SIGINT'));
  process.on('unhandledRejection', aoFalhar('rejeição não tratada'));
  process.on('uncaughtException', aoFalhar('exceção não tratada'));
}
