import net, { AddressInfo } from 'node:net';
import http from 'node:http';
import express from 'express';
import Joi from 'joi';
import { criarApp } from '../../api/shared/app';
import { naoAutenticado } from '../../api/shared/errors';
import { escutar } from '../../lib/http-server';
import { postComExpectativa } from '../helpers/http';

/**
 * What Node refuses before any route sees it (DESIGN §4: errors are problem+json): a request it
 * cannot parse, headers past its limit, a request that does not arrive in time.
 */

let servidor: http.Server;
let porta: number;
/** Requests the POST route handled. */
let rodadas = 0;

beforeAll(async () => {
  const app = express();
  app.get('/x', (_req, res) => res.json({ ok: true }));
  app.post('/contar', express.json(), (_req, res) => {
    rodadas++;
    res.json({ ok: true });
  });
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
    // writing after the server closed its end fails: what it answered is what counts
    socket.on('error', (err) => (recebido ? undefined : reject(err)));
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

test('on a kept-alive connection whose answer was given, a request Node cannot parse is answered too, then the connection closed', async () => {
  const [primeira, segunda] = (await conversar('GET /x HTTP/1.1\r\nHost: x\r\n\r\n', 'NADA DISSO\r\n\r\n')).split(/(?=HTTP\/1\.1 )/);
  expect(primeira).toMatch(/^HTTP\/1\.1 200 /);
  expect(lerResposta(segunda)).toMatchObject({ status: 400, tipo: 'application/problem+json' });
});

test('a request whose body does not arrive in time gets its 408 and goes no further: the route never runs', async () => {
  const antes = rodadas;
  // the body's rest sent once the 408 came: a server that only ended its side would read it and run the route
  const cabecalho = 'POST /contar HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n';
  const bruto = await conversar(`${cabecalho}{"a":`, `1${' '.repeat(93)}}`);
  expect(lerResposta(bruto).status).toBe(408);
  await new Promise((resolve) => setTimeout(resolve, 300));
  expect(rodadas).toBe(antes);
});

const PROBLEMA = expect.stringMatching(/^application\/problem\+json/);
const COMO_JSON = expect.stringMatching(/^application\/json/);

/** A JSON POST to `portaDoServidor` with `Expect: 100-continue` (postComExpectativa). */
const comExpectativa = (portaDoServidor: number, caminho: string, corpo: string, tamanho?: number, autorizacao?: string) =>
  postComExpectativa(new URL(caminho, `http://127.0.0.1:${portaDoServidor}`), corpo, {
    headers: { 'content-type': 'application/json', ...(autorizacao && { authorization: autorizacao }) },
    tamanho,
  });

test("Expect: 100-continue on a suite route: a body declared past its limit, or sent without a valid token, is refused without the 100; one within it is asked for", async () => {
  const app = criarApp({
    nome: 'teste-expect',
    info: { title: 'teste', version: '0' },
    rotas: [
      { metodo: 'post', caminho: '/eco', operacao: 'eco', resumo: 'eco', acesso: 'publico', validar: { body: Joi.object({ nome: Joi.string() }) }, tratar: (req) => req.entrada.body },
      { metodo: 'post', caminho: '/privada', operacao: 'privada', resumo: 'privada', acesso: 'usuario', validar: { body: Joi.object({ nome: Joi.string() }) }, tratar: (req) => req.entrada.body },
    ],
    autenticar: async () => {
      throw naoAutenticado();
    },
    pronto: async () => undefined,
  });
  const suite = await escutar(app, 0, 'teste-expect', '127.0.0.1');
  try {
    const p = (suite.address() as AddressInfo).port;
    expect(await comExpectativa(p, '/eco', '{"nome":"x"}', 2 * 1024 * 1024)).toEqual({ continuou: false, status: 413, tipo: PROBLEMA });
    expect(await comExpectativa(p, '/eco', '{"nome":"x"}')).toEqual({ continuou: true, status: 200, tipo: COMO_JSON });
    // a route that takes a token checks it before the body: without one, or with one refused, the body is never asked for
    expect(await comExpectativa(p, '/privada', '{"nome":"x"}')).toEqual({ continuou: false, status: 401, tipo: PROBLEMA });
    expect(await comExpectativa(p, '/privada', '{"nome":"x"}', undefined, 'Bearer um.token.qualquer')).toEqual({ continuou: false, status: 401, tipo: PROBLEMA });
  } finally {
    await new Promise((r) => (suite.closeAllConnections(), suite.close(r)));
  }
});

test('Expect: 100-continue on a JSON route: the 100 comes as the body is read, then the answer (a client waiting for it would otherwise wait for ever)', async () => {
  const antes = rodadas;
  expect(await comExpectativa(porta, '/contar', JSON.stringify({ a: 1 }))).toEqual({ continuou: true, status: 200, tipo: COMO_JSON });
  expect(rodadas).toBe(antes + 1);
});
