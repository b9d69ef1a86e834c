import net from 'node:net';
import { PRAZO_DO_COMANDO_MS } from '../../lib/redis';
import { dormir } from '../helpers/espera';
import { cliente, esperarProblema } from '../helpers/http';
import { identityDe } from '../helpers/identity';
import { iniciarSuite, SuiteDeTeste } from '../helpers/suite';

/*
 * DESIGN §8: producers behind HTTP fail fast (503) when Redis is down instead of hanging. Down
 * includes a Redis that stops answering on a connection still open (a paused server, a network
 * partition, a failover): here a proxy in front of the real Redis stops passing bytes either way,
 * as a paused server would, and passes them again, in order, when it resumes.
 */

/** A TCP proxy to the real Redis that can hold every byte, both ways, until resumed. */
function proxyDoRedis(destino: URL) {
  const pares: net.Socket[][] = [];
  let parado = false;
  const servidor = net.createServer((cliente) => {
    const redis = net.connect(Number(destino.port || 6379), destino.hostname);
    cliente.pipe(redis);
    redis.pipe(cliente);
    const fechar = () => {
      cliente.destroy();
      redis.destroy();
    };
    cliente.on('error', fechar).on('close', fechar);
    redis.on('error', fechar).on('close', fechar);
    pares.push([cliente, redis]);
    if (parado) [cliente, redis].forEach((s) => s.pause());
  });
  return {
    abrir: () => new Promise<string>((r) => servidor.listen(0, '127.0.0.1', () => r(`redis://127.0.0.1:${(servidor.address() as net.AddressInfo).port}`))),
    parar: () => {
      parado = true;
      pares.flat().forEach((s) => s.pause());
    },
    retomar: () => {
      parado = false;
      pares.flat().forEach((s) => s.resume());
    },
    fechar: () => {
      pares.flat().forEach((s) => s.destroy());
      return new Promise<void>((r) => servidor.close(() => r()));
    },
  };
}

const proxy = proxyDoRedis(new URL(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379'));
let suite: SuiteDeTeste;

beforeAll(async () => {
  const url = await proxy.abrir();
  suite = await iniciarSuite(['identity', 'leads'], { workers: false, env: { REDIS_URL: url } });
});
afterAll(async () => {
  proxy.retomar();
  await suite?.encerrar();
  await proxy.fechar();
});

/** The answer, or null when none came within `ms`. */
const dentroDe = <T>(p: Promise<T>, ms: number) => Promise.race([p, new Promise<null>((r) => setTimeout(() => r(null), ms))]);

test('a Redis that stops answering: the rate-limited lookup falls back to its in-memory count and answers, a listing needing Redis and readiness answer 503, each within seconds; resumed, all is as before', async () => {
  const leads = cliente(suite.url.leads);
  const cnpj = '11222333000181';
  expect((await leads.get(`/api/cnpj/${cnpj}`)).status).toBe(404);
  const master = await identityDe(suite.url.identity).admin();

  proxy.parar();
  try {
    const limite = PRAZO_DO_COMANDO_MS + 2000;
    const consulta = dentroDe(leads.get(`/api/cnpj/${cnpj}`), limite);
    // lookups arriving while the first one's count waits: their counts wait for its batch, then
    // for the connection to be dropped, not for one more deadline of their own
    await dormir(500);
    const seguintes = await Promise.all(Array.from({ length: 3 }, () => dentroDe(leads.get(`/api/cnpj/${cnpj}`), PRAZO_DO_COMANDO_MS)));
    expect(seguintes.map((r) => r?.status)).toEqual([404, 404, 404]);
    expect((await consulta)?.status).toBe(404);
    // the rate limits' connection, silent that long, was dropped: the next lookups are counted in
    // memory at once, not each one behind another deadline
    for (let i = 0; i < 3; i++) expect((await dentroDe(leads.get(`/api/cnpj/${cnpj}`), 1000))?.status).toBe(404);
    // its count is cached in Redis: unanswered, the listing is a dependency away (503), not an internal error
    const listagem = await dentroDe(leads.get('/api/empresas', { token: master, query: { uf: 'SP' } }), limite);
    expect(listagem?.status).toBe(503);
    // when to try again: webhook senders and clients wait for it
    expect(listagem!.headers.get('retry-after')).toBe('5');
    expect(esperarProblema(listagem!, 503).detail).not.toMatch(/timed out|Redis/i);
    const pronto = await dentroDe(leads.get('/pronto'), limite);
    expect(pronto?.status).toBe(503);
    esperarProblema(pronto!, 503);
  } finally {
    proxy.retomar();
  }
  // the commands held meanwhile are answered in order; the connection serves again
  expect((await leads.get('/pronto')).status).toBe(200);
  expect((await leads.get(`/api/cnpj/${cnpj}`)).status).toBe(404);
}, 30_000);
