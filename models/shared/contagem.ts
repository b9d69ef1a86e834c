import { QueryTypes, Sequelize, Transaction } from 'sequelize';
import { DELTAS_POR_VEZ, TabelasDaContagem } from '../../lib/contagem';
import { TABELA } from './sql';

/** A trigger's statement that logs `delta` for the key of the row `linha` (NEW or OLD). */
export const registrarDelta = (c: TabelasDaContagem, linha: 'NEW' | 'OLD', delta: string) =>
  `INSERT INTO ${c.deltas} (${c.chave}, delta) VALUES (${linha}.${c.chave}, ${delta})`;

/**
 * A migration's count kept as base totals plus deltas (lib/contagem.ts): its two tables (the key
 * `tipoDaChave`), the counted table's triggers (`gatilhos`, name → what follows `CREATE TRIGGER
 * name`), then the first base totals, `contagens` (a SELECT of `chave` and `total`). Run again
 * after a stop midway, it builds the same. Migrations call it: what it builds stays as it is, a
 * change goes in a function of its own.
 */
export async function criarContagemComDeltas(
  s: Sequelize,
  c: TabelasDaContagem,
  o: { tipoDaChave: string; gatilhos: Record<string, string>; contagens: string },
): Promise<void> {
  await s.query(`CREATE TABLE IF NOT EXISTS ${c.base} (
    ${c.chave} ${o.tipoDaChave} NOT NULL PRIMARY KEY,
    total BIGINT NOT NULL
  ) ${TABELA}`);
  await s.query(`CREATE TABLE IF NOT EXISTS ${c.deltas} (
    id BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
    ${c.chave} ${o.tipoDaChave} NOT NULL,
    delta INT NOT NULL,
    KEY ${c.deltas}_${c.chave} (${c.chave})
  ) ${TABELA}`);
  for (const [nome, corpo] of Object.entries(o.gatilhos)) {
    await s.query(`DROP TRIGGER IF EXISTS ${nome}`);
    await s.query(`CREATE TRIGGER ${nome} ${corpo}`);
  }
  // Processes of the previous release may still be writing: the first totals are read from one
  // snapshot taken after the triggers exist. A change committed before it is in the count, so its
  // delta, seen in the same snapshot, is dropped; one committed after it keeps its delta.
  await s.transaction({ isolationLevel: Transaction.ISOLATION_LEVELS.REPEATABLE_READ }, async (transaction) => {
    const ler = <T extends object>(sql: string) => s.query<T>(sql, { transaction, type: QueryTypes.SELECT });
    const totais = await ler<{ chave: string; total: number }>(o.contagens);
    const vistos = await ler<{ id: number }>(`SELECT id FROM ${c.deltas}`);
    await s.query(`DELETE FROM ${c.base}`, { transaction });
    for (let i = 0; i < totais.length; i += 1000) {
      const parte = totais.slice(i, i + 1000).map((t) => [t.chave, t.total]);
      await s.query(`INSERT INTO ${c.base} (${c.chave}, total) VALUES ?`, { replacements: [parte], transaction });
    }
    for (let i = 0; i < vistos.length; i += DELTAS_POR_VEZ) {
      const parte = vistos.slice(i, i + DELTAS_POR_VEZ).map((d) => d.id);
      await s.query(`DELETE FROM ${c.deltas} WHERE id IN (?)`, { replacements: [parte], transaction });
    }
  });
}
