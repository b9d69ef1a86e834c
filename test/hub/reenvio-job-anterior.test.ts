import { Job, Worker } from 'bullmq';
import { config } from '../../config';
import { reenfileirarEsquecidas } from '../../api/hub/entregas';
import { novaConexaoRedis, redis } from '../../lib/redis';
import { Entrega } from '../../models/hub';
import { fila } from '../../queues/fila';
import { filaHubEntrega } from '../../queues/hub-entrega';
import { dormir, hubNesteArquivo } from './apoio-entregas';
import { reconectarProdutor } from '../helpers/redis';

/**
 * POST /entrega/{id}/reenviar while the job of the delivery's last round is still active: that job
 * has recorded its last attempt (the replay reads the delivery as finished) but BullMQ still holds
 * it for a moment, and a job of the same id cannot be added meanwhile. The replay's job must still
 * be queued, not left for the sweep minutes later (DESIGN §5 monitoring). No delivery worker runs
 * here: this file's own worker holds the old job.
 */

const t = hubNesteArquivo({ entregas: false });

beforeEach(() => fila(filaHubEntrega).drain(true));

/** Until the replay has written its new round (pending, no attempt): it then watches the old job. */
async function replayGravado(id: string) {
  for (;;) {
    const e = await Entrega.findByPk(id, { attributes: ['situacao', 'tentativas'] });
    if (e?.situacao === 'pendente' && e.tentativas === 0) return;
    await dormir(20);
  }
}

/** A delivery in the error queue whose last round's job a worker of this test holds active; `soltar` ends that job. */
async function entregaComJobAtivo() {
  const c = await t.hub.cenario({ url_de_destino: t.receptor.url('/reenvio'), maximo_de_tentativas: 1 });
  const { id: eventoId } = await c.publicar({ n: 1 });
  await fila(filaHubEntrega).drain();
  const entrega = await Entrega.findOne({ where: { evento_id: eventoId } });
  await Entrega.update({ situacao: 'fila_de_erro', tentativas: 1, proxima_tentativa_em: null }, { where: { id: entrega!.id } });

  let soltar!: () => void;
  const solto = new Promise<void>((r) => (soltar = r));
  let ativo!: (job: Job) => void;
  const emCurso = new Promise<Job>((r) => (ativo = r));
  const worker = new Worker(
    filaHubEntrega.nome,
    async (job) => {
      ativo(job);
      await solto;
    },
    { connection: novaConexaoRedis('worker', 'teste-reenvio'), prefix: config().queuePrefix, autorun: false },
  );
  worker.on('error', () => undefined); // its connection closes with the suite
  await fila(filaHubEntrega).add('entregar', { id: entrega!.id }, { jobId: entrega!.id });
  void worker.run();
  expect((await emCurso).id).toBe(entrega!.id);
  // takes nothing more: the replay's job must stay in the queue to be seen
  await worker.pause(true);
  return { id: entrega!.id, soltar, worker };
}

test('a replay while the old round job is still active queues its own job once that one ends', async () => {
  const { id, soltar, worker } = await entregaComJobAtivo();
  try {
    const resposta = t.hub.api.post(`/entrega/${id}/reenviar`, { token: await t.hub.admin() });
    await replayGravado(id);
    expect(await fila(filaHubEntrega).getJobState(id)).toBe('active');
    soltar();
    const res = await resposta;
    const job = await fila(filaHubEntrega).getJob(id);
    // one comparison, so a failure shows the whole state at once
    expect({ status: res.status, situacao: res.body.situacao, dados: job?.data, estado: await job?.getState() }).toEqual({
      status: 202,
      situacao: 'pendente',
      dados: { id },
      estado: 'waiting',
    });
  } finally {
    soltar();
    await worker.close();
  }
});

test('a replay whose delivery the old job sent meanwhile (its round taken by that job) queues nothing more', async () => {
  const { id, soltar, worker } = await entregaComJobAtivo();
  try {
    const resposta = t.hub.api.post(`/entrega/${id}/reenviar`, { token: await t.hub.admin() });
    await replayGravado(id);
    // as if the old job had read the delivery after the replay and delivered it
    await Entrega.update({ situacao: 'entregue', tentativas: 1, entregue_em: new Date() }, { where: { id } });
    soltar();
    const res = await resposta;
    const job = await fila(filaHubEntrega).getJob(id);
    expect({ status: res.status, job: job && { estado: await job.getState(), criado: job.timestamp } }).toEqual({ status: 202, job: undefined });
  } finally {
    soltar();
    await worker.close();
  }
});

test('a replay whose job Redis refuses still answers 202 with its new round (committed), and the sweep queues it once Redis is back', async () => {
  const c = await t.hub.cenario({ url_de_destino: t.receptor.url('/reenvio-sem-redis'), maximo_de_tentativas: 1 });
  const { id: eventoId } = await c.publicar({ n: 1 });
  await fila(filaHubEntrega).drain();
  const { id } = (await Entrega.findOne({ where: { evento_id: eventoId } }))!;
  await Entrega.update({ situacao: 'fila_de_erro', tentativas: 1, proxima_tentativa_em: null }, { where: { id } });
  const token = await t.hub.admin();
  const produtor = redis('produtor');
  produtor.disconnect();
  let res;
  try {
    res = await t.hub.api.post(`/entrega/${id}/reenviar`, { token });
  } finally {
    await reconectarProdutor();
  }
  const gravada = await Entrega.findByPk(id);
  expect({ status: res.status, resposta: res.body.situacao, gravada: gravada?.situacao, tentativas: gravada?.tentativas }).toEqual({
    status: 202,
    resposta: 'pendente',
    gravada: 'pendente',
    tentativas: 0,
  });
  expect(await fila(filaHubEntrega).getJob(id)).toBeUndefined();
  // the sweep takes pending deliveries two minutes past their next attempt
  await Entrega.update({ proxima_tentativa_em: new Date(Date.now() - 180_000) }, { where: { id } });
  await reenfileirarEsquecidas();
  expect((await fila(filaHubEntrega).getJob(id))?.data).toEqual({ id });
});
