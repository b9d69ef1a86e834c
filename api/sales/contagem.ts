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

/** Folds the deltas logged so far into the base counts (the sales-contagem job, one at a time). */
export async function compactarContagem(): Promise<number> {
  return emTransacao(
    banco('sales'),
    async (conexao) => {
      const [[{ ate }]] = (await conexao.query('SELECT MAX(id) AS ate FROM conversa_contagem_delta')) as unknown as [[{ ate: number | null }]];
      if (ate === null) return 0;
      await conexao.query(
        `INSERT INTO conversa_contagem (status, total)
           SELECT status, SUM(delta) FROM conversa_contagem_delta WHERE id <= ? GROUP BY status
         ON DUPLICATE KEY UPDATE total = total + VALUES(total)`,
        [ate],
      );
      const [r] = await conexao.query('DELETE FROM conversa_contagem_delta WHERE id <= ?', [ate]);
      return (r as { affectedRows: number }).affectedRows;
    },
    { leituraConfirmada: true },
  );
}
