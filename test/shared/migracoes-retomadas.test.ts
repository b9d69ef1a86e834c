import { randomUUID } from 'node:crypto';
import { migrar } from '../../lib/database';
import { MIGRACOES_IDENTITY } from '../../models/identity/migracoes';
import { MIGRACOES_SALES } from '../../models/sales/migracoes';
import { bancoAntesDaMigracao } from '../helpers/migracoes';

/**
 * Migrations of several statements, stopped midway (a crash, a deploy cancelled: MariaDB commits
 * each DDL statement on its own, and a migration is recorded only at its end), run again from their
 * start at the next start and go on from where they were, instead of failing on what they had done.
 */
const identity = bancoAntesDaMigracao('identity', MIGRACOES_IDENTITY, '0002-identity-evento-do-colaborador');
const sales = bancoAntesDaMigracao('sales', MIGRACOES_SALES, '0008-sales-ordem-dos-eventos');

beforeAll(async () => {
  await identity.abrir();
  await sales.abrir();
});
afterAll(async () => {
  await identity.apagar();
  await sales.apagar();
});

const indices = async (q: typeof identity.q, tabela: string) =>
  (await q('SELECT DISTINCT index_name AS i FROM information_schema.statistics WHERE table_schema = DATABASE() AND table_name = ?', [tabela])).map(
    (l) => l.i,
  );

test("identity 0002 stopped after adding its column runs again to its end: every event's collaborator filled, its index made", async () => {
  const [feito, antigo] = [randomUUID(), randomUUID()];
  const evento = (colaborador: string) =>
    identity.q("INSERT INTO evento_pendente (id, tipo, versao, dados, criado_em) VALUES (?, 'colaborador.criado', 1, ?, NOW(3))", [
      randomUUID(),
      JSON.stringify({ id: colaborador }),
    ]);
  await evento(antigo);
  await identity.q('ALTER TABLE evento_pendente ADD COLUMN colaborador_id CHAR(36) NULL AFTER dados');
  // one stored by the new version meanwhile, its column written
  await evento(feito);
  await identity.q('UPDATE evento_pendente SET colaborador_id = ? WHERE colaborador_id IS NULL AND dados LIKE ?', [feito, `%${feito}%`]);
  expect(await migrar('identity', MIGRACOES_IDENTITY.slice(0, identity.indice + 1))).toEqual(['0002-identity-evento-do-colaborador']);
  const linhas = await identity.q('SELECT colaborador_id AS c FROM evento_pendente ORDER BY c');
  expect(linhas.map((l) => l.c)).toEqual([antigo, feito].sort());
  expect(await indices(identity.q, 'evento_pendente')).toContain('evento_pendente_colaborador');
});

test('sales 0008 stopped after its first column runs again and adds the second', async () => {
  await sales.q('ALTER TABLE conversa ADD COLUMN suporte_atualizada_em DATETIME(6) NULL');
  expect(await migrar('sales', MIGRACOES_SALES.slice(0, sales.indice + 1))).toEqual(['0008-sales-ordem-dos-eventos']);
  const colunas = await sales.q(
    "SELECT table_name AS t FROM information_schema.columns WHERE table_schema = DATABASE() AND column_name = 'suporte_atualizada_em' ORDER BY t",
  );
  expect(colunas.map((l) => l.t)).toEqual(['conversa', 'conversa_mensagem']);
});
