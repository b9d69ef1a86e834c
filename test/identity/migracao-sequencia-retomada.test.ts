import { randomUUID } from 'node:crypto';
import type { QueryInterface } from 'sequelize';
import { abrirBanco, migrar } from '../../lib/database';
import { MIGRACOES_IDENTITY } from '../../models/identity/migracoes';
import { bancoAntesDaMigracao } from '../helpers/migracoes';

/**
 * Migration 0004 on a database in use: identity processes of the earlier version go on storing
 * events (without `sequencia`) while a new one migrates, and a migration stopped midway (a
 * crash, a deploy cancelled) runs again from its start at the next start.
 */
const banco = bancoAntesDaMigracao('identity', MIGRACOES_IDENTITY, '0004-identity-sequencia-do-evento');
const { q, indice: i0004 } = banco;
/** the migrations up to 0004: those after it are not this file's */
const ATE_A_0004 = MIGRACOES_IDENTITY.slice(0, i0004 + 1);
const colaborador = randomUUID();

/** an event as a process of the earlier version stores it: no `sequencia` */
const eventoAntigo = (id: string, segundosAtras: number) =>
  q(
    `INSERT INTO evento_pendente (id, tipo, versao, dados, colaborador_id, criado_em)
      VALUES (?, 'colaborador.atualizado', 1, '{}', ?, NOW(3) - INTERVAL ? SECOND)`,
    [id, colaborador, segundosAtras],
  );

beforeAll(() => banco.abrir());
afterAll(() => banco.apagar());

/** the table as before 0004, whatever of it ran */
async function antesDa0004(): Promise<void> {
  await q('DELETE FROM evento_pendente');
  await q("DELETE FROM schema_migracoes WHERE name = '0004-identity-sequencia-do-evento'");
  const [coluna] = await q("SELECT 1 FROM information_schema.columns WHERE table_schema = DATABASE() AND table_name = 'evento_pendente' AND column_name = 'sequencia'");
  if (coluna) await q('ALTER TABLE evento_pendente DROP COLUMN sequencia');
  await q('ALTER TABLE evento_pendente DROP INDEX evento_pendente_colaborador, ADD INDEX evento_pendente_colaborador (colaborador_id, enviado_em, criado_em)');
}

beforeEach(antesDa0004);

test('0004 stopped after adding the column runs again to its end', async () => {
  const ids = ['c', 'b', 'a'].map((l) => `${l.repeat(8)}-0000-4000-8000-000000000000`);
  for (const [n, id] of ids.entries()) await eventoAntigo(id, 30 - n);
  await q('ALTER TABLE evento_pendente ADD COLUMN sequencia BIGINT NULL AFTER id');
  expect(await migrar('identity', ATE_A_0004)).toEqual(['0004-identity-sequencia-do-evento']);
  const linhas = await q('SELECT id FROM evento_pendente WHERE colaborador_id = ? ORDER BY sequencia', [colaborador]);
  expect(linhas.map((l) => l.id)).toEqual(ids);
});

test('0004 stopped after its last statement, before it was recorded, runs again', async () => {
  await eventoAntigo(randomUUID(), 5);
  await MIGRACOES_IDENTITY[i0004].up((await abrirBanco('identity', [])).getQueryInterface());
  expect(await migrar('identity', ATE_A_0004)).toEqual(['0004-identity-sequencia-do-evento']);
});

test('an event an earlier-version process stores while 0004 runs neither fails the migration nor jumps ahead', async () => {
  // ids chosen so that the new event is not the last in the key's order
  const antes = ['b', 'c', 'd'].map((l) => `${l.repeat(8)}-0000-4000-8000-000000000000`);
  for (const [n, id] of antes.entries()) await eventoAntigo(id, 30 - n);
  const novo = `${'a'.repeat(8)}-0000-4000-8000-000000000000`;
  const s = await abrirBanco('identity', []);
  let inserido: Promise<unknown> | undefined;
  // the earlier-version process writes just before the statement that makes the column the counter
  const qi = {
    sequelize: new Proxy(s, {
      get(alvo, p, r) {
        if (p !== 'query') return Reflect.get(alvo, p, r);
        return async (sql: string, opcoes?: object) => {
          if (!inserido && /AUTO_INCREMENT/.test(sql)) {
            inserido = eventoAntigo(novo, 0);
            // it waits if the migration holds the table; else it is stored now
            await Promise.race([inserido, new Promise((ok) => setTimeout(ok, 500))]);
          }
          return alvo.query(sql, opcoes as never);
        };
      },
    }),
  } as unknown as QueryInterface;
  await MIGRACOES_IDENTITY[i0004].up(qi);
  await inserido;
  const linhas = await q('SELECT id, sequencia FROM evento_pendente WHERE colaborador_id = ? ORDER BY sequencia', [colaborador]);
  expect(linhas.map((l) => l.id)).toEqual([...antes, novo]);
});
