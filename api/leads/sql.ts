import { banco, lerLinhas } from '../../lib/database';

/**
 * Statement timeouts: MariaDB (max_statement_time) and MySQL (MAX_EXECUTION_TIME). MariaDB's limit
 * stopping InnoDB inside a full-text search comes back as error 188 instead, its storage engine's
 * "aborted by user" (the statement interrupted there; mysql2 names the code by MySQL's meaning).
 */
const TEMPO_ESGOTADO = new Set([1969, 3024, 188]);
export const tempoEsgotado = (err: unknown) => TEMPO_ESGOTADO.has((err as { errno?: number }).errno ?? 0);

let servidorMariaDb: Promise<boolean> | undefined;

/** MariaDB and MySQL write a few things differently; asked once (again after a failure). */
export function ehMariaDb(): Promise<boolean> {
  servidorMariaDb ??= lerLinhas<{ v: string }>(banco('leads'), 'SELECT VERSION() AS v', []).then(([l]) => /mariadb/i.test(l.v));
  servidorMariaDb.catch(() => (servidorMariaDb = undefined));
  return servidorMariaDb;
}

/** A SELECT the database itself stops after `segundos` (see `tempoEsgotado`). */
export async function comPrazo(select: string, segundos: number): Promise<string> {
  return (await ehMariaDb())
    ? `SET STATEMENT max_statement_time = ${segundos} FOR ${select}`
    : select.replace(/^\s*SELECT\b/i, `SELECT /*+ MAX_EXECUTION_TIME(${segundos * 1000}) */`);
}
