import { ChildProcess } from 'node:child_process';
import { Job } from 'bullmq';
import { createRemoteJWKSet, jwtVerify } from 'jose';
import { processarHubEntrega } from '../../jobs/hub-entrega';
import { iniciarWorkers } from '../../lib/runner';
import { fila, iniciarWorker } from '../../queues/fila';
import { filaHubEntrega, JobDeEntrega } from '../../queues/hub-entrega';
import { comandoDaSuite } from '../helpers/processo';
import { iniciarSuite, SuiteDeTeste } from '../helpers/suite';
import { dormir, esperarAte, hubDe, Hub, iniciarReceptor, Receptor } from './apoio-entregas';

/**
 * Deliveries are at least once, even when a worker dies mid-run (DESIGN §8: "a processor is
 * idempotent (a job may run twice after a crash) and a worker process can be started for one queue
 * alone"; DESIGN §5: webhook-id is the subscriber's idempotency key). The APIs run in this process
 * without a delivery worker; deliveries are made by `suite worker hub-entrega` child processes
 * sharing the database and the queue, one of them killed with SIGKILL while attempts are in flight.
 */

let suite: SuiteDeTeste;
let hub: Hub;
let receptor: Receptor;
const filhos: { processo: ChildProcess; saida: string[] }[] = [];

beforeAll(async () => {
  suite = await iniciarSuite(['identity', 'hub'], { workers: false, env: { HUB_RETRY_SCHEDULE_MS: '50,100,150', HUB_ENTREGA_CONCORRENCIA: '5' } });
  // the application sync runs here; deliveries only in the children
  await iniciarWorkers(['hub-aplicativo-sync']);
  hub = hubDe(suite);
  receptor = await iniciarReceptor();
});
afterAll(async () => {
  for (const { processo } of filhos) {
    if (processo.exitCode === null && processo.signalCode === null) {
      const saiu = new Promise((r) => processo.once('exit', r));
      processo.kill('SIGTERM');
      const prazo = setTimeout(() => processo.kill('SIGKILL'), 8000);
      await saiu;
      clearTimeout(prazo);
    }
  }
  await receptor?.fechar();
  await suite?.encerrar();
});

/** How many delivery workers are connected to the queue (BullMQ names their Redis connections). */
const workersConectados = async () => (await fila(filaHubEntrega).getWorkers()).length;

/**
 * `suite worker hub-entrega` in a child process: same databases, queue prefix and data folder as
 * this file (inherited env), the in-process services' addresses (the token issuer is the hub's
 * address), and a short lock so a job of a dead worker is taken as stalled within seconds.
 */
async function iniciarFilho() {
  const antes = await workersConectados();
  const saida: string[] = [];
  const processo = comandoDaSuite(['worker', 'hub-entrega'], {
    ...process.env,
    HUB_URL: suite.url.hub,
    IDENTITY_URL: suite.url.identity,
    HUB_ENTREGA_LOCK_MS: '2000',
    HUB_ENTREGA_CONCORRENCIA: '5',
    LOG_LEVEL: 'warn',
  });
  processo.stdout.on('data', (d) => saida.push(String(d)));
  processo.stderr.on('data', (d) => saida.push(String(d)));
  filhos.push({ processo, saida });
  try {
    await esperarAte(async () => processo.exitCode === null && (await workersConectados()) > antes, 'the child worker connected', 45_000);
  } catch (err) {
    throw new Error(`${(err as Error).message}; exit ${processo.exitCode}; output: ${saida.join('').slice(-2000)}`);
  }
  return processo;
}

async function totais(assinaturaId: string) {
  const total = async (situacao: string) => (await hub.entregas({ assinatura_id: assinaturaId, situacao, tamanho: 1 })).total;
  const [entregue, fila_de_erro, pendente] = await Promise.all(['entregue', 'fila_de_erro', 'pendente'].map(total));
  return { entregue, fila_de_erro, pendente };
}

test('a worker killed with attempts in flight loses no delivery: another worker picks them up and every webhook-id arrives at least once (DESIGN §8, §5)', async () => {
  const EVENTOS = 40;
  const LENTAS = 5;
  // the first calls hang long enough for the worker to die in the middle of them
  receptor.responder = () => (receptor.recebidas.length <= LENTAS ? { status: 200, atrasoMs: 4000 } : 200);
  const c = await hub.cenario({ url_de_destino: receptor.url('/morto'), maximo_de_tentativas: 5, tempo_limite_em_segundos: 10 });
  const primeiro = await iniciarFilho();

  const publicados: string[] = [];
  for (let i = 0; i < EVENTOS; i++) publicados.push((await c.publicar({ n: i })).id);
  await esperarAte(() => receptor.recebidas.length >= LENTAS, 'the slow attempts in flight');
  const emVoo = receptor.recebidas.map((r) => r.webhookId);
  primeiro.kill('SIGKILL');
  await new Promise((r) => (primeiro.exitCode !== null || primeiro.signalCode !== null ? r(null) : primeiro.once('exit', r)));
  expect(primeiro.signalCode).toBe('SIGKILL');
  // nothing was answered before the kill: those attempts died with the worker
  expect((await totais(c.assinatura.id)).entregue).toBeLessThan(EVENTOS);

  await iniciarFilho();
  // both end states are final here: their sum only grows, until every delivery is accounted for
  await esperarAte(
    async () => {
      const t = await totais(c.assinatura.id);
      return t.entregue + t.fila_de_erro === EVENTOS;
    },
    'every delivery settled',
    40_000,
  );
  expect(await totais(c.assinatura.id)).toEqual({ entregue: EVENTOS, fila_de_erro: 0, pendente: 0 });
  const entregas = (await hub.entregas({ assinatura_id: c.assinatura.id })).itens as any[];
  expect(entregas.map((e) => e.evento_id).sort()).toEqual([...publicados].sort());
  // each webhook-id arrived at least once; the ones in flight at the kill arrived again
  const recebidos = new Set(receptor.recebidas.map((r) => r.webhookId));
  for (const e of entregas) expect(recebidos.has(e.id)).toBe(true);
  for (const id of emVoo) expect(receptor.de(id).length).toBeGreaterThanOrEqual(2);
  // signed by the child as by the API process: issuer the hub's address, audience the subscriber
  const ultima = receptor.recebidas[receptor.recebidas.length - 1];
  const jwks = createRemoteJWKSet(new URL(`${suite.url.hub}/.well-known/jwks.json`));
  const { payload } = await jwtVerify(String(ultima.cabecalhos['webhook-token']), jwks, { issuer: suite.url.hub, audience: c.assinante.id });
  expect(payload.jti).toBe(ultima.webhookId);
}, 90_000);

test('two worker processes sharing the queue deliver each delivery once in normal operation (no duplicate webhook-id)', async () => {
  const EVENTOS = 40;
  // slow enough that one worker's 5 slots cannot take everything
  receptor.responder = () => ({ status: 200, atrasoMs: 250 });
  // a second worker here, next to the child still running; it counts what it takes
  let aqui = 0;
  const worker = iniciarWorker(filaHubEntrega, (job: Job<JobDeEntrega>) => {
    aqui += 'entregas' in job.data ? job.data.entregas.length : 1;
    return processarHubEntrega(job);
  });
  await worker.waitUntilReady();
  await esperarAte(async () => (await workersConectados()) === 2, 'two delivery workers connected');
  const c = await hub.cenario({ url_de_destino: receptor.url('/dois'), maximo_de_tentativas: 5 });
  // one after the other: each publication its own batch job, so the two workers share 40 jobs
  for (let i = 0; i < EVENTOS; i++) await c.publicar({ n: i });

  await esperarAte(async () => (await totais(c.assinatura.id)).entregue === EVENTOS, 'every delivery made', 30_000);
  await dormir(300);
  const chamadas = receptor.recebidas.filter((r) => r.caminho === '/dois');
  expect(chamadas).toHaveLength(EVENTOS);
  expect(new Set(chamadas.map((r) => r.webhookId)).size).toBe(EVENTOS);
  // both workers took part (deliveries handled here)
  expect(aqui).toBeGreaterThan(0);
  expect(aqui).toBeLessThan(EVENTOS);
}, 60_000);
