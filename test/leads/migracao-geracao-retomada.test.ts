import { abrirBanco, migrar } from '../../lib/database';
import { MIGRACOES_LEADS } from '../../models/leads/migracoes';
import { bancoAntesDaMigracao } from '../helpers/migracoes';

/**
 * Migration 0005 stopped midway (a crash, a deploy cancelled) runs again from its start at the
 * next start: the data's generation table ends with its one row.
 */
const banco = bancoAntesDaMigracao('leads', MIGRACOES_LEADS, '0005-geracao-dos-dados');
const { q, indice: i0005 } = banco;
/** the migrations up to 0005: those after it are not this file's */
const ATE_A_0005 = MIGRACOES_LEADS.slice(0, i0005 + 1);

beforeAll(() => banco.abrir());
afterAll(() => banco.apagar());

beforeEach(async () => {
  await q('DROP TABLE IF EXISTS geracao_dos_dados');
  await q("DELETE FROM schema_migracoes WHERE name = '0005-geracao-dos-dados'");
});

test('0005 stopped after creating the table runs again to its end', async () => {
  await q('CREATE TABLE geracao_dos_dados (id TINYINT NOT NULL PRIMARY KEY, geracao CHAR(36) NOT NULL)');
  expect(await migrar('leads', ATE_A_0005)).toEqual(['0005-geracao-dos-dados']);
  expect(await q('SELECT id FROM geracao_dos_dados')).toEqual([{ id: 1 }]);
});

test('0005 stopped after its last statement, before it was recorded, runs again and keeps the generation', async () => {
  await MIGRACOES_LEADS[i0005].up((await abrirBanco('leads', [])).getQueryInterface());
  const [{ geracao }] = await q('SELECT geracao FROM geracao_dos_dados');
  expect(await migrar('leads', ATE_A_0005)).toEqual(['0005-geracao-dos-dados']);
  expect(await q('SELECT id, geracao FROM geracao_dos_dados')).toEqual([{ id: 1, geracao }]);
});
