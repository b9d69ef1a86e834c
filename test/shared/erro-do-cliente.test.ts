import net, { AddressInfo } from 'node:net';
import http from 'node:http';
import express from 'express';
import { escutar } from '../../lib/http-server';

/**
 * What Node refuses before any route sees it (DESIGN §4: errors are problem+json): a request it
 * cannot parse, headers past its limit, a request that does not arrive in time.
 */

let servidor: http.Server;
let porta: number;

beforeAll(async () => {
  const app = express();
  app.get('/x', (_req, res) => res.json({ ok: true }));
  servidor = await escutar(app, 0, 'teste-erro-do-cliente', '127.0.0.1', 400);
  porta = (servidor.address() as AddressInfo).port;
});
afterAll(() => new Promise((r) => (servidor.closeAllConnections(), servidor.close(r))));

/** Writes `enviar` on a new connection (each string in turn) and reads until the server closes it. */
function conversar(...enviar: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(porta, '127.0.0.1');
    let recebido = '';
    socket.on('data', (p) => {
      recebido += p;
      // the next string once an answer came (a request after another on a kept-alive connection)
      const proximo = enviar.shift();
      if (proximo !== undefined) socket.write(proximo);
    });
    socket.on('close', () => resolve(recebido));
    socket.on('error', reject);
    socket.write(enviar.shift()!);
  });
}

/** The status, the Content-Type and the body of an answer read off the wire. */
function lerResposta(bruto: string) {
  const [cabeca, corpo] = bruto.split('\r\n\r\n');
  return {
    status: Number(cabeca.split(' ')[1]),
    tipo: /content-type: ([^\r]+)/i.exec(cabeca)?.[1],
    conexao: /connection: ([^\r]+)/i.exec(cabeca)?.[1],
    corpo: JSON.parse(corpo),
  };
}

test.each([
  ['a request line Node cannot parse', ['NADA DISSO\r\n\r\n'], 400],
  ['headers past the limit', [`GET /x HTTP/1.1\r\nHost: x\r\nX-Grande: ${'a'.repeat(20_000)}\r\n\r\n`], 431],
  ['a request whose headers do not arrive in time', ['GET /x HTTP/1.1\r\nHost: x\r\n'], 408],
])('%s: problem+json, and the connection closed', async (_caso, enviar, status) => {
  const r = lerResposta(await conversar(...enviar));
  expect(r).toEqual({
    status,
    tipo: 'application/problem+json',
    conexao: 'close',
    corpo: { type: 'urn:problema:requisicao_invalida', title: expect.any(String), status, detail: expect.any(String), code: 'requisicao_invalida' },
  });
});

test('on a kept-alive connection that was already answered, a request Node cannot parse gets nothing written after that answer', async () => {
  const bruto = await conversar('GET /x HTTP/1.1\r\nHost: x\r\n\r\n', 'NADA DISSO\r\n\r\n');
  expect(bruto.match(/HTTP\/1\.1 /g)).toHaveLength(1);
  expect(bruto).toMatch(/^HTTP\/1\.1 200 /);
});
