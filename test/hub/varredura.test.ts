import { randomUUID } from 'node:crypto';
import { Job } from 'bullmq';
import { Op } from 'sequelize';
import { reenfileirarEsquecidas } from '../../api/hub/entregas';
import { processarHubRetencao } from '../../jobs/hub-retencao';
import { banco, dataSql, nomeDaTrava, novaConexao } from '../../lib/database';
import { Entrega, Evento } from '../../models/hub';
import { fila, iniciarWorker } from '../../queues/fila';
import { filaHubEntrega } from '../../queues/hub-entrega';
import { filaHubRetencao } from '../../queues/hub-retencao';
import { esperarOutraConexao } from '../helpers/espera';
import { esperarAte, hubNesteArquivo } from './apoio-entregas';

/**
 * The sweep (`hub-retencao`, job `varrer`, every minute): a pending delivery whose job is gone
 * (Redis lost it) goes back to the delivery queue, with a job of its own, once its next attempt is
 * over two minutes late and no batch job still queued can hold it; the most overdue first, a bounded number per run. No delivery worker runs
 * here, so the queue's content can be read after each sweep.
 */

const t = hubNesteArquivo({ entregas: false });

/** Publishes one event to `n` subscriptions and loses its batch job: `n` pending deliveries with no job. */
async function entregasSemJob(n: number): Promise<string[]> {
  const c = await t.hub.cenario({ url_de_destino: t.receptor.url('/a') });
  for (let i = 1; i < n; i++) await t.hub.assinar(await t.hub.aplicativo(), c.tipo.id, { url_de_destino: t.receptor.url(`/b${i}`) });
  const { id } = await c.publicar({ n: 1 });
  await fila(filaHubEntrega).drain();
  return (await Entrega.findAll({ where: { evento_id: id }, order: [['id', 'ASC']], attributes: ['id'] })).map((e) => e.id);
}

/** Moves a delivery's creation and next attempt `minutos` into the past, untouched since (as published). */
const atrasar = (id: string, minutos: number) => {
  const antes = new Date(Date.now() - minutos * 60_000);
  return Entrega.update({ criada_em: antes, atualizada_em: antes, proxima_tentativa_em: antes }, { where: { id }, silent: true });
};

const jobsDeEntrega = async () => ((await fila(filaHubEntrega).getJobs(['waiting', 'delayed'])) as Job<{ id: string }>[]).map((j) => j.id).sort();

beforeEach(async () => {
  await fila(filaHubEntrega).drain(true);
  // earlier tests' deliveries are no longer candidates
  await Entrega.update({ situacao: 'cancelada', proxima_tentativa_em: null }, { where: { situacao: 'pendente', id: { [Op.ne]: '' } } });
});

test('a pending delivery over two minutes late with no job goes back to the queue with its own id as job id; a recent one waits', async () => {
  const [atrasada, recente] = await entregasSemJob(2);
  await atrasar(atrasada, 3);
  await Entrega.update({ proxima_tentativa_em: new Date(Date.now() - 30_000) }, { where: { id: recente } });

  expect(await processarHubRetencao({ name: 'varrer' } as Job)).toEqual({ reenfileiradas: 1 });
  expect(await jobsDeEntrega()).toEqual([atrasada]);
  expect((await fila(filaHubEntrega).getJob(atrasada))?.data).toEqual({ id: atrasada });
});

test('delivered, cancelled and error-queue deliveries are never swept, however old', async () => {
  const [entregue, cancelada, naFilaDeErro] = await entregasSemJob(3);
  for (const id of [entregue, cancelada, naFilaDeErro]) await atrasar(id, 60);
  await Entrega.update({ situacao: 'entregue', entregue_em: new Date() }, { where: { id: entregue } });
  await Entrega.update({ situacao: 'cancelada' }, { where: { id: cancelada } });
  await Entrega.update({ situacao: 'fila_de_erro' }, { where: { id: naFilaDeErro } });

  expect(await reenfileirarEsquecidas()).toBe(0);
  expect(await jobsDeEntrega()).toEqual([]);
});

test('a never-tried delivery whose batch job is still queued (a backlog of over two minutes) is left to it; a tried one, or one whose batch is gone, is swept', async () => {
  const c = await t.hub.cenario({ url_de_destino: t.receptor.url('/lote') });
  await t.hub.assinar(await t.hub.aplicativo(), c.tipo.id, { url_de_destino: t.receptor.url('/lote2') });
  const { id } = await c.publicar({ n: 1 });
  const [noLote, tentada] = (await Entrega.findAll({ where: { evento_id: id }, order: [['id', 'ASC']], attributes: ['id'] })).map((e) => e.id);
  await atrasar(noLote, 5);
  await atrasar(tentada, 5);
  await Entrega.update({ tentativas: 1 }, { where: { id: tentada }, silent: true });

  expect(await reenfileirarEsquecidas()).toBe(1);
  expect(await jobsDeEntrega()).toEqual([`lote-${id}`, tentada].sort());

  // the batch lost (Redis lost it, or it failed for good): nothing holds the delivery any more
  await fila(filaHubEntrega).drain(true);
  expect(await reenfileirarEsquecidas()).toBe(1);
  expect(await jobsDeEntrega()).toEqual([noLote]);
});

test('deliveries a queued batch still holds do not use up the run: a forgotten one behind them is still reached', async () => {
  const c = await t.hub.cenario({ url_de_destino: t.receptor.url('/fila-longa') });
  for (let i = 0; i < 2; i++) await t.hub.assinar(await t.hub.aplicativo(), c.tipo.id, { url_de_destino: t.receptor.url(`/fila-longa${i}`) });
  const { id } = await c.publicar({ n: 1 });
  const doLote = (await Entrega.findAll({ where: { evento_id: id }, attributes: ['id'] })).map((e) => e.id);
  for (const entrega of doLote) await atrasar(entrega, 20);
  // a retry whose job Redis lost, less overdue than the batch's three
  const [esquecida] = await entregasSemJob(1);
  await atrasar(esquecida, 10);
  await Entrega.update({ tentativas: 1 }, { where: { id: esquecida }, silent: true });
  await fila(filaHubEntrega).add('entregar-lote', { entregas: doLote }, { jobId: `lote-${id}` });

  expect(await reenfileirarEsquecidas(2)).toBe(1);
  expect((await jobsDeEntrega()).filter((j) => j !== `lote-${id}`)).toEqual([esquecida]);
});

test('over the limit, the most overdue go first; the next run takes the rest, not the same ones again while their jobs wait', async () => {
  const ids = await entregasSemJob(3);
  const [nova, media, velha] = ids;
  await atrasar(nova, 3);
  await atrasar(media, 10);
  await atrasar(velha, 20);

  expect(await reenfileirarEsquecidas(2)).toBe(2);
  expect(await jobsDeEntrega()).toEqual([media, velha].sort());

  expect(await reenfileirarEsquecidas(2)).toBe(1);
  expect(await jobsDeEntrega()).toEqual([...ids].sort());
  expect(await reenfileirarEsquecidas(2)).toBe(0);
});

/**
 * `n` more untried deliveries of the event `eventoId` (its batch's, as published), `minutos` late:
 * rows written straight to the table, a backlog without a subscription each.
 */
async function atrasadasDoLote(eventoId: string, n: number, minutos: number): Promise<string[]> {
  const modelo = (await Entrega.findOne({ where: { evento_id: eventoId } }))!;
  const antes = dataSql(new Date(Date.now() - minutos * 60_000));
  const ids = Array.from({ length: n }, () => randomUUID());
  await banco('hub').query(
    'INSERT INTO entrega (id, evento_id, assinatura_id, situacao, tentativas, proxima_tentativa_em, criada_em, atualizada_em) VALUES ?',
    { replacements: [ids.map((id) => [id, eventoId, modelo.assinatura_id, 'pendente', 0, antes, antes, antes])] },
  );
  return ids;
}

test('a backlog longer than one run reads does not hide a forgotten delivery behind it: each run goes on from where the last stopped', async () => {
  const c = await t.hub.cenario({ url_de_destino: t.receptor.url('/acumulo') });
  // its batch job stays queued (no worker here): 31 deliveries it holds, 20 minutes late
  const { id } = await c.publicar({ n: 1 });
  const [publicada] = (await Entrega.findAll({ where: { evento_id: id }, attributes: ['id'] })).map((e) => e.id);
  await atrasar(publicada, 20);
  await atrasadasDoLote(id, 30, 20);
  // a retry whose job Redis lost, less overdue than all of them
  const [esquecida] = await atrasadasDoLote(id, 1, 10);
  await Entrega.update({ tentativas: 1 }, { where: { id: esquecida }, silent: true });

  // a run with limite 2 reads 20 late deliveries: the first one passes over the backlog's first 20
  expect(await reenfileirarEsquecidas(2)).toBe(0);
  expect(await reenfileirarEsquecidas(2)).toBe(1);
  expect(await jobsDeEntrega()).toEqual([esquecida, `lote-${id}`].sort());
});

test('the deliveries a run passed over are read again on its next round: a batch lost since leaves all of them to the sweep', async () => {
  const c = await t.hub.cenario({ url_de_destino: t.receptor.url('/acumulo-perdido') });
  const { id } = await c.publicar({ n: 1 });
  const [publicada] = (await Entrega.findAll({ where: { evento_id: id }, attributes: ['id'] })).map((e) => e.id);
  await atrasar(publicada, 20);
  const doLote = [publicada, ...(await atrasadasDoLote(id, 24, 20))];
  expect(await reenfileirarEsquecidas(2)).toBe(0);

  // the batch lost: this run starts where the last stopped and comes round to the first ones
  await fila(filaHubEntrega).drain(true);
  expect(await reenfileirarEsquecidas(100)).toBe(25);
  expect(await jobsDeEntrega()).toEqual([...doLote].sort());
});

test('a swept delivery whose job is lost again is swept again once two more minutes pass', async () => {
  const [id] = await entregasSemJob(1);
  await atrasar(id, 5);
  expect(await reenfileirarEsquecidas()).toBe(1);
  await fila(filaHubEntrega).drain(true);
  expect(await reenfileirarEsquecidas()).toBe(0);
  await Entrega.update({ proxima_tentativa_em: new Date(Date.now() - 121_000) }, { where: { id } });
  expect(await reenfileirarEsquecidas()).toBe(1);
  expect(await jobsDeEntrega()).toEqual([id]);
});

test('an attempt that fails while the sweep runs keeps the next time it set: the sweep moves only deliveries still late', async () => {
  const [id] = await entregasSemJob(1);
  await atrasar(id, 5);
  const conexao = await novaConexao('hub');
  const depois = new Date(Date.now() + 5 * 3_600_000);
  try {
    await conexao.beginTransaction();
    await conexao.query('SELECT id FROM entrega WHERE id = ? FOR UPDATE', [id]);
    // the sweep has read it as late and waits on its row, where a failed attempt is recording its next time
    const varredura = reenfileirarEsquecidas();
    await esperarOutraConexao(conexao, 'the sweep waiting on the delivery', ['UPDATE entrega FORCE INDEX (PRIMARY) SET proxima_tentativa_em%']);
    await conexao.query('UPDATE entrega SET tentativas = 1, proxima_tentativa_em = ? WHERE id = ?', [depois, id]);
    await conexao.commit();
    await varredura;
  } finally {
    await conexao.end();
  }
  expect((await Entrega.findByPk(id))!.proxima_tentativa_em).toEqual(depois);
});

test('a batch queued again (a repeated publication) between the sweep\'s read and its write: the delivery is left to that batch this run, marked touched, and the next run gives it its own job', async () => {
  const [id] = await entregasSemJob(1);
  await atrasar(id, 5);
  const { lote } = (await Evento.findByPk((await Entrega.findByPk(id))!.evento_id))!;
  const conexao = await novaConexao('hub');
  try {
    await conexao.beginTransaction();
    await conexao.query('SELECT id FROM entrega WHERE id = ? FOR UPDATE', [id]);
    // the sweep found its batch gone and waits on its row; the batch comes back meanwhile
    const varredura = reenfileirarEsquecidas();
    await esperarOutraConexao(conexao, 'the sweep waiting on the delivery', ['UPDATE entrega FORCE INDEX (PRIMARY) SET proxima_tentativa_em%']);
    await fila(filaHubEntrega).add('entregar-lote', { entregas: [id] }, { jobId: lote! });
    await conexao.commit();
    expect(await varredura).toBe(0);
  } finally {
    await conexao.end();
  }
  expect(await jobsDeEntrega()).toEqual([lote]);
  // touched: the batch leaves it to a job of its own, which the sweep gives once it is late again
  const tocada = (await Entrega.findByPk(id))!;
  expect(tocada.atualizada_em.getTime()).not.toBe(tocada.criada_em.getTime());
  await Entrega.update({ proxima_tentativa_em: new Date(Date.now() - 121_000) }, { where: { id }, silent: true });
  expect(await reenfileirarEsquecidas()).toBe(1);
  expect((await jobsDeEntrega()).sort()).toEqual([id, lote].sort());
});

test('a purge held up (a long first purge of a large history, here a locked row) does not hold the sweep up: both run at once', async () => {
  const [velha, esquecida] = await entregasSemJob(2);
  // a finished delivery past retention, which the purge locks before deleting it
  const muitoAntes = new Date(Date.now() - 90 * 86_400_000);
  await Entrega.update({ situacao: 'entregue', entregue_em: muitoAntes, criada_em: muitoAntes, atualizada_em: muitoAntes }, { where: { id: velha }, silent: true });
  await atrasar(esquecida, 5);
  const retencao = fila(filaHubRetencao);
  const worker = iniciarWorker(filaHubRetencao, processarHubRetencao);
  const conexao = await novaConexao('hub');
  try {
    await conexao.beginTransaction();
    await conexao.query('SELECT id FROM entrega WHERE id = ? FOR UPDATE', [velha]);
    await retencao.add('purgar', {});
    await esperarOutraConexao(conexao, 'the purge waiting on the old delivery', ['%FROM `entrega`%FOR UPDATE%']);

    await retencao.add('varrer', {});
    await esperarAte(async () => (await jobsDeEntrega()).includes(esquecida), 'the sweep queuing the forgotten delivery while the purge waits');
    expect(await Entrega.findByPk(velha)).not.toBeNull();
    await conexao.commit();
    await esperarAte(async () => (await Entrega.findByPk(velha)) === null, 'the purge, once the row is free');
  } finally {
    await conexao.end();
    await worker.close();
  }
});

test('a purge due while another is running ends at once, so it never holds the queue\'s second slot (the sweep\'s)', async () => {
  const outra = await novaConexao('hub');
  try {
    // as a purge under way holds it
    const [[{ obtida }]] = (await outra.query('SELECT GET_LOCK(?, 0) AS obtida', [nomeDaTrava('hub', 'purga')])) as any;
    expect(obtida).toBe(1);
    const inicio = Date.now();
    expect(await processarHubRetencao({ name: 'purgar' } as Job)).toEqual({ ignorada: 'outra limpeza em andamento' });
    expect(Date.now() - inicio).toBeLessThan(2000);
    // released before the connection ends: the server frees a closed connection's locks only a
    // moment after its QUIT, and the purge below would find the lock still held
    await outra.query('DO RELEASE_LOCK(?)', [nomeDaTrava('hub', 'purga')]);
  } finally {
    await outra.end();
  }
  // once it is over, the next one purges
  expect(await processarHubRetencao({ name: 'purgar' } as Job)).toEqual({ entregas: expect.any(Number), eventos: expect.any(Number) });
});
