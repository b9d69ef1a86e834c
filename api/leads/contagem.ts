import { CacheComPrazo, CargasEmCurso } from '../../lib/cache';
import { banco, ehMariaDb, lerDemorado, tempoEsgotado } from '../../lib/database';
import { logger, umaVezPorMinuto, umaVezPorMinutoPorChave } from '../../lib/logger';
import { redis } from '../../lib/redis';
import { ErroDeDominio } from '../shared/errors';
import { esperarFimDoJob, eventosDaFila, fila } from '../../queues/fila';
import { filaLeadsContagem } from '../../queues/leads-contagem';
import { condicoesComNome } from './busca-por-nome';
import { chaveDosFiltros, esquemaDosFiltros, FiltrosDeEmpresas } from './filtros';
import { chaveNaGeracao, geracaoNoBanco } from './geracao';

/** SPEC 4.2 rule 4: the count stops past this and says it is an estimate. */
export const TETO_DA_CONTAGEM = 2_000_000;
/** ... and so it does when the database takes longer than this to count. */
export const PRAZO_DA_CONTAGEM_S = 6;
/** How long a listing waits for the count job before answering the estimate (queue wait included). */
const ESPERA_DA_CONTAGEM_MS = (PRAZO_DA_CONTAGEM_S + 2) * 1000;
/**
 * Exact counts, and counts past the cap, hold until the next import (the key names the data's
 * generation); an estimate from a count the time limit cut is retried sooner (the database may
 * only have been busy).
 */
const VALIDADE_DO_CACHE_S = 24 * 60 * 60;
const VALIDADE_DA_ESTIMATIVA_S = 10 * 60;

export interface Contagem {
  total: number;
  estimado: boolean;
}

const ESTIMATIVA: Contagem = { total: TETO_DA_CONTAGEM, estimado: true };
/** A count past the cap is the cap, and an estimate (SPEC 4.2 rule 4). */
const ateOTeto = (n: number, teto: number): Contagem => (n > teto ? { total: teto, estimado: true } : { total: n, estimado: false });
const log = logger('leads-contagem');

/**
 * The count itself: stops at the cap + 1 row and under a time limit enforced by the database, so a
 * filter that matches most of the registry costs at most 6 seconds. Past the cap, the total is the
 * cap and an estimate (`teto` is SPEC's 2,000,000; tests pass a small one). `geracao`: the data's
 * generation a name's list is read for (busca-por-nome.ts). `cortada`: the time limit ended it.
 */
export async function contarEmpresas(filtros: FiltrosDeEmpresas, teto = TETO_DA_CONTAGEM, geracao?: string): Promise<{ contagem: Contagem; cortada: boolean }> {
  const { onde, parametros } = await condicoesComNome(filtros, geracao);
  const linhas = teto + 1;
  // MariaDB stops the scan at ROWNUM(); MySQL needs a derived table with LIMIT, which MariaDB
  // would fill row by row before counting (60% slower on a count of a few hundred thousand).
  const select = (await ehMariaDb(banco('leads')))
    ? `SELECT COUNT(*) AS total FROM estabelecimento e ${onde ? `${onde} AND` : 'WHERE'} ROWNUM() <= ${linhas}`
    : `SELECT COUNT(*) AS total FROM (SELECT 1 FROM estabelecimento e ${onde} LIMIT ${linhas}) t`;
  try {
    const [{ total }] = await lerDemorado<{ total: number | string }>(banco('leads'), select, parametros, PRAZO_DA_CONTAGEM_S);
    const n = Number(total);
    return { contagem: ateOTeto(n, teto), cortada: false };
  } catch (err) {
    if (tempoEsgotado(err)) return { contagem: { total: teto, estimado: true }, cortada: true };
    throw err;
  }
}

/**
 * The filters every combination of which is counted once a month, after the import: the broad
 * listings most users start with (a state, its active establishments, their head offices) are the
 * slowest to count (São Paulo's, 270,000 index entries of a million, up to 250 ms on a busy hour).
 */
const FILTROS_CONTADOS_NA_IMPORTACAO = ['uf', 'situacao_cadastral', 'matriz_filial'] as const;
type FiltroContado = (typeof FILTROS_CONTADOS_NA_IMPORTACAO)[number];
/** Their counts hold for the month: the key names the data's generation, which the next import ends. */
const VALIDADE_DAS_CONTADAS_NA_IMPORTACAO_S = 40 * 24 * 60 * 60;

/**
 * A stored value as a filter asks for it, or undefined when no filter asks for exactly it (the
 * filter's own rules decide: `2` is asked as `02`, which the column's `=` never matches with `2`).
 * Trailing spaces go: the column's comparison ignores them, and its GROUP BY with them.
 */
function comoFiltro(campo: FiltroContado, valor: string | null): string | undefined {
  if (valor === null) return undefined;
  const v = valor.replace(/ +$/, '');
  const { value, error } = esquemaDosFiltros[campo].validate(v);
  return !error && value === v ? v : undefined;
}

/** How long the pass may read: it scans an index of the whole registry (0.35 s a million rows). */
const PRAZO_DOS_FILTROS_COMUNS_S = 120;

/**
 * Counts every combination of FILTROS_CONTADOS_NA_IMPORTACAO (each given or not: 29 × 6 × 3 filter
 * sets at most) in one pass over an index, and caches each as its count job would, under the
 * data's generation. The one statement reads one month's table (a swap renames tables between
 * statements, never during one), and the generation read before and after it tells which: when
 * they differ, a month was swapped in meanwhile and nothing is cached. Answers how many filter
 * sets were cached.
 */
export async function contarFiltrosComuns(teto = TETO_DA_CONTAGEM): Promise<number> {
  const geracao = await geracaoNoBanco();
  const grupos = await lerDemorado<Record<FiltroContado, string | null> & { n: number | string }>(
    banco('leads'),
    `SELECT uf, situacao_cadastral, identificador_matriz_filial AS matriz_filial, COUNT(*) AS n
       FROM estabelecimento GROUP BY uf, situacao_cadastral, identificador_matriz_filial`,
    [],
    PRAZO_DOS_FILTROS_COMUNS_S,
  );
  if ((await geracaoNoBanco()) !== geracao) return 0;
  const totais = new Map<string, number>();
  for (const grupo of grupos) {
    const valores = FILTROS_CONTADOS_NA_IMPORTACAO.map((campo) => [campo, comoFiltro(campo, grupo[campo])] as const);
    // the group counts for each filter set made of its values a filter can ask for, none to all
    for (let mascara = 0; mascara < 1 << valores.length; mascara++) {
      const escolhidos = valores.filter((_, i) => mascara & (1 << i));
      if (escolhidos.some(([, v]) => v === undefined)) continue;
      const chave = chaveDosFiltros(Object.fromEntries(escolhidos) as FiltrosDeEmpresas);
      totais.set(chave, (totais.get(chave) ?? 0) + Number(grupo.n));
    }
  }
  const escrita = redis('produtor').pipeline();
  for (const [filtros, total] of totais) {
    const { chave } = await chaveNaGeracao('contagem', filtros, geracao);
    escrita.set(chave, JSON.stringify(ateOTeto(total, teto)), 'EX', VALIDADE_DAS_CONTADAS_NA_IMPORTACAO_S);
  }
  for (const [err] of (await escrita.exec()) ?? []) if (err) throw err;
  return totais.size;
}

export interface PedidoDeContagem {
  filtros: FiltrosDeEmpresas;
  /**
   * that generation: a name's list is read for it, not for the one this worker last read (up to
   * VALIDADE_DA_GERACAO_MS old), so a count keyed for a new month never uses last month's list
   */
  geracao?: string;
}

/**
 * The job's work: counts and caches the result, so a count that ends after the listing gave up
 * still serves the next one. The cache's key is made here from what is counted, never read from
 * the job: a job added or edited on the dashboard would otherwise write any key of Redis.
 */
export async function contarEGuardar({ filtros, geracao }: PedidoDeContagem, teto = TETO_DA_CONTAGEM): Promise<Contagem> {
  const { chave } = await chaveNaGeracao('contagem', chaveDosFiltros(filtros), geracao);
  const { contagem, cortada } = await contarEmpresas(filtros, teto, geracao);
  await redis('produtor').set(chave, JSON.stringify(contagem), 'EX', cortada ? VALIDADE_DA_ESTIMATIVA_S : VALIDADE_DO_CACHE_S);
  return contagem;
}

/** Whether any process takes count jobs, read at most every VALIDADE_DOS_WORKERS_MS (CLIENT LIST is no free call). */
const VALIDADE_DOS_WORKERS_MS = 5_000;
const workersVistos = new CacheComPrazo<'contagem', Promise<boolean>>(() => VALIDADE_DOS_WORKERS_MS, 1);

const avisarSemWorker = umaVezPorMinuto(() =>
  log.warn({ fila: filaLeadsContagem.nome }, 'nenhum worker da fila de contagem: a API conta sozinha (inicie `suite worker leads-contagem`)'),
);
// each listing whose count outlasts its wait would say so: a busy minute of broad filters, once,
// with how many others it stood for
const avisarContagemLenta = umaVezPorMinutoPorChave((outras: number, filtros: string) =>
  log.warn({ filtros, repetidos_sem_registro: outras }, 'contagem sem resposta a tempo: total estimado'),
);
// the queue paused on the dashboard, or its workers stopped, keeps it full too
const avisarFilaCheia = umaVezPorMinuto(() =>
  log.warn({ fila: filaLeadsContagem.nome, maxima: CONTAGENS_NA_FILA.maxima }, 'contagens demais esperando na fila: listagens respondem o total estimado sem contar'),
);

async function haWorkerDeContagem(): Promise<boolean> {
  try {
    return await workersVistos.compartilhar('contagem', async () => {
      const ha = (await fila(filaLeadsContagem).getWorkersCount()) > 0;
      if (!ha) avisarSemWorker();
      return ha;
    });
  } catch (err) {
    // the question refused (CLIENT LIST left out of an ACL): the queue, as before, asked again next time
    log.debug({ erro: (err as Error).message }, 'workers da contagem não consultados');
    return true;
  }
}

/** How many counts may wait in the queue before a listing stops adding its own (tests lower it). */
export const CONTAGENS_NA_FILA = { maxima: 200 };

/** The counts under way in this process without the queue, by cache key: listings at once share one. */
const contandoAqui = new CargasEmCurso<string, Contagem>();

/**
 * The count a listing shows: from the cache when this filter set was counted on the current data,
 * else by the count job (shared by concurrent listings of the same filters), or here when the queue
 * has no worker at all. A job still waiting or
 * counting when the wait ends gives the estimate; its result, when it comes, serves the next
 * listing. A count that failed (the database refused it) is no estimate: the listing answers 503.
 */
export async function contagemDasEmpresas(filtros: FiltrosDeEmpresas): Promise<Contagem> {
  const r = redis('produtor');
  const { chave, geracao, hash } = await chaveNaGeracao('contagem', chaveDosFiltros(filtros));
  const guardada = await r.get(chave);
  if (guardada) return JSON.parse(guardada) as Contagem;
  const pedido: PedidoDeContagem = { filtros, geracao };
  const q = fila(filaLeadsContagem);
  // APIs and workers run apart (`suite api`, `suite worker`): with no worker of the queue at all,
  // every listing would wait the whole ESPERA for an estimate and leave a job nobody takes. Counted
  // here instead, under the same limit, once for concurrent listings of the same filters
  if (!(await haWorkerDeContagem())) return contandoAqui.compartilhar(chave, () => contarEGuardar(pedido)).catch((err) => contagemFalhou(err, filtros));
  // filter sets arriving faster than the workers count them (about one a second each) would grow
  // the queue without end, counts run long after their listings answered: past a backlog, a
  // listing answers the estimate at once and queues nothing (listed again later, it is counted)
  if ((await q.getWaitingCount()) >= CONTAGENS_NA_FILA.maxima) {
    avisarFilaCheia();
    return ESTIMATIVA;
  }
  const job = await q.add('contar', pedido, { jobId: `contagem-${geracao}-${hash}` });
  try {
    return (await esperarFimDoJob(q, job.id!, eventosDaFila(filaLeadsContagem), ESPERA_DA_CONTAGEM_MS)) as Contagem;
  } catch (err) {
    if (['waiting', 'active', 'delayed', 'prioritized'].includes(await job.getState())) {
      avisarContagemLenta('', chaveDosFiltros(filtros));
      return ESTIMATIVA;
    }
    // the job is gone: one that ended (and was removed) just before the wait began, or between
    // the wait and the look at its state, left its result in the cache
    const guardadaDepois = await r.get(chave);
    if (guardadaDepois) return JSON.parse(guardadaDepois) as Contagem;
    return contagemFalhou(err, filtros);
  }
}

/** A count that failed, in the job or here, whatever the database said: 503, try again. */
function contagemFalhou(err: unknown, filtros: FiltrosDeEmpresas): never {
  log.error({ erro: (err as Error).message, filtros: chaveDosFiltros(filtros) }, 'contagem falhou');
  throw new ErroDeDominio('indisponivel', 'A contagem das empresas falhou; tente de novo.', undefined, { causa: err });
}
