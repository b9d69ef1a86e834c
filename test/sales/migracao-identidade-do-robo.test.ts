import { randomUUID } from 'node:crypto';
import { banco as bancoDoServico, migrar } from '../../lib/database';
import { MIGRACOES_SALES } from '../../models/sales/migracoes';
import { bancoAntesDaMigracao } from '../helpers/migracoes';
import type { Registro } from '../helpers/registros';

const mockRegistros: Registro[] = [];
jest.mock('../../lib/logger', () => jest.requireActual('../helpers/registros').loggerQueRegistra('migracoes', ['warn'], () => mockRegistros));

/**
 * Migration 0014 gives each chat identity (a user, an agent bot: counted apart) to one live robot
 * at most, on a database where live robots already share some: the robot created first keeps it
 * (id breaks a tie), the later ones lose it, each logged and stamped; deleted robots play no part.
 * Afterwards the database refuses a second live holder; run again, the migration changes nothing.
 */
const banco = bancoAntesDaMigracao('sales', MIGRACOES_SALES, '0014-sales-identidade-do-robo');
const { q, indice } = banco;

afterAll(() => banco.apagar());

const ANTES = '2026-01-10 03:04:05.678';

async function robo(o: { usuario?: number; bot?: number; criado: string; deletado?: string; id?: string }) {
  const id = o.id ?? randomUUID();
  await q(
    `INSERT INTO robo (id, nome, suporte_usuario_id, suporte_bot_id, criado_em, atualizado_em, deletado_em)
      VALUES (?, ?, ?, ?, ?, ?, ?)`,
    [id, `Robô ${id}`, o.usuario ?? null, o.bot ?? null, o.criado, ANTES, o.deletado ?? null],
  );
  return id;
}

const linha = async (id: string) =>
  (
    await q(
      `SELECT suporte_usuario_id AS usuario, suporte_bot_id AS bot, DATE_FORMAT(atualizado_em, '%Y-%m-%d %H:%i:%s.%f') AS atualizado
        FROM robo WHERE id = ?`,
      [id],
    )
  )[0];

test('the robot created first keeps a shared identity, the later live ones lose it; deleted robots and the other kind of id stay', async () => {
  await banco.abrir();
  // stored out of creation order: criado_em decides, not the order of the rows
  const segundo = await robo({ usuario: 7, criado: '2026-01-02 00:00:00.000' });
  const primeiro = await robo({ usuario: 7, bot: 8, criado: '2026-01-01 00:00:00.000' });
  const apagadoAntes = await robo({ usuario: 7, bot: 8, criado: '2025-01-01 00:00:00.000', deletado: '2025-06-01 00:00:00.000' });
  const terceiro = await robo({ usuario: 7, bot: 8, criado: '2026-01-03 00:00:00.000' });
  const botSete = await robo({ bot: 7, criado: '2026-01-04 00:00:00.000' });
  // created in the same millisecond: the lower id keeps it
  const empateB = await robo({ bot: 9, criado: '2026-01-05 00:00:00.000', id: 'bbbbbbbb-0000-4000-8000-000000000000' });
  const empateA = await robo({ bot: 9, criado: '2026-01-05 00:00:00.000', id: 'aaaaaaaa-0000-4000-8000-000000000000' });
  const sozinho = await robo({ usuario: 10, bot: 10, criado: '2026-01-06 00:00:00.000' });

  const inicio = new Date().toISOString().replace('T', ' ').slice(0, 19);
  expect(await migrar('sales', MIGRACOES_SALES.slice(0, indice + 1))).toEqual(['0014-sales-identidade-do-robo']);

  const ficam = { usuario: 7, bot: 8, atualizado: expect.stringContaining(ANTES) };
  expect(await linha(primeiro)).toEqual(ficam);
  expect(await linha(apagadoAntes)).toEqual(ficam);
  expect(await linha(botSete)).toMatchObject({ usuario: null, bot: 7, atualizado: expect.stringContaining(ANTES) });
  expect(await linha(empateA)).toMatchObject({ bot: 9, atualizado: expect.stringContaining(ANTES) });
  expect(await linha(sozinho)).toMatchObject({ usuario: 10, bot: 10, atualizado: expect.stringContaining(ANTES) });
  for (const [id, esperado] of [
    [segundo, { usuario: null, bot: null }],
    [terceiro, { usuario: null, bot: null }],
    [empateB, { usuario: null, bot: null }],
  ] as const) {
    const l = await linha(id);
    expect(l).toMatchObject(esperado);
    expect(l.atualizado >= inicio).toBe(true);
  }

  // each identity taken from a robot is logged, with the robot that keeps it
  const retiradas = mockRegistros.filter((r) => r.nivel === 'warn').map((r) => r.args[0]);
  expect(retiradas).toEqual(
    expect.arrayContaining([
      expect.objectContaining({ robo_id: segundo, campo: 'suporte_usuario_id', identidade: '7', mantida_pelo_robo_id: primeiro }),
      expect.objectContaining({ robo_id: terceiro, campo: 'suporte_usuario_id', identidade: '7', mantida_pelo_robo_id: primeiro }),
      expect.objectContaining({ robo_id: terceiro, campo: 'suporte_bot_id', identidade: '8', mantida_pelo_robo_id: primeiro }),
      expect.objectContaining({ robo_id: empateB, campo: 'suporte_bot_id', identidade: '9', mantida_pelo_robo_id: empateA }),
    ]),
  );
  expect(retiradas).toHaveLength(4);

  // run again (a stop midway, a second start): nothing left to clear, nothing stamped again
  const ids = [segundo, primeiro, apagadoAntes, terceiro, botSete, empateB, empateA, sozinho];
  const depois = await Promise.all(ids.map(linha));
  await MIGRACOES_SALES[indice].up(bancoDoServico('sales').getQueryInterface());
  expect(await Promise.all(ids.map(linha))).toEqual(depois);
  expect(mockRegistros).toHaveLength(4);
});

test('afterwards a second live holder of an identity is refused; a deleted one is not', async () => {
  await expect(robo({ usuario: 7, criado: '2026-02-01 00:00:00.000' })).rejects.toMatchObject({ code: 'ER_DUP_ENTRY' });
  await expect(robo({ bot: 8, criado: '2026-02-01 00:00:00.000' })).rejects.toMatchObject({ code: 'ER_DUP_ENTRY' });
  await robo({ usuario: 7, bot: 8, criado: '2026-02-01 00:00:00.000', deletado: '2026-02-02 00:00:00.000' });
  // agent bot 8 is held; user 8 is another identity
  await robo({ usuario: 8, criado: '2026-02-01 00:00:00.000' });
});
