import http from 'node:http';
import { AddressInfo, Socket } from 'node:net';
import nock from 'nock';
import { enviarPost } from '../../api/hub/envio';
import { encerrar } from '../../lib/lifecycle';
import { esperarAte } from '../helpers/espera';

/**
 * One delivery POST over the hub's kept-alive connections (api/hub/envio.ts), against a real
 * subscriber on loopback (LOCALHOST allows private destinations).
 */

let server: http.Server;
let url: string;
/** per connection, the requests it carried; a connection closes without answering its `fecharNa`-th */
const porConexao = new Map<Socket, number>();
let fecharNa = 0;
let recebidas = 0;
/** arrivals of each body; `{"lento":...}` is answered only after a second */
const chegadas = new Map<string, number>();

beforeAll(async () => {
  // nock's interception of node's http makes a new connection per request: this file's calls are
  // all on loopback, so node's own http runs, reusing kept-alive connections as in production
  nock.restore();
  server = http.createServer((req, res) => {
    const n = (porConexao.get(req.socket) ?? 0) + 1;
    porConexao.set(req.socket, n);
    let corpo = '';
    req.on('data', (p: Buffer) => (corpo += p.toString('utf8')));
    req.on('end', () => {
      chegadas.set(corpo, (chegadas.get(corpo) ?? 0) + 1);
      if (n === fecharNa) {
        // as a subscriber whose idle time-out ends just as the hub reuses the connection
        req.socket.destroy();
        return;
      }
      recebidas++;
      if (corpo.startsWith('{"lento"')) setTimeout(() => res.end('ok'), 1000);
      // the status line at once, the body never: the attempt times out with the status known
      else if (corpo.startsWith('{"sem_fim"')) res.writeHead(202).write('começo');
      // an error page begun, then the connection cut
      // a status and a Retry-After named in the body: {"status":503,"retry_after":"..."}
      else if (corpo.startsWith('{"status"')) {
        const { status, retry_after } = JSON.parse(corpo);
        res.writeHead(status, { 'retry-after': retry_after }).end('volte depois');
      }
      // {"jorro":status}: that status, then a body that never ends, as fast as it is read
      else if (corpo.startsWith('{"jorro"')) {
        res.writeHead(JSON.parse(corpo).jorro);
        const pedaco = Buffer.alloc(16 * 1024, 'x');
        const escrever = () => {
          while (!res.destroyed && res.write(pedaco));
          if (!res.destroyed) res.once('drain', escrever);
        };
        escrever();
      }
      else if (corpo.startsWith('{"cortada"')) {
        res.writeHead(500).write('erro: banco fora');
        setTimeout(() => req.socket.destroy(), 50);
      }
      else res.end('ok');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhook`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

test('a kept-alive connection closed by the subscriber as it is reused is not a failed attempt: the POST goes once more on a new connection', async () => {
  fecharNa = 2;
  expect(await enviarPost(url, '{"n":1}', {}, 5000)).toMatchObject({ status: 200, erro: null, resposta: 'ok' });
  expect(porConexao.size).toBe(1);
  const r = await enviarPost(url, '{"n":2}', {}, 5000);
  expect(r).toMatchObject({ status: 200, erro: null, resposta: 'ok' });
  expect(porConexao.size).toBe(2);
  expect(recebidas).toBe(2);
});

test('a new connection closed before any answer still fails the attempt', async () => {
  server.closeAllConnections();
  porConexao.clear();
  fecharNa = 1;
  const r = await enviarPost(url, '{"n":3}', {}, 5000);
  expect(r.status).toBeNull();
  expect(r.erro).toMatch(/^falha de conexão: /);
  expect(porConexao.size).toBe(1);
});

test('an answer whose body does not arrive in time fails the attempt, and keeps the status and the body it had sent', async () => {
  server.closeAllConnections();
  fecharNa = 0;
  const r = await enviarPost(url, '{"sem_fim":1}', {}, 300);
  expect(r).toMatchObject({ status: 202, erro: 'tempo limite de 300 ms esgotado', resposta: 'começo' });
});

test('an answer whose body goes on without end is decided on its status once 64 KiB of it came, not held until the time-out', async () => {
  server.closeAllConnections();
  fecharNa = 0;
  for (const [status, erro] of [[200, null], [500, 'HTTP 500']] as const) {
    const inicio = Date.now();
    const r = await enviarPost(url, `{"jorro":${status}}`, {}, 10_000);
    expect(r).toMatchObject({ status, erro, resposta: 'x'.repeat(1024) });
    expect(Date.now() - inicio).toBeLessThan(5_000);
  }
});

test('an answer cut mid-body fails the attempt and keeps what came of it', async () => {
  server.closeAllConnections();
  fecharNa = 0;
  const r = await enviarPost(url, '{"cortada":1}', {}, 5000);
  expect(r).toMatchObject({ status: 500, resposta: 'erro: banco fora' });
  expect(r.erro).toEqual(expect.any(String));
});

test('an attempt cut by the hub shutting down is not sent again on a new connection: the subscriber may be handling it', async () => {
  server.closeAllConnections();
  porConexao.clear();
  fecharNa = 0;
  expect((await enviarPost(url, '{"n":4}', {}, 5000)).status).toBe(200); // a kept-alive connection to reuse
  const corpo = '{"lento":1}';
  const envio = enviarPost(url, corpo, {}, 5000);
  await esperarAte(() => chegadas.get(corpo) === 1, 'the slow call reaching the subscriber');
  await encerrar(); // closes the hub's connections, this one included (last test: nothing else runs after it)
  const r = await envio;
  expect(r).toMatchObject({ status: null, erro: 'tentativa interrompida pelo encerramento do hub', interrompido: true });
  await new Promise((ok) => setTimeout(ok, 200));
  expect(chegadas.get(corpo)).toBe(1);
});

test('a Retry-After is read from a 429 or 503, in seconds or as an HTTP date, and ignored on any other status or when unreadable', async () => {
  const com = (status: number, retry_after: string) => enviarPost(url, JSON.stringify({ status, retry_after }), {}, 5000);
  expect((await com(503, '7')).retryAfterMs).toBe(7000);
  const data = await com(429, new Date(Date.now() + 30_000).toUTCString());
  // an HTTP date has whole seconds: 29 to 30 s from now
  expect(data.retryAfterMs).toBeGreaterThan(28_000);
  expect(data.retryAfterMs).toBeLessThanOrEqual(30_000);
  expect((await com(503, new Date(Date.now() - 60_000).toUTCString())).retryAfterMs).toBe(0);
  expect((await com(503, 'amanhã')).retryAfterMs).toBeUndefined();
  // an HTTP date is GMT, whatever the host's zone: the obsolete forms too (asctime does not say so),
  // while a date with no zone, or another one, is no HTTP date
  const em = new Date(Math.ceil((Date.now() + 3_600_000) / 1000) * 1000);
  const [semana, dia, mes, ano, hora] = em.toUTCString().replace(',', '').split(' ');
  const formas = [`${semana} ${mes} ${dia.padStart(2, ' ')} ${hora} ${ano}`, `${semana}, ${dia}-${mes}-${ano.slice(2)} ${hora} GMT`];
  for (const forma of formas) {
    const ms = (await com(503, forma)).retryAfterMs!;
    expect([forma, Math.abs(ms - (em.getTime() - Date.now())) < 5_000]).toEqual([forma, true]);
  }
  expect((await com(503, `${semana}, ${dia} ${mes} ${ano} ${hora}`)).retryAfterMs).toBeUndefined();
  expect((await com(503, `${em.toISOString()}`)).retryAfterMs).toBeUndefined();
  expect((await com(503, '1e3')).retryAfterMs).toBeUndefined();
  expect((await com(500, '7')).retryAfterMs).toBeUndefined();
  expect((await com(200, '7')).retryAfterMs).toBeUndefined();
});
