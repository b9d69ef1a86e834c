import { banco, emTransacao, lerPorTexto } from '../../lib/database';
import { StatusDaConversa } from '../../models/sales';

/**
 * Live conversations per status (SPEC 4.6 rule 1 `total`), kept by the conversa table's triggers
 * as a base count plus recent deltas (models/sales/migracoes.ts): one read, whatever the size.
 */
export async function totalDeConversas(status?: StatusDaConversa): Promise<number> {
  const [{ total }] = await lerPorTexto<{ total: number | null }>(
    banco('sales'),
    `SELECT SUM(total) AS total FROM (
       SELECT status, total FROM conversa_contagem UNION ALL SELECT status, delta FROM conversa_contagem_delta
     ) t ${status ? 'WHERE status = ?' : ''}`,
    status ? [status] : [],
  );
  return Number(total ?? 0);
}

/** Deltas folded per transaction: its locks, and the DELETE's list of ids, stay bounded. */
const DELTAS_POR_VEZ = 10_000;

/**
 * Folds the deltas logged so far into the base counts (the sales-contagem job, one at a time), in
 * transactions of `porVez`: a backlog (days with no sales-contagem worker) would otherwise be one
 * DELETE past the packet limit, failing every run for good. The deltas are read with a lock,
 * which waits for a writer still holding one of them, so each delta is summed once, then exactly
 * those are deleted. Deltas logged after the job began wait for its next run, as do the rest of a
 * backlog when a shutdown (`sinal`) stops it; the count so far goes to `aoProgredir`.
 */
export async function compactarContagem(
  porVez = DELTAS_POR_VEZ,
  aoProgredir: (p: { consolidados: number }) => void = () => undefined,
  sinal?: AbortSignal,
): Promise<number> {
  const [{ ate }] = await lerPorTexto<{ ate: number | null }>(banco('sales'), 'SELECT MAX(id) AS ate FROM conversa_contagem_delta', []);
  if (ate === null) return 0;
  let consolidados = 0;
  for (;;) {
    const feitos = await emTransacao(
      banco('sales'),
      async (conexao) => {
        const [linhas] = await conexao.query('SELECT id, status, delta FROM conversa_contagem_delta WHERE id <= ? ORDER BY id LIMIT ? FOR UPDATE', [
          ate,
          porVez,
        ]);
        const deltas = linhas as { id: number; status: string; delta: number }[];
        if (!deltas.length) return 0;
        const porStatus = new Map<string, number>();
        for (const d of deltas) porStatus.set(d.status, (porStatus.get(d.status) ?? 0) + Number(d.delta));
        await conexao.query('INSERT INTO conversa_contagem (status, total) VALUES ? ON DUPLICATE KEY UPDATE total = total + VALUES(total)', [
          [...porStatus].sort(([a], [b]) => (a < b ? -1 : 1)),
        ]);
        await conexao.query('DELETE FROM conversa_contagem_delta WHERE id IN (?)', [deltas.map((d) => d.id)]);
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
