import { randomUUID } from 'node:crypto';
import { banco as bancoDoServico, migrar } from '../../lib/database';
import { MIGRACOES_HUB } from '../../models/hub/migracoes';
import { bancoAntesDaMigracao } from '../helpers/migracoes';

/**
 * Migration 0012 gives each event the type's name it was published under, which its attempts
 * carry from then on (docs/decisoes.md, "Delivery states"): events already stored get their
 * type's current name, the best known. Run again, it fills only the events still without one.
 */
const banco = bancoAntesDaMigracao('hub', MIGRACOES_HUB, '0012-hub-tipo-do-evento');
const { q, indice } = banco;

afterAll(() => banco.apagar());

async function tipo(publicador: string, nome: string) {
  const id = randomUUID();
  await q('INSERT INTO tipo_de_evento (id, nome, aplicativo_id, criado_em, atualizado_em) VALUES (?, ?, ?, NOW(3), NOW(3))', [id, nome, publicador]);
  return id;
}

async function evento(publicador: string, tipoId: string) {
  const id = randomUUID();
  await q("INSERT INTO evento (id, aplicativo_origem_id, tipo_de_evento_id, versao, dados, criado_em) VALUES (?, ?, ?, 1, '{}', NOW(3))", [id, publicador, tipoId]);
  return id;
}

const nomes = async (ids: string[]) =>
  (await q(`SELECT id, tipo FROM evento WHERE id IN (${ids.map(() => '?').join(', ')}) ORDER BY id`, ids)).map((e) => [e.id, e.tipo]);

test('events already stored get their type\'s current name; run again, only events still without one are filled', async () => {
  await banco.abrir();
  const publicador = randomUUID();
  await q('INSERT INTO aplicativo (id, identificador_no_auth, nome, criado_em, atualizado_em) VALUES (?, ?, ?, NOW(3), NOW(3))', [publicador, randomUUID(), 'Publicador']);
  const [criado, removido] = [await tipo(publicador, 'x.criado'), await tipo(publicador, 'x.removido')];
  const eventos = [await evento(publicador, criado), await evento(publicador, criado), await evento(publicador, removido)];

  expect(await migrar('hub', MIGRACOES_HUB.slice(0, indice + 1))).toEqual(['0012-hub-tipo-do-evento']);
  const esperado = [[eventos[0], 'x.criado'], [eventos[1], 'x.criado'], [eventos[2], 'x.removido']].sort((a, b) => (a[0] < b[0] ? -1 : 1));
  expect(await nomes(eventos)).toEqual(esperado);

  // the type renamed since, and one event left without a name (stored meanwhile by a process of
  // the earlier version): only that one takes the new name
  await q("UPDATE tipo_de_evento SET nome = 'x.novo' WHERE id = ?", [criado]);
  await q('UPDATE evento SET tipo = NULL WHERE id = ?', [eventos[0]]);
  await MIGRACOES_HUB[indice].up(bancoDoServico('hub').getQueryInterface());
  expect(await nomes(eventos)).toEqual(esperado.map(([id, nome]) => [id, id === eventos[0] ? 'x.novo' : nome]));
});
