import { createHash } from 'node:crypto';
import { config } from '../../config';
import { banco, lerLinhas } from '../../lib/database';
import { logger } from '../../lib/logger';
import { redis } from '../../lib/redis';
import { eventosDaFila, fila } from '../../queues/fila';
import { filaLeadsContagem } from '../../queues/leads-contagem';
import { chaveDosFiltros, condicoesDosFiltros, FiltrosDeEmpresas } from './filtros';

/** SPEC 4.2 rule 4: the count stops past this and says it is an estimate. */
export const TETO_DA_CONTAGEM = 2_000_000;
/** ... and so it does when the database takes longer than this to count. */
export const PRAZO_DA_CONTAGEM_S = 6;
/** How long a listing waits for the count job before answering the estimate (queue wait included). */
const ESPERA_DA_CONTAGEM_MS = (PRAZO_DA_CONTAGEM_S + 2) * 1000;
/** Exact counts hold until the next import; an estimate from a slow count is retried sooner. */
const VALIDADE_DO_CACHE_S = 24 * 60 * 60;
const VALIDADE_DA_ESTIMATIVA_S = 10 * 60;

export interface Contagem {
  total: number;
  estimado: boolean;
}

const ESTIMATIVA: Contagem = { total: TETO_DA_CONTAGEM, estimado: true };
const log = logger('leads-contagem');

/** Statement timeouts: MariaDB (max_statement_time) and MySQL (MAX_EXECUTION_TIME). */
const TEMPO_ESGOTADO = new Set([1969, 3024]);

let servidorMariaDb: Promise<boolean> | undefined;
const ehMariaDb = () =>
  (servidorMariaDb ??= lerLinhas<{ v: string }>(banco('leads'), 'SELECT VERSION() AS v', []).then(([l]) => /mariadb/i.test(l.v)));

/**
 * The count itself (run by the queue's processor): stops at the cap + 1 row and under a time limit
 * enforced by the database, so a filter that matches most of the registry costs at most 6 seconds.
 */
export async function contarEmpresas(filtros: FiltrosDeEmpresas): Promise<Contagem> {
  const { onde, parametros } = condicoesDosFiltros(filtros);
  const teto = TETO_DA_CONTAGEM + 1;
  // MariaDB stops the scan at ROWNUM(); MySQL needs a derived table with LIMIT, which MariaDB
  // would fill row by row before counting (60% slower on a count of a few hundred thousand).
  const sql = (await ehMariaDb())
    ? `SET STATEMENT max_statement_time = ${PRAZO_DA_CONTAGEM_S} FOR
       SELECT COUNT(*) AS total FROM estabelecimento e ${onde ? `${onde} AND` : 'WHERE'} ROWNUM() <= ${teto}`
    : `SELECT /*+ MAX_EXECUTION_TIME(${PRAZO_DA_CONTAGEM_S * 1000}) */ COUNT(*) AS total
       FROM (SELECT 1 FROM estabelecimento e ${onde} LIMIT ${teto}) t`;
  try {
    const [{ total }] = await lerLinhas<{ total: number | string }>(banco('leads'), sql, parametros);
    const n = Number(total);
    return n > TETO_DA_CONTAGEM ? ESTIMATIVA : { total: n, estimado: false };
  } catch (err) {
    if (TEMPO_ESGOTADO.has((err as { errno?: number }).errno ?? 0)) return ESTIMATIVA;
    throw err;
  }
}

const prefixoDoCache = () => `${config().queuePrefix}:leads:contagem:`;
const chaveDoCache = (chave: string) => prefixoDoCache() + createHash('sha256').update(chave).digest('hex').slice(0, 32);

/**
 * The count a listing shows: from the cache when this filter set was counted since the last import,
 * else by the count job (shared by concurrent listings of the same filters). The database's
 * estimate (over the cap or the time) is cached for a shorter while; a job that does not answer in
 * time gives the estimate without caching it.
 */
export async function contagemDasEmpresas(filtros: FiltrosDeEmpresas): Promise<Contagem> {
  const chave = chaveDosFiltros(filtros);
  const cache = chaveDoCache(chave);
  const guardada = await redis('produtor').get(cache);
  if (guardada) return JSON.parse(guardada) as Contagem;
  const job = await fila(filaLeadsContagem).add('contar', { filtros }, { jobId: `contagem-${cache.slice(prefixoDoCache().length)}` });
  let contagem: Contagem;
  try {
    contagem = (await job.waitUntilFinished(eventosDaFila(filaLeadsContagem), ESPERA_DA_CONTAGEM_MS)) as Contagem;
  } catch (err) {
    log.warn({ err: (err as Error).message, filtros: chave }, 'contagem sem resposta a tempo: total estimado');
    return ESTIMATIVA;
  }
  await redis('produtor').set(cache, JSON.stringify(contagem), 'EX', contagem.estimado ? VALIDADE_DA_ESTIMATIVA_S : VALIDADE_DO_CACHE_S);
  return contagem;
}

/** After an import every cached count is stale. */
export async function esquecerContagens(): Promise<void> {
  const r = redis('produtor');
  let cursor = '0';
  do {
    const [proximo, chaves] = await r.scan(cursor, 'MATCH', `${prefixoDoCache()}*`, 'COUNT', 1000);
    cursor = proximo;
    if (chaves.length) await r.del(...chaves);
  } while (cursor !== '0');
}
