import { Job, Worker } from 'bullmq';
import { config } from '../../config';
import { processarHubEntrega } from '../../jobs/hub-entrega';
import { iniciarWorkers } from '../../lib/runner';
import { novaConexaoRedis } from '../../lib/redis';
import { Entrega } from '../../models/hub';
import { fila } from '../../queues/fila';
import { filaHubEntrega } from '../../queues/hub-entrega';
import { iniciarSuite, SuiteDeTeste } from '../helpers/suite';
import { dormir, esperarAte, hubDe, Hub, iniciarReceptor, Receptor } from './apoio-entregas';

/**
 * A delivery's own job (`entregar`) records a failed attempt and its next time
 * (`proxima_tentativa_em`, the schedule's delay) in the database, then BullMQ delays the job by that
 * delay. A worker that dies between the two (SIGKILL, or Redis out of its reach) leaves the job
 * active; BullMQ's stalled check puts it back in the waiting list, and it runs at once. It must
 * then wait for the stored time, not send the next attempt ahead of the schedule (DESIGN §5).
 * The dying worker is a worker of this file that never finishes the job nor renews its lock.
 */

let suite: SuiteDeTeste;
let hub: Hub;
let receptor: Receptor;

beforeAll(async () => {
  suite = await iniciarSuite(['identity', 'hub'], { workers: false, env: { HUB_RETRY_SCHEDULE_MS: '3000,60000', HUB_ENTREGA_LOCK_MS: '2000' } });
  await iniciarWorkers(['hub-aplicativo-sync']);
  hub = hubDe(suite);
  receptor = await iniciarReceptor(() => 500);
});
afterAll(async () => {
  await receptor?.fechar();
  await suite?.encerrar();
});

test('a delivery job re-run after its worker died past recording a failure waits for the stored next attempt (schedule kept)', async () => {
  const c = await hub.cenario({ url_de_destino: receptor.url('/retomado'), maximo_de_tentativas: 5 });
  let morreu = false;
  // a worker that makes attempts as the real one does, but "dies" once a delivery job has recorded
  // its failed attempt, before BullMQ hears of it (lock not renewed: it lapses as a dead worker's)
  const moribundo = new Worker(
    filaHubEntrega.nome,
    async (job: Job, token?: string) => {
      if (job.name === 'entregar-lote') return processarHubEntrega(job, token);
      await processarHubEntrega(job, token).catch(() => undefined);
      morreu = true;
      await new Promise(() => undefined);
    },
    {
      connection: novaConexaoRedis('worker', 'teste-moribundo'),
      prefix: config().queuePrefix,
      lockDuration: 1500,
      skipLockRenewal: true,
      skipStalledCheck: true,
      settings: filaHubEntrega.opcoesDoWorker!.settings,
    },
  );
  moribundo.on('error', () => undefined);
  const { id: eventoId } = await c.publicar({ n: 1 });
  const entrega = await esperarAte(() => Entrega.findOne({ where: { evento_id: eventoId } }), 'the delivery');
  await esperarAte(() => morreu, 'the second attempt recorded by the dying worker', 15_000);
  await moribundo.close(true);
  const depoisDaSegunda = (await Entrega.findByPk(entrega.id))!;
  expect(depoisDaSegunda.tentativas).toBe(2);
  // the next attempt is due about a minute later (60 s ± 20%)
  expect(depoisDaSegunda.proxima_tentativa_em!.getTime()).toBeGreaterThan(Date.now() + 40_000);
  expect(receptor.de(entrega.id)).toHaveLength(2);

  // the real delivery worker: its stalled check finds the dead worker's job, runs it, and it goes
  // back to the queue until the stored next attempt
  await iniciarWorkers(['hub-entrega']);
  const q = fila(filaHubEntrega);
  await esperarAte(async () => {
    const job = await q.getJob(entrega.id);
    return job && (await job.getState()) === 'delayed' && job.attemptsStarted > 1;
  }, 'the job run again and delayed', 20_000);
  const job = (await q.getJob(entrega.id))!;
  // delayed until the stored attempt, about a minute away, not taken up again a second later
  expect(job.delay).toBeGreaterThan(30_000);
  await dormir(300);
  const agora = (await Entrega.findByPk(entrega.id))!;
  expect({ chamadas: receptor.de(entrega.id).length, tentativas: agora.tentativas, situacao: agora.situacao }).toEqual({ chamadas: 2, tentativas: 2, situacao: 'pendente' });
}, 60_000);
