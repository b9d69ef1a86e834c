import http from 'node:http';
import { AddressInfo } from 'node:net';
import { tentarEntrega } from '../../api/hub/entregas';
import { config } from '../../config';
import { novaConexao } from '../../lib/database';
import { redis } from '../../lib/redis';
import { iniciarWorkers } from '../../lib/runner';
import { Entrega, Evento } from '../../models/hub';
import { fila } from '../../queues/fila';
import { atrasoDoJob, FalhaDeTentativa, filaHubEntrega } from '../../queues/hub-entrega';
import { esperarOutraConexao } from '../helpers/espera';
import { dormir, esperarAte, hubNesteArquivo } from './apoio-entregas';
import { reconectarProdutor } from '../helpers/redis';

/**
 * Two requests of the hub at once, each held midway by a lock another connection of the test
 * takes, so they interleave as they can in production.
 */

const t = hubNesteArquivo({ entregas: false });

beforeEach(() => fila(filaHubEntrega).drain(true));

// DESIGN §5: 202 once stored and queued; a repeat of the id gets 503 again while Redis refuses
test('two publications of one id at once while Redis refuses the batch job: neither answers 202', async () => {
  const c = await t.hub.cenario({ url_de_destino: t.receptor.url('/revisao-repetida') });
  await fila(filaHubEntrega).drain(true);
  const publicar = () => t.hub.publicar(c.publicador, { tipo: c.tipo.nome, dados: { n: 1 }, id: 'mesmo-id' });

  // the subscription held: both publications pass their lookup of the id (none yet) and wait in the write
  const conexao = await novaConexao('hub');
  const produtor = redis('produtor');
  let respostas;
  try {
    await conexao.beginTransaction();
    await conexao.query('SELECT id FROM assinatura WHERE id = ? FOR UPDATE', [c.assinatura.id]);
    const a = publicar();
    const b = publicar();
    await esperarOutraConexao(conexao, 'a publication waiting on the subscription', ['%INSERT INTO entrega%']);
    await dormir(300);
    // Redis goes away before the write commits
    produtor.disconnect();
    await conexao.commit();
    respostas = await Promise.all([a, b]);
  } finally {
    await conexao.end();
    await reconectarProdutor();
  }
  const [evento] = await Evento.findAll({ where: { tipo_de_evento_id: c.tipo.id } });
  const pendentes = await Entrega.count({ where: { evento_id: evento.id, situacao: 'pendente' } });
  const job = await fila(filaHubEntrega).getJob(evento.lote!);
  expect({ status: respostas.map((r) => r.status).sort(), pendentes, loteNaFila: Boolean(job) }).toEqual({
    status: [503, 503],
    pendentes: 1,
    loteNaFila: false,
  });
});

// another hub process stores the same publisher's `id` while this one's batch writes it: the batch
// fails on the unique key, each publication goes alone, the repeat gets the other's answer
test("an id another process stores while this process's batch writes it: that publication answers the other's event, the batch's others are stored all the same", async () => {
  const c = await t.hub.cenario({ url_de_destino: t.receptor.url('/outro-processo') });
  const base = await t.hub.publicar(c.publicador, { tipo: c.tipo.nome, dados: { n: 0 } });
  expect(base.status).toBe(202);
  const conexao = await novaConexao('hub');
  let respostas;
  let daOutra: string;
  try {
    // the other process's row, not yet committed: this process's lookup of the id finds nothing,
    // and its batch's insert of the same key waits for it
    await conexao.beginTransaction();
    await conexao.query('CREATE TEMPORARY TABLE outra AS SELECT * FROM evento WHERE id = ?', [base.body.id]);
    daOutra = base.body.id.replace(/^.{8}/, 'ffffffff');
    await conexao.query("UPDATE outra SET id = ?, id_do_publicador = 'do-outro-processo'", [daOutra]);
    await conexao.query('INSERT INTO evento SELECT * FROM outra');
    const publicacoes = [
      t.hub.publicar(c.publicador, { tipo: c.tipo.nome, dados: { n: 1 }, id: 'do-outro-processo' }),
      t.hub.publicar(c.publicador, { tipo: c.tipo.nome, dados: { n: 2 }, id: 'so-deste' }),
      t.hub.publicar(c.publicador, { tipo: c.tipo.nome, dados: { n: 3 } }),
    ];
    // the batch's insert under way (it comes after the publications' lookups of the id, which found
    // nothing), held by the uncommitted row's lock until the commit below
    await esperarOutraConexao(conexao, "a batch waiting on the other process's key", ['%INSERT INTO evento%']);
    await conexao.commit();
    respostas = await Promise.all(publicacoes);
  } finally {
    await conexao.end();
  }
  expect(respostas.map((r) => r.status)).toEqual([202, 202, 202]);
  expect(respostas[0].body.id).toBe(daOutra);
  const deste = await Evento.findAll({ where: { tipo_de_evento_id: c.tipo.id }, attributes: ['id', 'id_do_publicador'] });
  expect(deste.map((e) => e.id).sort()).toEqual([base.body.id, daOutra, respostas[1].body.id, respostas[2].body.id].sort());
  expect(await Entrega.count({ where: { evento_id: [respostas[1].body.id, respostas[2].body.id] } })).toBe(2);
});

// replays of different deliveries of one subscription are independent: each keeps the last
// success in the subscription's row, and none may fail on the others' locks
test('replays of delivered deliveries of one subscription, all at once, all answer 202', async () => {
  const c = await t.hub.cenario({ url_de_destino: t.receptor.url('/reenvios-juntos') });
  const ids: string[] = [];
  for (let i = 0; i < 12; i++) ids.push((await c.publicar({ n: i })).id);
  await fila(filaHubEntrega).drain(true);
  const entregas = await Entrega.findAll({ where: { evento_id: ids } });
  for (const [i, e] of entregas.entries()) {
    await Entrega.update({ situacao: 'entregue', tentativas: 1, entregue_em: new Date(Date.now() - 60_000 + i * 1000), proxima_tentativa_em: null }, { where: { id: e.id } });
  }
  const token = await t.hub.admin();
  const respostas = await Promise.all(entregas.map((e) => t.hub.api.post(`/entrega/${e.id}/reenviar`, { token })));
  expect(respostas.map((r) => r.status)).toEqual(entregas.map(() => 202));
});

// a job run twice (its lock lost to a stalled worker) meets a replay's new round: its late failure
// must not count against that round
test('a failed attempt that ends after a replay started a new round leaves the new round alone', async () => {
  let chegou: (() => void) | undefined;
  const lento = http.createServer((req, res) => {
    req.resume();
    chegou?.();
    setTimeout(() => res.writeHead(500).end(), 600);
  });
  await new Promise<void>((r) => lento.listen(0, '127.0.0.1', r));
  try {
    const c = await t.hub.cenario({ url_de_destino: `http://127.0.0.1:${(lento.address() as AddressInfo).port}/lento`, maximo_de_tentativas: 2 });
    const { id } = await c.publicar();
    await fila(filaHubEntrega).drain(true);
    const entrega = (await Entrega.findOne({ where: { evento_id: id } }))!;
    // its last attempt due
    await Entrega.update({ tentativas: 1, proxima_tentativa_em: new Date() }, { where: { id: entrega.id } });
    const chegada = new Promise<void>((r) => (chegou = r));
    const tentativa = tentarEntrega(entrega.id).catch((err) => err);
    // the attempt has read the delivery and its request is at the subscriber
    await chegada;
    // meanwhile a replay starts a new round
    await Entrega.update({ tentativas: 0, ultimo_erro: null }, { where: { id: entrega.id } });
    await tentativa;
    expect(await Entrega.findByPk(entrega.id)).toMatchObject({ situacao: 'pendente', tentativas: 0 });
  } finally {
    await new Promise((r) => lento.close(r));
  }
});

// the request went out and failed, and the database took no record of it: as any other error it
// would run again within a second or two, calling the failing subscriber over and over unrecorded
test('a failed attempt the database could not record is retried on the schedule, not within seconds', async () => {
  const conexao = await novaConexao('hub');
  const falho = http.createServer((req, res) => {
    req.resume();
    // the attempts' table away while the attempt is in flight
    void conexao.query('RENAME TABLE tentativa_de_entrega TO tentativa_de_entrega_fora').then(() => res.writeHead(500).end());
  });
  await new Promise<void>((r) => falho.listen(0, '127.0.0.1', r));
  try {
    const c = await t.hub.cenario({ url_de_destino: `http://127.0.0.1:${(falho.address() as AddressInfo).port}/falho`, maximo_de_tentativas: 5 });
    const { id } = await c.publicar();
    await fila(filaHubEntrega).drain(true);
    const entrega = (await Entrega.findOne({ where: { evento_id: id } }))!;
    const erro = await tentarEntrega(entrega.id).catch((err) => err);
    expect(erro).toBeInstanceOf(FalhaDeTentativa);
    // the schedule's first delay (5 s, ±20%), not the 1 s after an error before any attempt
    expect(atrasoDoJob(1, undefined, erro)).toBeGreaterThanOrEqual(0.8 * config().hub.retryScheduleMs[0]);
    expect(await Entrega.findByPk(entrega.id)).toMatchObject({ situacao: 'pendente', tentativas: 0 });
  } finally {
    await conexao.query('RENAME TABLE tentativa_de_entrega_fora TO tentativa_de_entrega').catch(() => undefined);
    await conexao.end();
    await new Promise((r) => falho.close(r));
  }
});

// SPEC §3 and §6 rule 6: a deactivation leaves no pending delivery, which a reactivation would send.
// Runs last: it starts the delivery worker.
test('a replay of one delivery racing a deactivation never leaves it pending on the inactive subscription, and a reactivation does not send it', async () => {
  const c = await t.hub.cenario({ url_de_destino: t.receptor.url('/revisao-reenvio'), maximo_de_tentativas: 1 });
  const { id: eventoId } = await c.publicar({ n: 1 });
  await fila(filaHubEntrega).drain(true);
  const entrega = (await Entrega.findOne({ where: { evento_id: eventoId } }))!;
  await Entrega.update({ situacao: 'fila_de_erro', tentativas: 1, proxima_tentativa_em: null, ultimo_erro: 'HTTP 500' }, { where: { id: entrega.id } });
  const token = await t.hub.admin();

  // hold the delivery row: the replay, past its check of the subscription, waits on the row lock
  const conexao = await novaConexao('hub');
  const bloqueada = async (padrao: string) => {
    const [l] = await conexao.query(
      `SELECT COUNT(*) AS n FROM information_schema.PROCESSLIST WHERE DB = DATABASE() AND ID <> CONNECTION_ID() AND INFO LIKE ?`,
      [padrao],
    );
    return Number((l as { n: number }[])[0].n) > 0;
  };
  let reenvio, desativacao;
  try {
    await conexao.beginTransaction();
    await conexao.query('SELECT id FROM entrega WHERE id = ? FOR UPDATE', [entrega.id]);
    reenvio = t.hub.api.post(`/entrega/${entrega.id}/reenviar`, { token });
    await esperarAte(() => bloqueada('%FROM `entrega`%FOR UPDATE%'), 'the replay waiting on the delivery');
    // the deactivation, meanwhile: it answers, or waits for the replay (either order is fine)
    let respondeu = false;
    desativacao = t.hub.api.patch(`/assinatura/${c.assinatura.id}`, { token, body: { ativa: false } }).then((r) => ((respondeu = true), r));
    await esperarAte(async () => respondeu || (await bloqueada('%FROM `assinatura`%FOR UPDATE%')), 'the deactivation answered or waiting');
    await dormir(100);
    await conexao.commit();
  } finally {
    await conexao.end();
  }
  const [r1, r2] = await Promise.all([reenvio!, desativacao!]);
  expect([r1.status, r2.status]).toEqual([202, 200]);
  // both answered: the subscription is inactive, so none of its deliveries may be pending
  const logoApos = (await Entrega.findByPk(entrega.id))!.situacao;

  // reactivated, and the delivery worker runs whatever is queued
  expect((await t.hub.api.patch(`/assinatura/${c.assinatura.id}`, { token, body: { ativa: true } })).status).toBe(200);
  await iniciarWorkers(['hub-entrega']);
  await esperarAte(async () => !(await fila(filaHubEntrega).getJob(entrega.id)), 'the replay job done');
  await dormir(300);
  expect({ logoApos, chamadas: t.receptor.de(entrega.id).length }).toEqual({ logoApos: 'cancelada', chamadas: 0 });
});
