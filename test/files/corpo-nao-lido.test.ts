import { once } from 'node:events';
import http from 'node:http';
import net from 'node:net';
import nock from 'nock';
import { postComExpectativa } from '../helpers/http';
import { iniciarSuite, SuiteDeTeste } from '../helpers/suite';
import { bytesAleatorios, filesDe } from './apoio';

/**
 * The files server lets a request take FILES_PRAZO_DO_ENVIO_S to arrive (an hour here), for its
 * uploads. Only an upload it accepted gets that long: a body a route does not read, however
 * slowly it comes, is answered and its connection closed in stages (our side ends after the
 * answer, what still comes is dropped for at most 2 seconds), whatever the route and the status.
 * A client sending complete bodies keeps its connection.
 */

/** The 2 seconds a closing connection is given, and a margin: far below the hour of an upload. */
const LIMITE_MS = 3500;

// node's own http: nock's interception stands between client and server (no real keep-alive)
nock.restore();

let suite: SuiteDeTeste;
let files: ReturnType<typeof filesDe>;
let app: { id: string; token: string };

beforeAll(async () => {
  suite = await iniciarSuite(['identity', 'files'], { workers: false, env: { FILES_PRAZO_DO_ENVIO_S: '3600' } });
  files = filesDe(suite);
  app = await files.novoAplicativo();
});
afterAll(() => suite.encerrar());

/**
 * Sends `linha` (method and target) declaring a body of 100,000 bytes and then gives a byte of it
 * every 200 ms, never the whole, going on after the answer (half-open, as a client busy sending).
 * Answers the answer's head and whether the connection closed within the wait it is given, and a
 * margin.
 */
async function corpoAContaGotas(linha: string, cabecalhos: Record<string, string> = {}) {
  const url = new URL(suite.url.files);
  const socket = net.connect({ port: Number(url.port), host: url.hostname, allowHalfOpen: true });
  await once(socket, 'connect');
  socket.on('error', () => undefined);
  const extras = Object.entries(cabecalhos).map(([k, v]) => `${k}: ${v}\r\n`);
  socket.write(`${linha} HTTP/1.1\r\nHost: ${url.host}\r\n${extras.join('')}Content-Length: 100000\r\n\r\nx`);
  let resposta = '';
  socket.on('data', (d) => (resposta += d));
  const gotas = setInterval(() => socket.writable && socket.write('x'), 200);
  try {
    const fechou = await Promise.race([new Promise<boolean>((r) => socket.once('close', () => r(true))), new Promise<boolean>((r) => setTimeout(() => r(false), LIMITE_MS))]);
    const cabeca = resposta.slice(0, resposta.indexOf('\r\n\r\n')).toLowerCase().split('\r\n');
    return { status: cabeca[0], connection: cabeca.find((c) => c.startsWith('connection:')), fechou };
  } finally {
    clearInterval(gotas);
    socket.destroy();
  }
}

const fechadaLogo = (status: string) => ({ status, connection: 'connection: close', fechou: true });

test('a body a route does not read, trickled slowly, gets its answer and its connection closed within seconds, not at the upload deadline: public routes, a signed download and an application route alike', async () => {
  const enviado = await files.enviar(app.token, 'guardado.txt', 'conteúdo');
  expect(enviado.status).toBe(201);
  const download = new URL(enviado.body.url);
  const baixar = `${download.pathname}${download.search}`;
  const token = { authorization: `Bearer ${app.token}` };
  // at once, each on its own connection: with the rule missing, each would wait for the limit
  const casos = {
    saude: corpoAContaGotas('GET /saude'),
    openapi: corpoAContaGotas('GET /openapi.json'),
    pronto: corpoAContaGotas('GET /pronto'),
    options: corpoAContaGotas('OPTIONS /arquivo'),
    download: corpoAContaGotas(`GET ${baixar}`),
    cabecalhosDoDownload: corpoAContaGotas(`HEAD ${baixar}`),
    lista: corpoAContaGotas('GET /arquivo', token),
    arquivoDesconhecido: corpoAContaGotas('GET /arquivo/01900000-0000-7000-8000-000000000000', token),
  };
  const resultados = Object.fromEntries(await Promise.all(Object.entries(casos).map(async ([k, p]) => [k, await p])));
  expect(resultados).toEqual({
    saude: fechadaLogo('http/1.1 200 ok'),
    openapi: fechadaLogo('http/1.1 200 ok'),
    pronto: fechadaLogo('http/1.1 200 ok'),
    options: fechadaLogo('http/1.1 204 no content'),
    download: fechadaLogo('http/1.1 200 ok'),
    cabecalhosDoDownload: fechadaLogo('http/1.1 200 ok'),
    lista: fechadaLogo('http/1.1 200 ok'),
    arquivoDesconhecido: fechadaLogo('http/1.1 404 not found'),
  });
});

/** One request through `agente`, its body (if any) sent whole; answers the status, `Connection` and the socket it went on. */
function pedir(agente: http.Agent, metodo: string, caminho: string, o: { token?: string; corpo?: Buffer } = {}) {
  return new Promise<{ status: number; connection?: string; socket: net.Socket }>((resolve, reject) => {
    const url = new URL(caminho, suite.url.files);
    const headers: Record<string, string> = { ...(o.token && { authorization: `Bearer ${o.token}` }), ...(o.corpo && { 'content-length': String(o.corpo.length) }) };
    const req = http.request(url, { method: metodo, agent: agente, headers }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode!, connection: res.headers.connection, socket: req.socket! }));
    });
    req.on('error', reject);
    req.end(o.corpo);
  });
}

test('a keep-alive client sending complete bodies, or none, keeps its one connection, through its 401 and 404 too; a body the route leaves unread, trickled on it, closes it at the answer', async () => {
  const agente = new http.Agent({ keepAlive: true, maxSockets: 1 });
  try {
    const respostas = [await pedir(agente, 'GET', '/saude'), await pedir(agente, 'POST', '/arquivo?nome=a.bin', { token: app.token, corpo: bytesAleatorios(40_000) })];
    const enviado = await files.api.get('/arquivo?tamanho=1', { token: app.token });
    const id = enviado.body.itens[0].id as string;
    respostas.push(
      await pedir(agente, 'GET', `/arquivo/${id}`, { token: app.token }),
      await pedir(agente, 'POST', '/arquivo?nome=b.txt', { token: app.token, corpo: Buffer.from('bê') }),
      // refusals of requests without a body, answered at once, before Node has parsed their end
      await pedir(agente, 'GET', '/arquivo'),
      await pedir(agente, 'GET', '/arquivos'),
      await pedir(agente, 'DELETE', `/arquivo/${id}`, { token: app.token }),
      await pedir(agente, 'GET', '/saude'),
    );
    expect(respostas.map((r) => [r.status, r.connection])).toEqual([
      [200, 'keep-alive'],
      [201, 'keep-alive'],
      [200, 'keep-alive'],
      [201, 'keep-alive'],
      [401, 'keep-alive'],
      [404, 'keep-alive'],
      [204, 'keep-alive'],
      [200, 'keep-alive'],
    ]);
    const socket = respostas[0].socket;
    expect(respostas.every((r) => r.socket === socket)).toBe(true);
    expect(socket.destroyed).toBe(false);

    // the same connection, a body /saude does not read, sent a byte at a time
    const inicio = Date.now();
    const req = http.request(new URL('/saude', suite.url.files), { method: 'GET', agent: agente, headers: { 'content-length': '100000' } });
    req.on('error', () => undefined);
    const resposta = new Promise<http.IncomingMessage>((r) => req.on('response', r));
    req.write('x');
    const gotas = setInterval(() => !req.destroyed && req.write('x'), 200);
    try {
      expect((await resposta).headers.connection).toBe('close');
      expect(req.socket).toBe(socket);
      const fechou = await Promise.race([new Promise<boolean>((r) => socket.once('close', () => r(true))), new Promise<boolean>((r) => setTimeout(() => r(false), LIMITE_MS - (Date.now() - inicio)))]);
      expect(fechou).toBe(true);
    } finally {
      clearInterval(gotas);
    }
  } finally {
    agente.destroy();
  }
});

test('an accepted upload arriving slowly, for longer than a closing connection is given, is stored; a body left unread beside it closes within seconds', async () => {
  const pedacos = Array.from({ length: 15 }, () => bytesAleatorios(1024));
  const [envio, saude] = await Promise.all([
    files.enviarEmPedacos(app.token, 'devagar.bin', pedacos, 'application/octet-stream', 250),
    corpoAContaGotas('GET /saude'),
  ]);
  expect(envio.status).toBe(201);
  expect(envio.body.tamanho).toBe(15 * 1024);
  expect(saude).toEqual(fechadaLogo('http/1.1 200 ok'));
});

/** A POST to file storage with `Expect: 100-continue`, of `tamanho` random bytes. */
const comExpectativa = (caminho: string, o: { token?: string; tamanho: number; expect?: string }) =>
  postComExpectativa(new URL(caminho, suite.url.files), bytesAleatorios(o.tamanho), {
    headers: o.token ? { authorization: `Bearer ${o.token}` } : {},
    expect: o.expect,
  });

test('Expect: 100-continue: a body the route refuses unread is answered instead of the 100 (no token, past the size limit), one it takes gets the 100 and is stored; another expectation is a 417 problem', async () => {
  const grande = 26 * 1024 * 1024; // past FILES_TAMANHO_MAXIMO_MB's 25
  expect(await comExpectativa('/arquivo?nome=a.bin', { tamanho: 50_000 })).toMatchObject({ continuou: false, status: 401 });
  expect(await comExpectativa('/arquivo?nome=a.bin', { token: app.token, tamanho: grande })).toMatchObject({ continuou: false, status: 413 });
  expect(await comExpectativa('/arquivo?nome=a.bin', { token: app.token, tamanho: 50_000 })).toMatchObject({ continuou: true, status: 201 });
  expect(await comExpectativa('/arquivo?nome=a.bin', { token: app.token, tamanho: 10, expect: 'algo-mais' })).toEqual({ continuou: false, status: 417, tipo: 'application/problem+json' });
});
