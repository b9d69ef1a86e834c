import { randomUUID } from 'node:crypto';
import { lerContagens } from '../../lib/contagem';
import { banco as bancoDoServico, migrar } from '../../lib/database';
import { MIGRACOES_HUB } from '../../models/hub/migracoes';
import { bancoAntesDaMigracao } from '../helpers/migracoes';

/**
 * Migration 0015 counts each subscription's error queue once, then keeps the count by triggers:
 * the deliveries already there are counted, a delta logged before the count is not counted twice,
 * and run again it builds the same counts.
 */
const banco = bancoAntesDaMigracao('hub', MIGRACOES_HUB, '0015-hub-fila-de-erro-contada');
const { q, indice } = banco;

afterAll(() => banco.apagar());

/** A subscription (with its subscriber and type), deleted when asked: deleted ones keep their history. */
async function assinatura(deletada = false): Promise<string> {
  const [aplicativo, tipo, id] = [randomUUID(), randomUUID(), randomUUID()];
  await q('INSERT INTO aplicativo (id, identificador_no_auth, nome, criado_em, atualizado_em) VALUES (?, ?, ?, NOW(3), NOW(3))', [aplicativo, aplicativo, 'App']);
  await q('INSERT INTO tipo_de_evento (id, nome, aplicativo_id, criado_em, atualizado_em) VALUES (?, ?, ?, NOW(3), NOW(3))', [tipo, `t.${tipo}`, aplicativo]);
  await q(
    `INSERT INTO assinatura (id, aplicativo_assinante_id, tipo_de_evento_id, versao_do_esquema, url_de_destino, criada_em, atualizada_em, deletada_em)
     VALUES (?, ?, ?, 1, 'https://assinante.test/', NOW(3), NOW(3), ?)`,
    [id, aplicativo, tipo, deletada ? new Date() : null],
  );
  return id;
}

async function entregas(assinaturaId: string, situacao: string, quantas: number): Promise<string[]> {
  const ids = Array.from({ length: quantas }, () => randomUUID());
  for (const id of ids) {
    await q('INSERT INTO entrega (id, evento_id, assinatura_id, situacao, criada_em, atualizada_em) VALUES (?, ?, ?, ?, NOW(3), NOW(3))', [
      id,
      randomUUID(),
      assinaturaId,
      situacao,
    ]);
  }
  return ids;
}

const contagens = async () =>
  Object.fromEntries(
    await lerContagens({ banco: bancoDoServico('hub'), base: 'fila_de_erro_contagem', deltas: 'fila_de_erro_contagem_delta', chave: 'assinatura_id' }),
  );

test('the error queues already stored are counted; the triggers keep the counts from then on; run again, the same counts', async () => {
  await banco.abrir();
  const [a, b, semFalhas] = [await assinatura(), await assinatura(true), await assinatura()];
  const naFilaDeA = await entregas(a, 'fila_de_erro', 3);
  await entregas(a, 'entregue', 2);
  await entregas(b, 'fila_de_erro', 1);
  await entregas(semFalhas, 'pendente', 2);

  expect(await migrar('hub', MIGRACOES_HUB.slice(0, indice + 1))).toEqual(['0015-hub-fila-de-erro-contada']);
  expect(await contagens()).toEqual({ [a]: 3, [b]: 1, [semFalhas]: 0 });
  expect(await q('SELECT * FROM fila_de_erro_contagem_delta')).toEqual([]);

  // from now on the triggers log each change: one out of the queue, one purged, one new in it
  await q("UPDATE entrega SET situacao = 'pendente' WHERE id = ?", [naFilaDeA[0]]);
  await q('DELETE FROM entrega WHERE id = ?', [naFilaDeA[1]]);
  await q("UPDATE entrega SET situacao = 'fila_de_erro' WHERE assinatura_id = ? AND situacao = 'pendente' LIMIT 1", [semFalhas]);
  expect(await contagens()).toEqual({ [a]: 1, [b]: 1, [semFalhas]: 1 });

  // run again (a stop midway, say) with deltas logged: counted from the deliveries once, the deltas
  // it saw dropped, so nothing counts twice
  await MIGRACOES_HUB[indice].up(bancoDoServico('hub').getQueryInterface());
  expect(await contagens()).toEqual({ [a]: 1, [b]: 1, [semFalhas]: 1 });
  expect(await q('SELECT * FROM fila_de_erro_contagem_delta')).toEqual([]);
});

test('a delivery entering the error queue while the migration counts is counted once: after its snapshot, by its delta', async () => {
  const id = await assinatura();
  const [antes, durante] = await entregas(id, 'pendente', 2);
  await q("UPDATE entrega SET situacao = 'fila_de_erro' WHERE id = ?", [antes]);
  const sequelize = bancoDoServico('hub');
  const consulta = sequelize.query.bind(sequelize);
  // a worker of the previous release commits between the migration's count and its reading of the deltas
  const espiao = jest.spyOn(sequelize, 'query').mockImplementation((async (sql: string, opcoes?: object) => {
    const resposta = await consulta(sql, opcoes);
    if (sql.includes('COUNT(*) FROM entrega')) await q("UPDATE entrega SET situacao = 'fila_de_erro' WHERE id = ?", [durante]);
    return resposta;
  }) as typeof sequelize.query);
  try {
    await MIGRACOES_HUB[indice].up(sequelize.getQueryInterface());
  } finally {
    espiao.mockRestore();
  }
  expect((await contagens())[id]).toBe(2);
  expect(await q('SELECT assinatura_id, delta FROM fila_de_erro_contagem_delta')).toEqual([{ assinatura_id: id, delta: 1 }]);
});
