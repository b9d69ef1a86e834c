import http from 'node:http';
import { AddressInfo } from 'node:net';
import { text } from 'node:stream/consumers';
import nock from 'nock';
import { baixarAnexo } from '../../api/sales/download';
import { config, loadConfig } from '../../config';

/**
 * The attachment download's SSRF guard (api/sales/download.ts) on connections kept alive: a
 * download outside the chat platform's origin never reaches a private address, even through a
 * socket the platform's own download left open to it.
 */

// node's own http, so sockets are pooled and resolved as in production
nock.restore();

let servidor: http.Server;
let porta: number;
const pedidos: string[] = [];

beforeAll(async () => {
  loadConfig();
  servidor = http.createServer((req, res) => {
    pedidos.push(req.url!);
    res.writeHead(200, { 'content-type': 'text/plain' }).end('interno');
  });
  servidor.keepAliveTimeout = 30_000;
  await new Promise<void>((r) => servidor.listen(0, '127.0.0.1', r));
  porta = (servidor.address() as AddressInfo).port;
});

afterAll(async () => {
  servidor.closeAllConnections();
  await new Promise((r) => servidor.close(r));
});

it('a guarded download does not take a socket the chat platform\'s own download left open to a private address', async () => {
  config().sales.permitirDownloadsPrivados = false;
  const sinal = new AbortController().signal;
  const plataforma = `http://localhost:${porta}`;
  // the platform is trusted with its private address: read whole, its socket goes back to the pool
  const proprio = await baixarAnexo(`${plataforma}/rails/active_storage/blobs/a.txt`, { enderecoDoSuporte: plataforma, tokenApi: null, sinal });
  expect(await text(proprio.bytes)).toBe('interno');
  await new Promise((r) => setImmediate(r));

  // another system's webhook naming the same host and port
  await expect(baixarAnexo(`${plataforma}/segredo`, { enderecoDoSuporte: 'https://outro-suporte.exemplo.test', tokenApi: null, sinal })).rejects.toThrow(
    'destino em endereço privado recusado',
  );
  expect(pedidos).toEqual(['/rails/active_storage/blobs/a.txt']);
});
