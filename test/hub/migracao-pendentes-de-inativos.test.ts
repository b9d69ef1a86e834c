import { randomUUID } from 'node:crypto';
import { banco as bancoDoServico, migrar } from '../../lib/database';
import { MIGRACOES_HUB } from '../../models/hub/migracoes';
import { bancoAntesDaMigracao } from '../helpers/migracoes';

/**
 * Migration 0011 cancels the deliveries left pending for subscriptions whose subscriber was made
 * inactive before the sync cancelled them (docs/decisoes.md, "An inactive application"), as that
 * sync does: `cancelada`, no next attempt, stamped now. Deliveries of active subscribers, and
 * those no longer pending, stay as they were; run again, it changes nothing.
 */
const banco = bancoAntesDaMigracao('hub', MIGRACOES_HUB, '0011-hub-pendentes-de-inativos');
const { q, indice } = banco;

afterAll(() => banco.apagar());

const ANTES = '2026-01-02 03:04:05.678';
const PROXIMA = '2026-01-02 04:00:00.000';

async function aplicativo(ativo: boolean) {
  const id = randomUUID();
  await q('INSERT INTO aplicativo (id, identificador_no_auth, nome, ativo, criado_em, atualizado_em) VALUES (?, ?, ?, ?, NOW(3), NOW(3))', [
    id,
    randomUUID(),
    `App ${id}`,
    ativo ? 1 : 0,
  ]);
  return id;
}

async function assinatura(assinante: string, tipo: string, ativa = true) {
  const id = randomUUID();
  await q(
    `INSERT INTO assinatura (id, aplicativo_assinante_id, tipo_de_evento_id, versao_do_esquema, url_de_destino, ativa, criada_em, atualizada_em)
      VALUES (?, ?, ?, 1, 'https://a.test/w', ?, NOW(3), NOW(3))`,
    [id, assinante, tipo, ativa ? 1 : 0],
  );
  return id;
}

async function entrega(evento: string, assinaturaId: string, situacao: string) {
  const id = randomUUID();
  await q(
    `INSERT INTO entrega (id, evento_id, assinatura_id, situacao, tentativas, proxima_tentativa_em, ultimo_erro, criada_em, atualizada_em)
      VALUES (?, ?, ?, ?, 2, ?, 'HTTP 503', ?, ?)`,
    [id, evento, assinaturaId, situacao, situacao === 'pendente' ? PROXIMA : null, ANTES, ANTES],
  );
  return id;
}

const linha = async (id: string) =>
  (
    await q(
      `SELECT situacao, tentativas, ultimo_erro, DATE_FORMAT(proxima_tentativa_em, '%Y-%m-%d %H:%i:%s.%f') AS proxima,
         DATE_FORMAT(atualizada_em, '%Y-%m-%d %H:%i:%s.%f') AS atualizada FROM entrega WHERE id = ?`,
      [id],
    )
  )[0];

test('pending deliveries of an inactive subscriber are cancelled as its sync would have; the others, and the rest of its deliveries, stay', async () => {
  await banco.abrir();
  const [publicador, inativo, ativo] = [await aplicativo(true), await aplicativo(false), await aplicativo(true)];
  const tipo = randomUUID();
  await q("INSERT INTO tipo_de_evento (id, nome, aplicativo_id, criado_em, atualizado_em) VALUES (?, 'x.criado', ?, NOW(3), NOW(3))", [tipo, publicador]);
  const tipo2 = randomUUID();
  await q("INSERT INTO tipo_de_evento (id, nome, aplicativo_id, criado_em, atualizado_em) VALUES (?, 'x.mudado', ?, NOW(3), NOW(3))", [tipo2, publicador]);
  const evento = randomUUID();
  await q("INSERT INTO evento (id, aplicativo_origem_id, tipo_de_evento_id, versao, dados, criado_em) VALUES (?, ?, ?, 1, '{}', NOW(3))", [evento, publicador, tipo]);
  const doInativo = await assinatura(inativo, tipo);
  // its own `ativa` plays no part: the subscriber's state does
  const doInativoParada = await assinatura(inativo, tipo2, false);
  const doAtivo = await assinatura(ativo, tipo);

  const canceladas = [await entrega(evento, doInativo, 'pendente'), await entrega(evento, doInativo, 'pendente'), await entrega(evento, doInativoParada, 'pendente')];
  const ficam = [
    await entrega(evento, doInativo, 'fila_de_erro'),
    await entrega(evento, doInativo, 'entregue'),
    await entrega(evento, doInativo, 'cancelada'),
    await entrega(evento, doAtivo, 'pendente'),
  ];
  const comoEstavam = await Promise.all(ficam.map(linha));

  // stamped now, in UTC as every date of the hub's
  const inicio = new Date().toISOString().replace('T', ' ').slice(0, 19);
  expect(await migrar('hub', MIGRACOES_HUB.slice(0, indice + 1))).toEqual(['0011-hub-pendentes-de-inativos']);

  for (const id of canceladas) {
    const e = await linha(id);
    expect(e).toMatchObject({ situacao: 'cancelada', proxima: null, tentativas: 2, ultimo_erro: 'HTTP 503' });
    expect(e.atualizada >= inicio).toBe(true);
  }
  expect(await Promise.all(ficam.map(linha))).toEqual(comoEstavam);

  // run again (a stop midway, a second start): nothing left to change, nothing stamped again
  const depois = await Promise.all([...canceladas, ...ficam].map(linha));
  await MIGRACOES_HUB[indice].up(bancoDoServico('hub').getQueryInterface());
  expect(await Promise.all([...canceladas, ...ficam].map(linha))).toEqual(depois);
});

test('a subscriber made active again before its turn keeps its pending deliveries', async () => {
  const publicador = await aplicativo(true);
  const voltou = await aplicativo(false);
  const tipo = randomUUID();
  await q("INSERT INTO tipo_de_evento (id, nome, aplicativo_id, criado_em, atualizado_em) VALUES (?, 'y.criado', ?, NOW(3), NOW(3))", [tipo, publicador]);
  const evento = randomUUID();
  await q("INSERT INTO evento (id, aplicativo_origem_id, tipo_de_evento_id, versao, dados, criado_em) VALUES (?, ?, ?, 1, '{}', NOW(3))", [evento, publicador, tipo]);
  const pendente = await entrega(evento, await assinatura(voltou, tipo), 'pendente');
  const antes = await linha(pendente);

  // the migration reads the inactive ones first, then each under its lock: back meanwhile, as a
  // sync would leave it, it is skipped
  const s = bancoDoServico('hub');
  const consultar = s.query.bind(s);
  const espiao = jest.spyOn(s, 'query').mockImplementation((async (sql: unknown, opcoes?: unknown) => {
    const r = await consultar(sql as string, opcoes as never);
    if (typeof sql === 'string' && sql.startsWith('SELECT id FROM aplicativo WHERE ativo = 0')) {
      await q('UPDATE aplicativo SET ativo = 1 WHERE id = ?', [voltou]);
    }
    return r;
  }) as typeof s.query);
  try {
    await MIGRACOES_HUB[indice].up(s.getQueryInterface());
  } finally {
    espiao.mockRestore();
  }
  expect(await linha(pendente)).toEqual(antes);
});
