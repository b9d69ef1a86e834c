import { createHash } from 'node:crypto';
import { v7 as uuidv7 } from 'uuid';
import { config } from '../../config';
import { CacheComPrazo } from '../../lib/cache';
import { banco, lerLinhas } from '../../lib/database';

/**
 * What the service caches about the registry (counts per filter set, the establishments a name
 * lists) is kept under the data's generation: what was cached about the previous month is never
 * read again, and simply expires.
 *
 * The generation lives in the database, in a one-row table an import swaps in with its tables
 * (importacao.ts, the same RENAME TABLE): data and generation change in the same instant, so no
 * failure after the swap (Redis out of reach, the process killed) can leave last month's counts
 * served, and a run cut before its swap changed neither.
 */
export const TABELA_DA_GERACAO = 'geracao_dos_dados';

/**
 * How long a process keeps the generation it read: a listing costs no extra round trip, and a
 * process other than the import's sees a new month's generation at most this long after the swap.
 */
export const VALIDADE_DA_GERACAO_MS = 3000;

const lida = new CacheComPrazo<'geracao', Promise<string>>(() => VALIDADE_DA_GERACAO_MS);

/** The generation as the database has it now, not as this process last read it. */
export const geracaoNoBanco = () =>
  lerLinhas<{ geracao: string }>(banco('leads'), `SELECT geracao FROM ${TABELA_DA_GERACAO} WHERE id = 1`, []).then(([l]) => l.geracao);

/** Shared by the listings that ask while it is read; a failed read is tried again by the next one. */
export function geracaoDosDados(): Promise<string> {
  return lida.compartilhar('geracao', geracaoNoBanco);
}

/** The process that swapped a month in (or changed the data) reads the new generation at once. */
export const esquecerGeracao = () => lida.esquecer();

/** For tests that change the data behind the service's back; an import swaps its own in. */
export async function novaGeracaoDosDados(): Promise<void> {
  await banco('leads').query(`UPDATE ${TABELA_DA_GERACAO} SET geracao = ? WHERE id = 1`, { replacements: [uuidv7()] });
  esquecerGeracao();
}

/**
 * The Redis key of something cached about the data of generation `geracao` (the current one when
 * not given): `tipo` and a digest of what it is about.
 */
export async function chaveNaGeracao(
  tipo: string,
  sobre: string,
  geracao?: string,
): Promise<{ chave: string; geracao: string; hash: string }> {
  const g = geracao ?? (await geracaoDosDados());
  const hash = createHash('sha256').update(sobre).digest('hex').slice(0, 32);
  return { chave: `${config().queuePrefix}:leads:${tipo}:${g}:${hash}`, geracao: g, hash };
}
