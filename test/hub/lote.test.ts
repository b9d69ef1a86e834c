import { Job } from 'bullmq';
import { enfileirarEntregas, enfileirarLotes, entregarLote } from '../../api/hub/entregas';
import { Entrega, TentativaDeEntrega } from '../../models/hub';
import { fila } from '../../queues/fila';
import { filaHubEntrega, JobDeEntrega, LOTE_MAXIMO } from '../../queues/hub-entrega';
import { esperarAte, hubSemEntregasNesteArquivo } from './apoio-entregas';

/**
 * First attempts travel in batches (queues/hub-entrega.ts): POST /eventos answers 202 once the
 * event, its deliveries and ONE `entregar-lote` job per batch are stored; the batch tries its
 * deliveries side by side, and only a failed one gets a job of its own (job id = delivery id) for
 * its next attempts. Run again, a batch sends nothing twice.
 * No delivery worker runs here: the batches are run by calling their processor, and the queue's
 * content is read between steps.
 */

const t = hubSemEntregasNesteArquivo();

const jobs = () => fila(filaHubEntrega).getJobs(['waiting', 'delayed']) as Promise<Job<JobDeEntrega>[]>;
const lotes = async () => (await jobs()).filter((j) => j.name === 'entregar-lote') as Job<{ entregas: string[] }>[];
const esvaziar = () => fila(filaHubEntrega).drain(true);
const idsDoEvento = async (eventoId: string) =>
  (await Entrega.findAll({ where: { evento_id: eventoId }, attributes: ['id'], order: [['id', 'ASC']] })).map((e) => e.id);

beforeEach(async () => {
  await esvaziar();
  t.receptor.responder = () => 200;
});

test('a publication matching three subscriptions enqueues one batch job holding its three deliveries, and no job of their own', async () => {
  const c = await t.hub.cenario({ url_de_destino: t.receptor.url('/a') });
  for (const sufixo of ['/b', '/c']) await t.hub.assinar(await t.hub.aplicativo(), c.tipo.id, { url_de_destino: t.receptor.url(sufixo) });

  const { id, entregas } = await c.publicar({ n: 1 });
  expect(entregas).toBe(3);
  const todos = await jobs();
  expect(todos).toHaveLength(1);
  expect(todos[0].name).toBe('entregar-lote');
  expect([...(todos[0].data as { entregas: string[] }).entregas].sort()).toEqual(await idsDoEvento(id));
});

test('the batch makes each first attempt once; a failed one gets a job of its own delayed to its stored next attempt', async () => {
  const c = await t.hub.cenario({ url_de_destino: t.receptor.url('/d'), maximo_de_tentativas: 3 });
  await t.hub.assinar(await t.hub.aplicativo(), c.tipo.id, { url_de_destino: t.receptor.url('/falha') });
  t.receptor.responder = (r) => (r.caminho === '/falha' ? 500 : 200);
  const { id } = await c.publicar({ n: 2 });
  const ids = await idsDoEvento(id);
  await esvaziar();

  await entregarLote(ids);
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
  expect(ruim.proxima_tentativa_em!.getTime()).toBeGreaterThan(Date.now() - 5000);
});

test('run again, the batch sends nothing twice: a delivered one is left alone, a failed one to its own job', async () => {
  const c = await t.hub.cenario({ url_de_destino: t.receptor.url('/e'), maximo_de_tentativas: 3 });
  await t.hub.assinar(await t.hub.aplicativo(), c.tipo.id, { url_de_destino: t.receptor.url('/falha2') });
  t.receptor.responder = (r) => (r.caminho === '/falha2' ? 500 : 200);
  const { id } = await c.publicar({ n: 3 });
  const ids = await idsDoEvento(id);
  await esvaziar();

  await entregarLote(ids);
  const antes = t.receptor.recebidas.length;
  await entregarLote(ids);
  expect(t.receptor.recebidas.length).toBe(antes);
  for (const i of ids) expect((await Entrega.findByPk(i))!.tentativas).toBe(1);
  expect(await TentativaDeEntrega.count({ where: { entrega_id: ids } })).toBe(2);
  expect((await jobs()).map((j) => j.name)).toEqual(['entregar']);
});

test('run again after its worker died between a failed attempt and that delivery\'s job, the batch adds the job and sends nothing', async () => {
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

test('a delivery that has a job of its own by then (replayed, swept) is left to that job', async () => {
  const c = await t.hub.cenario({ url_de_destino: t.receptor.url('/g') });
  await t.hub.assinar(await t.hub.aplicativo(), c.tipo.id, { url_de_destino: t.receptor.url('/h') });
  const { id } = await c.publicar({ n: 5 });
  const [propria, outra] = await idsDoEvento(id);
  await esvaziar();
  await enfileirarEntregas([propria]);

  await entregarLote([propria, outra]);
  expect(t.receptor.de(propria)).toHaveLength(0);
  expect(t.receptor.de(outra)).toHaveLength(1);
  expect((await Entrega.findByPk(propria))!.situacao).toBe('pendente');
  expect((await jobs()).map((j) => j.id)).toEqual([propria]);
});

test('a deactivated subscription\'s delivery in a batch is cancelled, not sent', async () => {
  const c = await t.hub.cenario({ url_de_destino: t.receptor.url('/i') });
  const { id } = await c.publicar({ n: 6 });
  const [entregaId] = await idsDoEvento(id);
  // the route cancels it at once; a batch that still holds it must not send it
  expect((await t.hub.api.patch(`/assinatura/${c.assinatura.id}`, { token: await t.hub.admin(), body: { ativa: false } })).status).toBe(200);

  await entregarLote([entregaId]);
  expect(t.receptor.de(entregaId)).toHaveLength(0);
  expect((await Entrega.findByPk(entregaId))!.situacao).toBe('cancelada');
});

test('a batch larger than the attempts allowed at once (HUB_ENTREGA_CONCORRENCIA, 50 by default) never has more in flight', async () => {
  const c = await t.hub.cenario({ url_de_destino: t.receptor.url('/j') });
  const ids: string[] = [];
  for (let n = 0; n < 60; n++) ids.push(...(await idsDoEvento((await c.publicar({ n })).id)));
  await esvaziar();
  let emVoo = 0;
  let pico = 0;
  t.receptor.responder = async () => {
    pico = Math.max(pico, ++emVoo);
    await new Promise((r) => setTimeout(r, 300));
    emVoo--;
    return 200;
  };

  await entregarLote(ids);
  expect(pico).toBe(50);
  expect(await Entrega.count({ where: { id: ids, situacao: 'entregue' } })).toBe(60);
});

test('stopped by shutdown, a batch starts no more attempts, lets those in flight end and fails; run again it sends only the rest', async () => {
  const c = await t.hub.cenario({ url_de_destino: t.receptor.url('/k') });
  const ids: string[] = [];
  for (let n = 0; n < 60; n++) ids.push(...(await idsDoEvento((await c.publicar({ n })).id)));
  await esvaziar();
  t.receptor.responder = () => ({ status: 200, atrasoMs: 300 });
  const encerramento = new AbortController();

  const lote = entregarLote(ids, encerramento.signal);
  await esperarAte(async () => t.receptor.recebidas.filter((r) => r.caminho === '/k').length === 50, 'the first 50 attempts in flight');
  encerramento.abort();
  await expect(lote).rejects.toThrow('10 entregas do lote ficam para a próxima execução');
  expect(await Entrega.count({ where: { id: ids, situacao: 'entregue' } })).toBe(50);
  expect(await Entrega.count({ where: { id: ids, situacao: 'pendente', tentativas: 0 } })).toBe(10);

  await entregarLote(ids);
  const chamadas = t.receptor.recebidas.filter((r) => r.caminho === '/k');
  expect(chamadas).toHaveLength(60);
  expect(new Set(chamadas.map((r) => r.webhookId)).size).toBe(60);
});

test(`a batch of more than ${LOTE_MAXIMO} deliveries is split into jobs of at most ${LOTE_MAXIMO}, none lost`, async () => {
  const ids = Array.from({ length: 2 * LOTE_MAXIMO + 7 }, (_, i) => `entrega-${i}`);
  await enfileirarLotes(ids);
  const todos = await lotes();
  expect(todos.map((j) => j.data.entregas.length).sort((x, y) => x - y)).toEqual([7, LOTE_MAXIMO, LOTE_MAXIMO]);
  expect(todos.flatMap((j) => j.data.entregas).sort()).toEqual([...ids].sort());
});
