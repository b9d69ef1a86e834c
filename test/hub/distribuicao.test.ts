import { Job } from 'bullmq';
import { distribuirEntregas } from '../../api/hub/entregas';
import { processarHubDistribuicao } from '../../jobs/hub-distribuicao';
import { processarHubEntrega } from '../../jobs/hub-entrega';
import { Entrega } from '../../models/hub';
import { fila, iniciarWorker } from '../../queues/fila';
import { DISTRIBUICAO_MAXIMA, filaHubDistribuicao } from '../../queues/hub-distribuicao';
import { filaHubEntrega } from '../../queues/hub-entrega';
import { dormir, esperarAte, hubSemEntregasNesteArquivo } from './apoio-entregas';

/**
 * Fan-out of published events (queues/hub-distribuicao.ts): POST /eventos answers 202 once the
 * event, its deliveries and ONE distribution job per batch are stored; the distribution job adds
 * one delivery job per delivery (job id = delivery id); running it twice adds nothing twice while
 * those jobs wait, and sends nothing twice once they are done.
 * No worker runs here but the application sync, so each queue's content can be read between steps.
 */

const t = hubSemEntregasNesteArquivo();

const distribuicoes = () => fila(filaHubDistribuicao).getJobs(['waiting']) as Promise<Job<{ entregas: string[] }>[]>;
const esvaziar = async () => {
  await fila(filaHubDistribuicao).drain();
  await fila(filaHubEntrega).drain();
};

test('a publication matching three subscriptions enqueues one distribution job holding its three deliveries, and no delivery job yet', async () => {
  await esvaziar();
  const c = await t.hub.cenario({ url_de_destino: t.receptor.url('/a') });
  for (const sufixo of ['/b', '/c']) await t.hub.assinar(await t.hub.aplicativo(), c.tipo.id, { url_de_destino: t.receptor.url(sufixo) });

  const { id, entregas } = await c.publicar({ n: 1 });
  expect(entregas).toBe(3);
  const guardadas = await Entrega.findAll({ where: { evento_id: id }, attributes: ['id'] });
  const jobs = await distribuicoes();
  expect(jobs).toHaveLength(1);
  expect([...jobs[0].data.entregas].sort()).toEqual(guardadas.map((e) => e.id).sort());
  expect(await fila(filaHubEntrega).getWaitingCount()).toBe(0);
});

const ocioso = async (q: typeof filaHubDistribuicao) => {
  const n = await fila(q).getJobCounts('waiting', 'active', 'delayed', 'failed');
  return n.waiting + n.active + n.delayed === 0 && n;
};

test('the distribution job adds one delivery job per delivery, with the delivery id as job id; run again while they wait, it adds none', async () => {
  await esvaziar();
  const c = await t.hub.cenario({ url_de_destino: t.receptor.url('/d') });
  await t.hub.assinar(await t.hub.aplicativo(), c.tipo.id, { url_de_destino: t.receptor.url('/e') });
  const { id } = await c.publicar({ n: 2 });
  const ids = (await Entrega.findAll({ where: { evento_id: id }, attributes: ['id'] })).map((e) => e.id);

  const worker = iniciarWorker(filaHubDistribuicao, processarHubDistribuicao);
  try {
    await esperarAte(async () => (await fila(filaHubEntrega).getWaitingCount()) === 2, 'two delivery jobs');
    for (const entregaId of ids) expect((await fila(filaHubEntrega).getJob(entregaId))?.data).toEqual({ id: entregaId });

    // a distribution job that runs twice (a worker died after adding its jobs) duplicates nothing
    await distribuirEntregas(ids);
    const contagem = await esperarAte(() => ocioso(filaHubDistribuicao), 'the repeated job processed');
    expect(contagem.failed).toBe(0);
    expect(await fila(filaHubEntrega).getWaitingCount()).toBe(2);
  } finally {
    await worker.close();
  }
});

test('run again after its deliveries were made (their jobs removed), it sends nothing twice', async () => {
  await esvaziar();
  const c = await t.hub.cenario({ url_de_destino: t.receptor.url('/f') });
  const { id } = await c.publicar({ n: 3 });
  const [entrega] = await Entrega.findAll({ where: { evento_id: id }, attributes: ['id'] });

  const distribuicao = iniciarWorker(filaHubDistribuicao, processarHubDistribuicao);
  const entregas = iniciarWorker(filaHubEntrega, processarHubEntrega);
  try {
    await t.hub.esperarSituacao(entrega.id, 'entregue');
    await distribuirEntregas([entrega.id]);
    expect((await esperarAte(() => ocioso(filaHubDistribuicao), 'the repeated job processed')).failed).toBe(0);
    await esperarAte(() => ocioso(filaHubEntrega), 'the re-added delivery job processed');
    await dormir(200);
    expect(t.receptor.de(entrega.id)).toHaveLength(1);
    expect((await Entrega.findByPk(entrega.id))!.tentativas).toBe(1);
  } finally {
    await Promise.all([distribuicao.close(), entregas.close()]);
  }
});

test(`a batch of more than ${DISTRIBUICAO_MAXIMA} deliveries is split into jobs of at most ${DISTRIBUICAO_MAXIMA}, none lost`, async () => {
  await esvaziar();
  const ids = Array.from({ length: 2 * DISTRIBUICAO_MAXIMA + 7 }, (_, i) => `entrega-${i}`);
  await distribuirEntregas(ids);
  const jobs = await distribuicoes();
  expect(jobs.map((j) => j.data.entregas.length).sort((x, y) => x - y)).toEqual([7, DISTRIBUICAO_MAXIMA, DISTRIBUICAO_MAXIMA]);
  expect(jobs.flatMap((j) => j.data.entregas).sort()).toEqual([...ids].sort());
  await esvaziar();
});
