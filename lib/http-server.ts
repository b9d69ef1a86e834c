import http, { STATUS_CODES } from 'node:http';
import net, { AddressInfo } from 'node:net';
import { Duplex } from 'node:stream';
import { Express } from 'express';
import { config } from '../config';
import { aoEncerrar } from './lifecycle';
import { logger } from './logger';
import { problema, tituloDoStatus } from './problema';

/**
 * A connection on which nothing moves for this long, a request or its answer under way, is
 * destroyed (Node's default is never): a client that stops reading a download (a paused browser, a
 * hung program) otherwise held its socket, the file's handle and the handler for as long as it
 * kept the connection open, and every shutdown waited for it until the forced exit. Idle between
 * requests, a kept-alive connection closes sooner (keepAliveTimeout). Tests lower it.
 */
export const INATIVIDADE = { maximaMs: 120_000 };

/**
 * Listens and registers a graceful close: stop accepting, let in-flight requests finish within
 * the grace period (each connection closing with its answer), then cut what is left.
 * `prazoDaRequisicaoMs`: how long a request may take to arrive whole (Node's default is 5
 * minutes), checked at a quarter of it (at most every 30 s).
 */
export async function escutar(app: Express, porta: number, nome: string, host?: string, prazoDaRequisicaoMs?: number): Promise<http.Server> {
  const server = http.createServer({
    ...classesDoExpress(app),
    ...(prazoDaRequisicaoMs && { requestTimeout: prazoDaRequisicaoMs, connectionsCheckingInterval: Math.min(30_000, Math.max(100, prazoDaRequisicaoMs / 4)) }),
  });
  server.keepAliveTimeout = 65_000;
  server.timeout = INATIVIDADE.maximaMs;
  // before the app, so the answers of a closing server, and those given before their body has
  // arrived, go out with `Connection: close`
  const fecharAsRespostas = acompanharAsRespostas(server);
  server.on('request', fecharSemOCorpo);
  server.on('request', app);
  server.on('checkContinue', continuarAoLer);
  server.on('checkExpectation', recusarExpectativa);
  server.on('clientError', responderErroDoCliente);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(porta, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const endereco = server.address() as AddressInfo;
  logger('http').info({ servico: nome, porta: endereco.port }, 'escutando');
  // a connection that could not be accepted (no file descriptor left) is an `error` event: with
  // no listener it would end the process, and every service and worker `npm start` runs in it
  server.on('error', (err) => logger('http').error({ servico: nome, erro: err.message }, 'erro do servidor HTTP'));
  aoEncerrar('http', `http:${nome}`, () => fecharServidor(server, fecharAsRespostas));
  return server;
}

/**
 * What Node refuses before any route sees it (a request it cannot parse, headers past its limit, a
 * request not arrived in time) answered as the routes answer errors: problem+json where Node's own
 * answer has no body. Otherwise as Node does: nothing written into an answer under way, and the
 * connection destroyed after (a request still arriving goes no further, a slow upload included).
 */
function responderErroDoCliente(err: NodeJS.ErrnoException, socket: Duplex): void {
  // the answer of the connection's current request, when one was begun (Node's own test)
  const emCurso = (socket as { _httpMessage?: http.ServerResponse })._httpMessage;
  if (err.code !== 'ECONNRESET' && socket.writable && !emCurso?.headersSent) {
    const status = STATUS_DO_ERRO[err.code ?? ''] ?? 400;
    const corpo = JSON.stringify(problema(status, 'requisicao_invalida', `${tituloDoStatus(status)}.`));
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/problem+json\r\n` +
        `Content-Length: ${Buffer.byteLength(corpo)}\r\nConnection: close\r\n\r\n${corpo}`,
    );
  }
  socket.destroy();
}
const STATUS_DO_ERRO: Record<string, number> = { HPE_HEADER_OVERFLOW: 431, HPE_CHUNK_EXTENSIONS_OVERFLOW: 413, ERR_HTTP_REQUEST_TIMEOUT: 408 };

/**
 * `Expect: 100-continue` (curl sends it with bodies past 1 MiB): with no listener, Node answers 100
 * at once, before any route has looked at the request, and the client sends a body the route may
 * refuse unread (an upload past the size limit, no token). Here the 100 goes when the route starts
 * reading the body; a route that answers first (401, 413) answers instead of it (RFC 9110 §10.1.1).
 */
function continuarAoLer(this: http.Server, req: http.IncomingMessage, res: http.ServerResponse): void {
  const ler = req._read;
  req._read = function (tamanho: number) {
    req._read = ler;
    if (!res.headersSent) res.writeContinue();
    return ler.call(this, tamanho);
  };
  this.emit('request', req, res);
}

/** Any other expectation is one no route meets: 417 as the routes answer errors (Node's has no body). */
function recusarExpectativa(_req: http.IncomingMessage, res: http.ServerResponse): void {
  const corpo = JSON.stringify(problema(417, 'requisicao_invalida', 'Só a expectativa 100-continue é atendida.'));
  res.writeHead(417, { 'content-type': 'application/problem+json', 'content-length': Buffer.byteLength(corpo), connection: 'close' }).end(corpo);
}

/**
 * Express gives each request and answer the app's prototypes (`app.request`, `app.response`, made
 * by Object.create over Node's) with Object.setPrototypeOf, on every request. Node 20's V8 pays
 * for objects so made on each later property access: a bare route answered a third of what it does
 * otherwise (docs/desempenho.md). So the app's prototypes become those of two subclasses of Node's,
 * holding the same methods and getters, and the server makes its requests and answers from them:
 * Express's call then finds the prototype already in place and changes nothing. The copy is taken
 * as the server starts: what a library would add to Express's prototypes later would not reach
 * these requests (none of the suite's does). An app whose prototypes do not descend from Node's
 * (not Express's own) is left as it is.
 */
function classesDoExpress(app: Express): Pick<http.ServerOptions, 'IncomingMessage' | 'ServerResponse'> {
  const naCadeia = (prototipo: object, base: object) => {
    const descritores: PropertyDescriptorMap[] = [];
    for (let p: object | null = prototipo; p && p !== base; p = Object.getPrototypeOf(p)) descritores.unshift(Object.getOwnPropertyDescriptors(p));
    if (!Object.prototype.isPrototypeOf.call(base, prototipo)) return null;
    // each class keeps its own constructor (an app served twice has one of ours as its prototype)
    const { constructor: _, ...metodos }: PropertyDescriptorMap = Object.assign({}, ...descritores);
    return metodos;
  };
  const daRequisicao = naCadeia(app.request, http.IncomingMessage.prototype);
  const daResposta = naCadeia(app.response, http.ServerResponse.prototype);
  if (!daRequisicao || !daResposta) return {};
  class Requisicao extends http.IncomingMessage {}
  class Resposta extends http.ServerResponse {}
  Object.defineProperties(Requisicao.prototype, daRequisicao);
  Object.defineProperties(Resposta.prototype, daResposta);
  app.request = Requisicao.prototype as unknown as Express['request'];
  app.response = Resposta.prototype as unknown as Express['response'];
  return { IncomingMessage: Requisicao, ServerResponse: Resposta as typeof http.ServerResponse };
}

/**
 * An answer given before its request's body has all arrived (a body the route does not take, an
 * upload refused) closes the connection in stages (fecharEmEtapas). Node would keep it open
 * after the answer, reading the rest of a body nobody takes for as long as the client sends it, up
 * to `requestTimeout`: a route that takes no body (`/saude`, a download) on the server whose
 * requests may take an hour (file storage's uploads) held a connection that long for a byte every
 * few seconds. A route that reads its body to the end (JSON, an accepted upload) answers after it
 * and keeps its connection: the long deadline serves it alone. Whether there is a body is told by
 * the headers (RFC 9112 §6.3), since an answer given at once comes before Node has parsed the
 * request's end, even a request with none. Hooked on the answer itself, not its prototype, which
 * Express sets again on every request (and an app mounted inside another sets to its own).
 */
function fecharSemOCorpo(req: http.IncomingMessage, res: http.ServerResponse): void {
  if (req.headers['transfer-encoding'] === undefined && !(Number(req.headers['content-length']) > 0)) return;
  const writeHead = res.writeHead;
  res.writeHead = ((...args: unknown[]) => {
    if (!req.complete) fecharEmEtapas(res);
    return Reflect.apply(writeHead, res, args);
  }) as typeof writeHead;
}

/** How long a connection answered before its body arrived still takes (and drops) what the client sends. */
const ESPERA_DO_FECHAMENTO_MS = 2000;

/**
 * The answer goes with `Connection: close`, which Node ends with socket.destroySoon(): that
 * destroys the socket once the answer is written, and a client still sending its body then meets
 * a reset, which can reach it before it has read the answer (a 413 to an upload seen as `fetch
 * failed`). Such a connection closes in stages instead (RFC 9112 §9.6): our side ends after the
 * answer, and what the client still sends is read and dropped until it closes, its body ends or
 * ESPERA_DO_FECHAMENTO_MS pass. A client that has read the answer stops sending (fetch closes at
 * once), so the body is still not taken.
 */
function fecharEmEtapas(res: http.ServerResponse): void {
  res.setHeader('Connection', 'close');
  const req = res.req;
  const socket = req.socket;
  Object.defineProperty(socket, 'destroySoon', {
    configurable: true,
    value: () => {
      socket.end();
      const prazo = setTimeout(() => socket.destroy(), ESPERA_DO_FECHAMENTO_MS).unref();
      socket.once('close', () => clearTimeout(prazo));
      // the body over: closed as Node's own destroySoon closes it, once the answer is out
      const fechar = () => (socket.writableFinished ? socket.destroy() : socket.once('finish', () => socket.destroy()));
      if (req.readableEnded) return fechar();
      req.once('end', fechar);
      req.resume();
    },
  });
}

/**
 * Node keeps a kept-alive connection open after `server.close()`, taking more requests on it until
 * the grace period cuts it (a reset mid-request for its client). So a closing server answers with
 * `Connection: close`, the requests already under way included, and each connection closes as
 * its answer ends; the close is over when the last one is. Answers the function that starts it.
 */
function acompanharAsRespostas(server: http.Server): () => void {
  const emCurso = new Set<http.ServerResponse>();
  let fechando = false;
  server.on('request', (_req: http.IncomingMessage, res: http.ServerResponse) => {
    if (fechando) return fecharAoFim(server, res);
    emCurso.add(res);
    res.once('close', () => emCurso.delete(res));
  });
  return () => {
    fechando = true;
    for (const res of emCurso) fecharAoFim(server, res);
    emCurso.clear();
  };
}

function fecharAoFim(server: http.Server, res: http.ServerResponse): void {
  if (!res.headersSent) res.setHeader('Connection', 'close');
  // an answer whose headers went out before the close keeps its connection: closed once idle
  else res.once('finish', () => fecharOciosasEmBreve(server));
}

/**
 * How long a closing server leaves its idle connections open. A client may have sent its next
 * request on one already (it was kept alive by an answer that went out before the close, or the
 * signal came between two of its requests): closed at once, as Node's `close()` closes them, that
 * request was reset. One that arrives in time is answered, with `Connection: close`; a connection
 * still idle then is closed.
 */
export const OCIOSAS_FECHADAS_APOS_MS = 250;

const fecharOciosasEmBreve = (server: http.Server) => setTimeout(() => server.closeIdleConnections(), OCIOSAS_FECHADAS_APOS_MS).unref();

function fecharServidor(server: http.Server, fecharAsRespostas: () => void): Promise<void> {
  return new Promise<void>((resolve) => {
    if (!server.listening) return resolve();
    fecharAsRespostas();
    const prazo = setTimeout(() => server.closeAllConnections(), config().shutdownGraceMs);
    prazo.unref();
    // stops listening without http's own close, which would close the idle connections at once
    net.Server.prototype.close.call(server, () => {
      clearTimeout(prazo);
      resolve();
    });
    fecharOciosasEmBreve(server);
  });
}
