import http from 'node:http';
import { AddressInfo, Socket } from 'node:net';
import nock from 'nock';
import { agentesDeSaida } from '../../lib/conexoes-de-saida';
import { esperarAte } from '../helpers/espera';

/**
 * The keep-alive agents of outgoing HTTP (lib/conexoes-de-saida.ts): a connection is reused while
 * in use, and closed once idle past its time-out, even to a server that never closes idle ones.
 */

// node's own http: the agents' sockets are the test's subject
nock.restore();

let servidor: http.Server;
let porta: number;
const abertas = new Set<Socket>();

beforeAll(async () => {
  servidor = http.createServer((req, res) => {
    // slower than the idle time-out: a request in flight is not cut by it
    setTimeout(() => res.end(req.url), req.url === '/lenta' ? 2_500 : 0);
  });
  // never closes an idle connection of its own accord
  servidor.keepAliveTimeout = 0;
  servidor.on('connection', (s) => {
    abertas.add(s);
    s.on('close', () => abertas.delete(s));
  });
  await new Promise<void>((r) => servidor.listen(0, '127.0.0.1', r));
  porta = (servidor.address() as AddressInfo).port;
});
afterAll(async () => {
  servidor.closeAllConnections();
  await new Promise((r) => servidor.close(r));
});

const pedir = (agent: http.Agent, caminho: string) =>
  new Promise<string>((resolve, reject) => {
    http.get({ host: '127.0.0.1', port: porta, path: caminho, agent }, (res) => {
      let corpo = '';
      res.on('data', (d) => (corpo += d));
      res.on('end', () => resolve(corpo));
    }).on('error', reject);
  });

test('an idle connection is closed after the time-out; one in use is reused and not cut, however slow its answer', async () => {
  // a second idle: a loaded machine's pause between the two requests does not close it first
  const agentes = agentesDeSaida(1_000);
  try {
    expect(await pedir(agentes['http:'], '/lenta')).toBe('/lenta');
    expect(await pedir(agentes['http:'], '/rapida')).toBe('/rapida');
    // one connection served both
    expect(abertas.size).toBe(1);
    await esperarAte(async () => abertas.size === 0, 'the idle connection closed by the agent');
  } finally {
    agentes['http:'].destroy();
  }
});
