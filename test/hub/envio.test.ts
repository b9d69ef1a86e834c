import http from 'node:http';
import { AddressInfo, Socket } from 'node:net';
import nock from 'nock';
import { enviarPost } from '../../api/hub/envio';

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

beforeAll(async () => {
  // nock's interception of node's http makes a new connection per request: this file's calls are
  // all on loopback, so node's own http runs, reusing kept-alive connections as in production
  nock.restore();
  server = http.createServer((req, res) => {
    const n = (porConexao.get(req.socket) ?? 0) + 1;
    porConexao.set(req.socket, n);
    req.resume();
    req.on('end', () => {
      if (n === fecharNa) {
        // as a subscriber whose idle time-out ends just as the hub reuses the connection
        req.socket.destroy();
        return;
      }
      recebidas++;
      res.end('ok');
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
