import type { Registro } from '../helpers/registros';

const mockRegistros: Registro[] = [];
jest.mock('../../lib/logger', () => jest.requireActual('../helpers/registros').loggerQueRegistra(['filas', 'worker'], ['warn', 'error'], () => mockRegistros));

import IORedis from 'ioredis';
import { config, resetConfig } from '../../config';
import { encerrar } from '../../lib/lifecycle';
import { DefinicaoDeFila, eventosDaFila, fila, iniciarWorker } from '../../queues/fila';
import { dormir, esperarAte } from '../helpers/espera';
import { proxyQueCai } from '../helpers/proxy';
import { limparDados } from '../helpers/suite';

/*
 * While Redis is away every connection of every queue fails at each reconnection: the queues, their
 * events and their workers each said so at every try (about 60 lines every 5 s in `suite start`).
 * The same error is now logged once a minute per process, then with how many were not. And the
 * shutdown after such an outage ends: BullMQ's close of a queue's events waited, now and then,
 * for a read that a connection closed while reconnecting never settles.
 */

const real = new URL(config().redisUrl);
const proxy = proxyQueCai(real.hostname, Number(real.port || 6379));
const urlAntes = process.env.REDIS_URL;
const defs: DefinicaoDeFila[] = [1, 2, 3].map((n) => ({ nome: `teste-redis-fora-${n}`, servico: 'hub', descricao: 'fila de teste', opcoesDosJobs: {} }));

beforeAll(async () => {
  const url = new URL(real);
  url.hostname = '127.0.0.1';
  url.port = String(await proxy.abrir());
  process.env.REDIS_URL = url.toString();
  resetConfig();
});
afterAll(async () => {
  proxy.voltar();
  // what a failed test left open (the test closes it itself)
  await encerrar();
  await limparDados([]);
  await proxy.fechar();
  if (urlAntes === undefined) delete process.env.REDIS_URL;
  else process.env.REDIS_URL = urlAntes;
  resetConfig();
});

test("a queue's events hold one connection of their own: the one given to BullMQ, which reads on a copy, is never opened", async () => {
  const direta = new IORedis(config().redisUrl);
  try {
    const def = defs[0];
    await eventosDaFila(def).waitUntilReady();
    const lista = (await direta.client('LIST')) as string;
    const nomes = lista.split('\n').map((l) => /\bname=(\S*)/.exec(l)?.[1]).filter(Boolean);
    expect(nomes).not.toContain(`eventos:${def.nome}`);
    expect(nomes.filter((n) => n!.includes(Buffer.from(def.nome).toString('base64')) || n!.includes(def.nome)).length).toBeGreaterThanOrEqual(1);
  } finally {
    direta.disconnect();
  }
});

test('three queues, their events and workers with Redis out of reach for seconds: each kind of error once, then again a minute later with the count of those not logged', async () => {
  const feitos: string[] = [];
  for (const def of defs) {
    iniciarWorker(def, async (job) => void feitos.push(job.data.n));
    await eventosDaFila(def).waitUntilReady();
  }
  await fila(defs[0]).add('antes', { n: 'antes' });
  await esperarAte(() => feitos.includes('antes'), 'a job before the outage');
  mockRegistros.splice(0);

  proxy.cair();
  // several reconnections of each connection (ioredis waits 2 s at most between them)
  await dormir(6000);
  const tentativas = mockRegistros.length;
  const tipos = new Set(mockRegistros.map((r) => r.args[1]));
  expect([...tipos].sort()).toEqual(expect.arrayContaining(['erro no worker']));
  // one line per kind of error and message, whatever the number of queues and reconnections
  const porTipo = new Map<string, number>();
  for (const r of mockRegistros) {
    const chave = `${r.args[1]}\n${((r.args[0] as { err: Error }).err).message}`;
    porTipo.set(chave, (porTipo.get(chave) ?? 0) + 1);
  }
  expect([...porTipo.values()].every((n) => n === 1)).toBe(true);

  // a minute later, the same errors are said again, with how many were not
  const agora = Date.now();
  const relogio = jest.spyOn(Date, 'now').mockImplementation(() => agora + 61_000);
  try {
    await esperarAte(() => mockRegistros.length > tentativas, 'the error said again after a minute');
  } finally {
    relogio.mockRestore();
  }
  const depois = mockRegistros.slice(tentativas);
  expect(depois.some((r) => ((r.args[0] as { repetidos_sem_registro?: number }).repetidos_sem_registro ?? 0) > 0)).toBe(true);

  proxy.voltar();
  await fila(defs[1]).add('depois', { n: 'depois' }).catch(() => undefined);
  await esperarAte(async () => {
    if (!feitos.includes('depois')) await fila(defs[1]).add('depois', { n: 'depois' }).catch(() => undefined);
    return feitos.includes('depois');
  }, 'a job once Redis is back', 20_000, 500);

  const inicio = Date.now();
  await encerrar();
  // before the forced exit a signal's shutdown would come to (lib/lifecycle.ts encerrarESair)
  expect(Date.now() - inicio).toBeLessThan(config().shutdownGraceMs + 5000);
}, 60_000);
