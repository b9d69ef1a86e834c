import { randomUUID } from 'node:crypto';
import { abrirBanco, apagarBanco, lerLinhas, migrar } from '../../lib/database';
import { encerrar } from '../../lib/lifecycle';
import { MIGRACOES_FILES } from '../../models/files/migracoes';

/**
 * Migration 0004 gives each owed removal (arquivo_a_apagar) the time from which its bytes may go:
 * the lines already there are deletions', due at once. Run again after a stop midway (the column
 * added, the migration not yet recorded), it finishes.
 */
const sequelize = { config: { database: '' } };
const i0004 = MIGRACOES_FILES.findIndex((m) => m.name === '0004-files-remover-apos');
const q = (sql: string, valores: unknown[] = []) => lerLinhas<Record<string, any>>(sequelize, sql, valores);

beforeAll(async () => {
  const s = await abrirBanco('files', []);
  sequelize.config.database = s.config.database!;
  await migrar('files', MIGRACOES_FILES.slice(0, i0004));
});

afterAll(async () => {
  await encerrar();
  await apagarBanco('files');
});

test('a deletion owed before 0004 is due at once after it; 0004 stopped after its statement runs again', async () => {
  const id = randomUUID();
  await q('INSERT INTO arquivo_a_apagar (arquivo_id, criado_em) VALUES (?, NOW(3) - INTERVAL 1 HOUR)', [id]);
  expect(await migrar('files', MIGRACOES_FILES)).toEqual(['0004-files-remover-apos']);
  expect(await q('SELECT arquivo_id FROM arquivo_a_apagar WHERE remover_apos <= NOW(3)')).toEqual([{ arquivo_id: id }]);

  // the column there, the migration not recorded: as after a stop between the two
  await q("DELETE FROM schema_migracoes WHERE name = '0004-files-remover-apos'");
  expect(await migrar('files', MIGRACOES_FILES)).toEqual(['0004-files-remover-apos']);
  // a process of the earlier version, writing no time: its deletion is due at once
  const antigo = randomUUID();
  await q('INSERT INTO arquivo_a_apagar (arquivo_id, criado_em) VALUES (?, NOW(3))', [antigo]);
  expect(await q('SELECT arquivo_id FROM arquivo_a_apagar WHERE arquivo_id = ? AND remover_apos <= NOW(3)', [antigo])).toHaveLength(1);
});
