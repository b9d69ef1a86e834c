import { DelayedError, Job, Worker } from 'bullmq';
import { dividirEmLotes, enfileirarEntregas, entregarLote, tentarEntrega } from '../../api/hub/entregas';
import { config } from '../../config';
import { processarHubEntrega } from '../../jobs/hub-entrega';
import * as database from '../../lib/database';
import { novaConexaoRedis } from '../../lib/redis';
import { iniciarWorkers } from '../../lib/runner';
import { Entrega, Evento, TentativaDeEntrega } from '../../models/hub';
import { fila } from '../../queues/fila';
import { filaHubEntrega, JobDeEntrega, LOTE_MAXIMO } from '../../queues/hub-entrega';
import { dormir, esperarAte, hubNesteArquivo } from './apoio-entregas';

/**
 * First attempts travel in batches (queues/hub-entrega.ts, docs/decisoes.md): POST /eventos answers
 * 202 once the event, its deliveries and ONE `entregar-lote` job per batch are stored (DESIGN §5:
 * "durably stored and enqueued"); the batch tries its
 * deliveries side by side, and only a failed one gets a job of its own (job id = delivery id) for
 * its next attempts. Run again, a batch sends nothing twice.
 * No delivery worker runs here: the batches are run by calling their processor, and the queue's
 * content is read between steps.
 */

const t = hubNesteArquivo({ entregas: false });

const jobs = () => fila(filaHubEntrega).getJobs(['waiting', 'delayed']) as Promise<Job<JobDeEntrega>[]>;
const esvaziar = () => fila(filaHubEntrega).drain(true);
const idsDoEvento = async (eventoId: string) =>
  (await Entrega.findAll({ where: { evento_id: eventoId }, attributes: ['id'], order: [['id', 'ASC']] })).map((e) => e.id);

beforeEach(async () => {
  await esvaziar();
  t.receptor.responder = () => 200;
});

/** The subscriber holds its answers on `caminho` until the answer is called: no timing assumed. */
function segurarRespostas(caminho: string): () => void {
  let soltar!: () => void;
  const portao = new Promise<void>((r) => (soltar = r));
  t.receptor.responder = async (r) => {
    if (r.caminho === caminho) await portao;
    return 200;
  };
  return soltar;
}

const recebidasEm = (caminho: string) => t.receptor.recebidas.filter((r) => r.caminho === caminho);

type Cenario = Awaited<ReturnType<typeof t.hub.cenario>>;

/** `n` events published one by one, each its own batch: their delivery ids. */
async function publicarVarios(c: Cenario, n: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) ids.push(...(await idsDoEvento((await c.publicar({ n: i })).id)));
  return ids;
}

/**
 * One event for two subscribers, one answering 200 at `caminho`, the other 500 at
 * `caminho`-falha (3 attempts each): its two delivery ids, their batch job dropped.
 */
async function umaBoaEUmaQueFalha(caminho: string): Promise<string[]> {
  const c = await t.hub.cenario({ url_de_destino: t.receptor.url(caminho), maximo_de_tentativas: 3 });
  await t.hub.assinar(await t.hub.aplicativo(), c.tipo.id, { url_de_destino: t.receptor.url(`${caminho}-falha`) });
  t.receptor.responder = (r) => (r.caminho === `${caminho}-falha` ? 500 : 200);
  const ids = await idsDoEvento((await c.publicar({ n: 2 })).id);
  await esvaziar();
  return ids;
}

test('a publication matching three subscriptions enqueues one batch job holding its three deliveries, and no job of their own', async () => {
  const c = await t.hub.cenario({ url_de_destino: t.receptor.url('/a') });
  for (const sufixo of ['/b', '/c']) await t.hub.assinar(await t.hub.aplicativo(), c.tipo.id, { url_de_destino: t.receptor.url(sufixo) });

  const { id, entregas } = await c.publicar({ n: 1 });
  expect(entregas).toBe(3);
  const todos = await jobs();
  expect(todos).toHaveLength(1);
  expect(todos[0].name).toBe('entregar-lote');
  expect([...(todos[0].data as { entregas: string[] }).entregas].sort()).toEqual(await idsDoEvento(id));
  // its job id is the one the event records (a repeated publication adds it again under that id)
  expect(todos[0].id).toBe(`lote-${id}`);
  expect((await Evento.findByPk(id))!.lote).toBe(`lote-${id}`);
  // failed on an error of its own (the database away), a batch runs again within seconds, not on the deliveries' schedule
  expect(todos[0].opts).toMatchObject({ attempts: 12, backoff: { type: 'exponential', delay: 1000 } });
});

test('a publication repeated (same id) while its batch is queued adds nothing; once the batch is gone, its untried deliveries come back in a batch of the same id', async () => {
  const c = await t.hub.cenario({ url_de_destino: t.receptor.url('/repetida') });
  await t.hub.assinar(await t.hub.aplicativo(), c.tipo.id, { url_de_destino: t.receptor.url('/repetida2') });
  const primeira = await c.publicar({ n: 1 }, { id: 'pedido-repetido-1' });
  const [feita, restante] = await idsDoEvento(primeira.id);
  expect(await c.publicar({ n: 1 }, { id: 'pedido-repetido-1' })).toEqual(primeira);
  expect((await jobs()).map((j) => j.id)).toEqual([`lote-${primeira.id}`]);

  // another event of the same batch, whose publisher does not repeat
  const outra = await c.publicar({ n: 2 });
  await Evento.update({ lote: `lote-${primeira.id}` }, { where: { id: outra.id } });
  const daOutra = await idsDoEvento(outra.id);

  // the batch lost (Redis refused it, or it failed for good) after one delivery was made
  await esvaziar();
  await Entrega.update({ situacao: 'entregue', tentativas: 1, entregue_em: new Date() }, { where: { id: feita } });
  expect(await c.publicar({ n: 1 }, { id: 'pedido-repetido-1' })).toEqual(primeira);
  expect(await jobs()).toHaveLength(1);
  const [lote] = await jobs();
  expect(lote.id).toBe(`lote-${primeira.id}`);
  // what is left of the whole batch, not only the repeated event's
  expect([...(lote.data as { entregas: string[] }).entregas].sort()).toEqual([restante, ...daOutra].sort());
});

test('a publication repeated once its batch is gone leaves out of the batch it adds again a delivery with a job of its own (a failed first attempt the database did not record): it waits for its schedule', async () => {
  const c = await t.hub.cenario({ url_de_destino: t.receptor.url('/propria') });
  await t.hub.assinar(await t.hub.aplicativo(), c.tipo.id, { url_de_destino: t.receptor.url('/propria2') });
  const primeira = await c.publicar({ n: 1 }, { id: 'pedido-com-job-proprio' });
  const [comJob, semJob] = await idsDoEvento(primeira.id);
  // the batch ran and is gone; one attempt failed, its record refused, and it got its job for the schedule
  await esvaziar();
  await enfileirarEntregas([comJob], 60_000);
  expect(await c.publicar({ n: 1 }, { id: 'pedido-com-job-proprio' })).toEqual(primeira);
  const porId = new Map((await jobs()).map((j) => [j.id, j]));
  expect([...porId.keys()].sort()).toEqual([comJob, `lote-${primeira.id}`].sort());
  expect((porId.get(`lote-${primeira.id}`)!.data as { entregas: string[] }).entregas).toEqual([semJob]);
});

test('the batch makes each first attempt once; a failed one gets a job of its own delayed to its stored next attempt', async () => {
  const ids = await umaBoaEUmaQueFalha('/d');

  const progresso: object[] = [];
  await entregarLote(ids, undefined, (p) => progresso.push(p));
  // each delivery's turn is told, failed or not
  expect(progresso).toEqual([
    { feitas: 1, de: 2 },
    { feitas: 2, de: 2 },
  ]);
  const [boa, ruim] = await Promise.all(ids.map((i) => Entrega.findByPk(i))).then((es) => [es.find((e) => e!.situacao === 'entregue')!, es.find((e) => e!.situacao === 'pendente')!]);
  expect(boa.tentativas).toBe(1);
  expect(ruim.tentativas).toBe(1);
  expect(t.receptor.de(boa.id)).toHaveLength(1);
  expect(t.receptor.de(ruim.id)).toHaveLength(1);
  const [propria] = await jobs();
  expect(propria.id).toBe(ruim.id);
  expect(propria.data).toEqual({ id: ruim.id });
  // its run time is the next attempt the failure stored (the schedule is short in tests)
  expect(Math.abs(propria.timestamp + propria.delay - ruim.proxima_tentativa_em!.getTime())).toBeLessThan(1000);
});

test('run again, the batch sends nothing twice: a delivered one is left alone, a failed one to its own job', async () => {
  const ids = await umaBoaEUmaQueFalha('/e');

  await entregarLote(ids);
  const antes = t.receptor.recebidas.length;
  await entregarLote(ids);
  expect(t.receptor.recebidas.length).toBe(antes);
  for (const i of ids) expect((await Entrega.findByPk(i))!.tentativas).toBe(1);
  expect(await TentativaDeEntrega.count({ where: { entrega_id: ids } })).toBe(2);
  expect((await jobs()).map((j) => j.name)).toEqual(['entregar']);
});

test('run again after its worker died between a failed attempt and that delivery\'s job, the batch adds the job and sends nothing (DESIGN §8: a processor is idempotent)', async () => {
  const c = await t.hub.cenario({ url_de_destino: t.receptor.url('/f'), maximo_de_tentativas: 3 });
  const { id } = await c.publicar({ n: 4 });
  const [entregaId] = await idsDoEvento(id);
  await esvaziar();
  // as the first run left it: attempt 1 recorded, the next one in 40 s, no job
  const proxima = new Date(Date.now() + 40_000);
  await Entrega.update({ tentativas: 1, proxima_tentativa_em: proxima, ultimo_erro: 'HTTP 500' }, { where: { id: entregaId } });

  await entregarLote([entregaId]);
  expect(t.receptor.de(entregaId)).toHaveLength(0);
  const [propria] = await jobs();
  expect(propria.id).toBe(entregaId);
  expect(Math.abs(propria.timestamp + propria.delay - proxima.getTime())).toBeLessThan(1000);
  expect((await Entrega.findByPk(entregaId))!.tentativas).toBe(1);
});

test('a delivery given a job of its own since it was published (replayed, swept: its row written again) is left to that job', async () => {
  const c = await t.hub.cenario({ url_de_destino: t.receptor.url('/g') });
  await t.hub.assinar(await t.hub.aplicativo(), c.tipo.id, { url_de_destino: t.receptor.url('/h') });
  const { id } = await c.publicar({ n: 5 });
  const [propria, outra] = await idsDoEvento(id);
  await esvaziar();
  // as the sweep leaves it: its next attempt set to now, a job of its own
  await Entrega.update({ proxima_tentativa_em: new Date() }, { where: { id: propria } });
  await enfileirarEntregas([propria]);

  await entregarLote([propria, outra]);
  expect(t.receptor.de(propria)).toHaveLength(0);
  expect(t.receptor.de(outra)).toHaveLength(1);
  expect((await Entrega.findByPk(propria))!.situacao).toBe('pendente');
  expect((await jobs()).map((j) => j.id)).toEqual([propria]);
});

test('a subscription deactivated while its batch runs: its deliveries not yet started are not sent, each read when its turn comes (SPEC §6 rule 6)', async () => {
  const c = await t.hub.cenario({ url_de_destino: t.receptor.url('/lenta') });
  const b = await t.hub.assinar(await t.hub.aplicativo(), c.tipo.id, { url_de_destino: t.receptor.url('/desativada') });
  const lentas: string[] = [];
  let ultimaDeB = '';
  for (let n = 0; n < 50; n++) {
    const { id } = await c.publicar({ n });
    const doEvento = await Entrega.findAll({ where: { evento_id: id }, attributes: ['id', 'assinatura_id'] });
    lentas.push(doEvento.find((e) => e.assinatura_id === c.assinatura.id)!.id);
    ultimaDeB = doEvento.find((e) => e.assinatura_id === b.id)!.id;
  }
  await esvaziar();
  const soltar = segurarRespostas('/lenta');

  // the 50 held ones take every slot; the subscription of the last delivery is deactivated meanwhile
  const lote = entregarLote([...lentas, ultimaDeB]);
  await esperarAte(async () => recebidasEm('/lenta').length === 50, 'the held attempts in flight');
  expect((await t.hub.api.patch(`/assinatura/${b.id}`, { token: await t.hub.admin(), body: { ativa: false } })).status).toBe(200);
  soltar();
  await lote;
  expect(t.receptor.de(ultimaDeB)).toHaveLength(0);
  expect((await Entrega.findByPk(ultimaDeB))!.situacao).toBe('cancelada');
});

test('a batch larger than the attempts allowed at once (HUB_ENTREGA_CONCORRENCIA, 50 by default) never has more in flight', async () => {
  const c = await t.hub.cenario({ url_de_destino: t.receptor.url('/j') });
  const ids = await publicarVarios(c, 60);
  // a job of one delivery shares the bound with the batch's attempts
  const sozinha = await idsDoEvento((await c.publicar({ n: 60 })).id);
  await esvaziar();
  const soltar = segurarRespostas('/j');

  const todas = Promise.all([entregarLote(ids), tentarEntrega(sozinha[0])]);
  await esperarAte(async () => recebidasEm('/j').length === 50, '50 attempts in flight');
  // held, they keep every slot: no 51st arrives
  await dormir(300);
  expect(recebidasEm('/j')).toHaveLength(50);
  soltar();
  await todas;
  expect(await Entrega.count({ where: { id: [...ids, ...sozinha], situacao: 'entregue' } })).toBe(61);
});

test('a job of one delivery (a retry, a replay) goes ahead of the batch attempts already waiting for a slot', async () => {
  const c = await t.hub.cenario({ url_de_destino: t.receptor.url('/fila') });
  const ids = await publicarVarios(c, 150);
  const [sozinha] = await idsDoEvento((await c.publicar({ n: 150 })).id);
  await esvaziar();
  const soltar = segurarRespostas('/fila');

  // three waves of 50 for the batch; the single delivery comes while the first is held
  const lote = entregarLote(ids);
  await esperarAte(async () => recebidasEm('/fila').length === 50, 'the first wave in flight');
  const propria = tentarEntrega(sozinha);
  soltar();
  await Promise.all([lote, propria]);
  const ordem = recebidasEm('/fila').map((r) => r.webhookId);
  expect(ordem).toHaveLength(151);
  // in the second wave, not after the hundred batch attempts that were waiting before it
  expect(ordem.indexOf(sozinha)).toBeGreaterThanOrEqual(50);
  expect(ordem.indexOf(sozinha)).toBeLessThan(100);
});

test('stopped by shutdown, a batch starts no more attempts and lets those in flight end; run again it sends only the rest', async () => {
  const c = await t.hub.cenario({ url_de_destino: t.receptor.url('/k') });
  const ids = await publicarVarios(c, 60);
  await esvaziar();
  const soltar = segurarRespostas('/k');
  const encerramento = new AbortController();

  const lote = entregarLote(ids, encerramento.signal);
  await esperarAte(async () => recebidasEm('/k').length === 50, 'the first 50 attempts in flight');
  encerramento.abort();
  soltar();
  expect(await lote).toEqual({ adiadas: 10 });
  expect(await Entrega.count({ where: { id: ids, situacao: 'entregue' } })).toBe(50);
  expect(await Entrega.count({ where: { id: ids, situacao: 'pendente', tentativas: 0 } })).toBe(10);

  await entregarLote(ids);
  const chamadas = t.receptor.recebidas.filter((r) => r.caminho === '/k');
  expect(chamadas).toHaveLength(60);
  expect(new Set(chamadas.map((r) => r.webhookId)).size).toBe(60);
});

test("stopped by shutdown after a failed attempt the database could not record: the batch's next run is for the deliveries without a job of their own only", async () => {
  const c = await t.hub.cenario({ url_de_destino: t.receptor.url('/parada') });
  const ids = await publicarVarios(c, 55);
  const falha = await t.hub.cenario({ url_de_destino: t.receptor.url('/parada-falha'), maximo_de_tentativas: 3 });
  const [ruim] = await idsDoEvento((await falha.publicar({ n: 1 })).id);
  await esvaziar();
  let soltar!: () => void;
  const portao = new Promise<void>((r) => (soltar = r));
  t.receptor.responder = async (r) => (r.caminho === '/parada-falha' ? 500 : (await portao, 200));
  // the first write is the failed attempt's record, refused; the held ones are recorded later
  const escrita = jest.spyOn(database, 'escreverJuntos').mockRejectedValueOnce(new Error('ECONNREFUSED'));
  const encerramento = new AbortController();
  const restantes: string[][] = [];
  try {
    // the failed one first: once it is done, 50 held ones take the 50 slots, 5 wait for one
    const lote = entregarLote([ruim, ...ids], encerramento.signal, undefined, async (r) => void restantes.push(r));
    await esperarAte(async () => recebidasEm('/parada').length === 50 && (await jobs()).some((j) => j.id === ruim), 'the failed one given its job, 50 held');
    encerramento.abort();
    soltar();
    expect(await lote).toEqual({ adiadas: 5 });
  } finally {
    escrita.mockRestore();
  }
  expect(t.receptor.de(ruim)).toHaveLength(1);
  expect(await Entrega.findByPk(ruim)).toMatchObject({ situacao: 'pendente', tentativas: 0 });
  expect(restantes).toEqual([ids]);
});

test('the processor hands a job stopped by shutdown back to the queue, delayed a second, without counting a failed attempt', async () => {
  const c = await t.hub.cenario({ url_de_destino: t.receptor.url('/l') });
  await c.publicar({ n: 1 });
  const worker = new Worker(filaHubEntrega.nome, null, { connection: novaConexaoRedis('worker', 'teste-lote'), prefix: config().queuePrefix });
  try {
    const job = (await worker.getNextJob('teste'))!;
    expect(job.name).toBe('entregar-lote');
    await expect(processarHubEntrega(job, 'teste', AbortSignal.abort())).rejects.toBeInstanceOf(DelayedError);
    expect(await job.getState()).toBe('delayed');
    const depois = (await fila(filaHubEntrega).getJob(job.id!))!;
    expect(depois.attemptsMade).toBe(0);
    expect(depois.delay).toBeGreaterThan(0);
    expect(depois.delay).toBeLessThanOrEqual(1000);
    expect(t.receptor.recebidas.filter((r) => r.caminho === '/l')).toHaveLength(0);
  } finally {
    await worker.close();
  }
});

test("a batch run again after a failing database sends no delivery twice whose failed attempt could not be recorded: the next run is only for the deliveries without a job of their own", async () => {
  const [boa, ruim] = await umaBoaEUmaQueFalha('/sem-registro');
  await fila(filaHubEntrega).add('entregar-lote', { entregas: [boa, ruim] }, { jobId: `lote-sem-registro-${boa}` });
  const worker = new Worker(filaHubEntrega.nome, null, { connection: novaConexaoRedis('worker', 'teste-lote'), prefix: config().queuePrefix });
  // the database failing as the attempts are recorded: the success's and the failure's writes alike
  const escrita = jest.spyOn(database, 'escreverJuntos').mockRejectedValue(new Error('ECONNREFUSED'));
  try {
    const job = (await worker.getNextJob('teste'))!;
    await expect(processarHubEntrega(job, 'teste')).rejects.toThrow('ECONNREFUSED');
    escrita.mockRestore();
    expect(t.receptor.de(boa)).toHaveLength(1);
    expect(t.receptor.de(ruim)).toHaveLength(1);
    // the failed one has its job, delayed to its next attempt; the batch keeps the other
    const depois = (await fila(filaHubEntrega).getJob(job.id!))!;
    expect(depois.data.entregas).toEqual([boa]);
    expect((await jobs()).map((j) => j.id)).toEqual([ruim]);

    await processarHubEntrega(depois, 'teste');
    // the success whose record was lost goes again (at least once); the failure waits for its job
    expect(t.receptor.de(boa)).toHaveLength(2);
    expect(t.receptor.de(ruim)).toHaveLength(1);
    expect(await Entrega.findByPk(boa)).toMatchObject({ situacao: 'entregue', tentativas: 1 });
    expect(await Entrega.findByPk(ruim)).toMatchObject({ situacao: 'pendente', tentativas: 0 });
  } finally {
    escrita.mockRestore();
    await worker.close();
  }
});

test(`publications are cut into batch jobs of about ${LOTE_MAXIMO} deliveries, never splitting an event's, each event recording its job`, () => {
  const evento = (id: string) => ({ id, lote: null as string | null });
  const eventos = [evento('a'), evento('b'), evento('c'), evento('d'), evento('sem')];
  const entregasDe = (eventoId: string, n: number) => Array.from({ length: n }, (_, i) => ({ id: `${eventoId}-${i}`, evento_id: eventoId }));
  const [seis, quinze] = [(LOTE_MAXIMO * 6) / 10, (LOTE_MAXIMO * 15) / 10];
  const entregas = [...entregasDe('a', seis), ...entregasDe('b', seis), ...entregasDe('c', 7), ...entregasDe('d', quinze)];

  const lotes = dividirEmLotes(eventos, entregas);
  expect(lotes.map((l) => [l.id, l.entregas.length])).toEqual([
    ['lote-a', seis],
    ['lote-b', seis + 7],
    ['lote-d', quinze],
  ]);
  expect(eventos.map((e) => e.lote)).toEqual(['lote-a', 'lote-b', 'lote-b', 'lote-d', null]);
  expect(lotes.flatMap((l) => l.entregas).sort()).toEqual(entregas.map((e) => e.id).sort());
});

test('a batch whose lock its worker could not renew (it may be running elsewhere) starts no more attempts and goes back to the queue; run again, it sends only the rest', async () => {
  const c = await t.hub.cenario({ url_de_destino: t.receptor.url('/trava') });
  const ids = await publicarVarios(c, 60);
  await esvaziar();
  const soltar = segurarRespostas('/trava');
  const [worker] = await iniciarWorkers([filaHubEntrega.nome]);
  try {
    await fila(filaHubEntrega).add('entregar-lote', { entregas: ids }, { jobId: 'lote-da-trava' });
    await esperarAte(async () => recebidasEm('/trava').length === 50, 'every slot held');
    // as BullMQ reports a lock it failed to extend
    worker.emit('lockRenewalFailed', ['lote-da-trava']);
    soltar();
    await esperarAte(async () => (await fila(filaHubEntrega).getJobState('lote-da-trava')) === 'delayed', 'the batch handed back');
    expect(recebidasEm('/trava')).toHaveLength(50);
    await esperarAte(async () => recebidasEm('/trava').length === 60, 'the rest sent by the batch run again');
    expect(new Set(recebidasEm('/trava').map((r) => r.webhookId)).size).toBe(60);
  } finally {
    soltar();
    await worker.close();
  }
});
