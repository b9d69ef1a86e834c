import { randomUUID } from 'node:crypto';
import { banco as bancoDoServico, migrar } from '../../lib/database';
import { MIGRACOES_IDENTITY } from '../../models/identity/migracoes';
import { bancoAntesDaMigracao } from '../helpers/migracoes';
import type { Registro } from '../helpers/registros';

const mockRegistros: Registro[] = [];
jest.mock('../../lib/logger', () => jest.requireActual('../helpers/registros').loggerQueRegistra('migracoes', ['warn'], () => mockRegistros));

/**
 * Migration 0008 composes (NFC) the addresses stored decomposed, as the routes now keep them, so a
 * login typed either way finds its user; one whose composed form a live user already holds (two
 * accounts of one mailbox) is logged and left. Run again, it changes nothing.
 */
const banco = bancoAntesDaMigracao('identity', MIGRACOES_IDENTITY, '0008-identity-emails-nfc');
const { q, indice } = banco;

afterAll(() => banco.apagar());

async function usuario(email: string, deletado = false) {
  const id = randomUUID();
  await q(
    `INSERT INTO usuario (id, nome, email, perfil, criado_em, atualizado_em, deletado_em) VALUES (?, 'Pessoa', ?, 'cliente', NOW(3), NOW(3), ?)`,
    [id, email, deletado ? new Date() : null],
  );
  return id;
}
const email = async (id: string) => (await q('SELECT email FROM usuario WHERE id = ?', [id]))[0].email as string;

test('decomposed addresses are composed, unless a live user holds the composed one; the others stay', async () => {
  await banco.abrir();
  const decomposto = await usuario('jose\u0301@suite.test');
  const composto = await usuario('mari\u0301a@suite.test'.normalize('NFC'));
  const emConflito = await usuario('mari\u0301a@suite.test');
  const apagado = await usuario('conceic\u0327a\u0303o@suite.test', true);
  const simples = await usuario('pessoa@suite.test');

  expect(await migrar('identity', MIGRACOES_IDENTITY.slice(0, indice + 1))).toEqual(['0008-identity-emails-nfc']);

  expect(await email(decomposto)).toBe('jos\u00e9@suite.test');
  expect(await email(apagado)).toBe('concei\u00e7\u00e3o@suite.test');
  expect(await email(composto)).toBe('mar\u00eda@suite.test'.normalize('NFC'));
  expect(await email(emConflito)).toBe('mari\u0301a@suite.test');
  expect(await email(simples)).toBe('pessoa@suite.test');
  expect(mockRegistros.filter((r) => r.nivel === 'warn').map((r) => r.args[0])).toEqual([expect.objectContaining({ usuario_id: emConflito })]);

  const depois = await Promise.all([decomposto, composto, emConflito, apagado, simples].map(email));
  await MIGRACOES_IDENTITY[indice].up(bancoDoServico('identity').getQueryInterface());
  expect(await Promise.all([decomposto, composto, emConflito, apagado, simples].map(email))).toEqual(depois);
});
