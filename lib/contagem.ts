import { emTransacao, lerPorTexto } from './database';

/**
 * A count kept by the database's triggers as base totals plus recent deltas: `base` holds
 * (`chave`, `total`), `deltas` (`id`, `chave`, `delta`), appended by the triggers of the counted
 * table. A counter row updated by each change would be one hot row for every writer; deltas are
 * only appended, and a reader sums both, so a count costs one small read whatever the size.
 */
export type TabelasDaContagem = { base: string; deltas: string; chave: string };
export type ContagemComDeltas = TabelasDaContagem & { banco: { config: { database: string } } };

/** Deltas folded per transaction: its locks, and the DELETE's list of ids, stay bounded. */
export const DELTAS_POR_VEZ = 10_000;

/**
 * Folds the deltas logged so far into the base totals (one job at a time), in transactions of
 * `porVez`: a backlog (days with no worker folding) would otherwise be one DELETE past the packet
 * limit, failing every run for good. The deltas are read with a lock, which waits for a writer
 * still holding one of them, so each delta is summed once, then exactly those are deleted. Deltas
 * logged after the fold began wait for its next run, as do the rest of a backlog when a shutdown
 * (`sinal`) stops it; the count so far goes to `aoProgredir`.
 */
export async function consolidarDeltas(
  c: ContagemComDeltas,
  porVez = DELTAS_POR_VEZ,
  aoProgredir: (p: { consolidados: number }) => void = () => undefined,
  sinal?: AbortSignal,
): Promise<number> {
  const [{ ate }] = await lerPorTexto<{ ate: number | null }>(c.banco, `SELECT MAX(id) AS ate FROM ${c.deltas}`, []);
  if (ate === null) return 0;
  let consolidados = 0;
  for (;;) {
    const feitos = await emTransacao(
      c.banco,
      async (conexao) => {
        const [linhas] = await conexao.query(`SELECT id, ${c.chave} AS chave, delta FROM ${c.deltas} WHERE id <= ? ORDER BY id LIMIT ? FOR UPDATE`, [
          ate,
          porVez,
        ]);
        const deltas = linhas as { id: number; chave: string; delta: number }[];
        if (!deltas.length) return 0;
        const porChave = new Map<string, number>();
        for (const d of deltas) porChave.set(d.chave, (porChave.get(d.chave) ?? 0) + Number(d.delta));
        // in key order: two folds at once (the job run twice) would lock the base rows in one order
        await conexao.query(`INSERT INTO ${c.base} (${c.chave}, total) VALUES ? ON DUPLICATE KEY UPDATE total = total + VALUES(total)`, [
          [...porChave].sort(([a], [b]) => (a < b ? -1 : 1)),
        ]);
        await conexao.query(`DELETE FROM ${c.deltas} WHERE id IN (?)`, [deltas.map((d) => d.id)]);
        return deltas.length;
      },
      { leituraConfirmada: true },
    );
    consolidados += feitos;
    aoProgredir({ consolidados });
    // a shutdown stops it between two transactions: the rest waits for the next run
    if (feitos < porVez || sinal?.aborted) return consolidados;
  }
}

/**
 * The counts of `chaves` (of every key without them), base plus deltas in one statement: one
 * snapshot, which sees a fold either done or not begun.
 */
export async function lerContagens(c: ContagemComDeltas, chaves?: readonly string[]): Promise<Map<string, number>> {
  if (chaves?.length === 0) return new Map();
  const onde = chaves ? `WHERE ${c.chave} IN (?)` : '';
  const linhas = await lerPorTexto<{ chave: string; total: number | string | null }>(
    c.banco,
    `SELECT chave, SUM(total) AS total FROM (
       SELECT ${c.chave} AS chave, total FROM ${c.base} ${onde} UNION ALL SELECT ${c.chave}, delta FROM ${c.deltas} ${onde}
     ) t GROUP BY chave`,
    chaves ? [chaves, chaves] : [],
  );
  return new Map(linhas.map((l) => [l.chave, Number(l.total ?? 0)]));
}
