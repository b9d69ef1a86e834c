import { randomUUID } from 'node:crypto';
import { migrar } from '../../lib/database';
import { MIGRACOES_IDENTITY } from '../../models/identity/migracoes';
import { bancoAntesDaMigracao } from '../helpers/migracoes';

/**
 * Migration 0004 gives the outbox's events the database's order (`sequencia`) on a database
 * already in use: events stored before it keep the order they had (criado_em, then id), new ones
 * come after them, and the read of a collaborator's earlier events still goes by an index.
 */
const banco = bancoAntesDaMigracao('identity', MIGRACOES_IDENTITY, '0004-identity-sequencia-do-evento');
const { q } = banco;
/** the migrations up to 0004: those after it are not this file's */
const ATE_A_0004 = MIGRACOES_IDENTITY.slice(0, banco.indice + 1);

afterAll(() => banco.apagar());

test('stored events are numbered in their old order, new ones after them; the earlier-events read uses the index', async () => {
  await banco.abrir();
  const colaborador = randomUUID();
  // ids in the reverse of the order stored: the order must come from criado_em, not the key
  const ids = ['c', 'b', 'a'].map((l) => `${l.repeat(8)}-0000-4000-8000-000000000000`);
  for (const [n, eventoId] of ids.entries()) {
    await q(
      `INSERT INTO evento_pendente (id, tipo, versao, dados, colaborador_id, criado_em)
        VALUES (?, 'colaborador.atualizado', 1, '{}', ?, NOW(3) - INTERVAL ? SECOND)`,
      [eventoId, colaborador, 10 - n],
    );
  }
  expect(await migrar('identity', ATE_A_0004)).toEqual(['0004-identity-sequencia-do-evento']);

  await q("INSERT INTO evento_pendente (id, tipo, versao, dados, colaborador_id, criado_em) VALUES (?, 'colaborador.removido', 1, '{}', ?, NOW(3) - INTERVAL 1 HOUR)", [
    randomUUID(),
    colaborador,
  ]);
  const linhas = await q('SELECT id, tipo FROM evento_pendente WHERE colaborador_id = ? ORDER BY sequencia', [colaborador]);
  expect(linhas.map((l) => l.id)).toEqual([...ids, expect.any(String)]);
  expect(linhas[3].tipo).toBe('colaborador.removido');

  // other collaborators' events, as a table in use holds, so the plan is the one it would get
  await q(`INSERT INTO evento_pendente (id, tipo, versao, dados, colaborador_id, criado_em)
             WITH RECURSIVE n (i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 50)
             SELECT UUID(), 'colaborador.atualizado', 1, '{}', UUID(), NOW(3) FROM n a, n b`);
  await q('ANALYZE TABLE evento_pendente');
  const [plano] = await q('EXPLAIN SELECT * FROM evento_pendente WHERE colaborador_id = ? AND enviado_em IS NULL AND sequencia < 1000000 ORDER BY sequencia LIMIT 100', [
    colaborador,
  ]);
  expect(plano.key).toBe('evento_pendente_colaborador');
  expect(String(plano.Extra ?? '')).not.toContain('filesort');
});
