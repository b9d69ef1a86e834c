import http from 'node:http';
import { AddressInfo } from 'node:net';
import { Express } from 'express';
import { config } from '../config';
import { aoEncerrar } from './lifecycle';
import { logger } from './logger';

/**
 * Listens and registers a graceful close: stop accepting, let in-flight requests finish within
 * the grace period (each connection closing with its answer), then cut what is left.
 * `prazoDaRequisicaoMs`: how long a request may take to arrive whole (Node's default is 5
 * minutes), checked at a quarter of it (at most every 30 s).
 */
export async function escutar(app: Express, porta: number, nome: string, host?: string, prazoDaRequisicaoMs?: number): Promise<http.Server> {
  const server = prazoDaRequisicaoMs
    ? http.createServer({ requestTimeout: prazoDaRequisicaoMs, connectionsCheckingInterval: Math.min(30_000, Math.max(100, prazoDaRequisicaoMs / 4)) })
    : http.createServer();
  server.keepAliveTimeout = 65_000;
  // before the app, so the answers of a closing server go out with `Connection: close`
  const fecharAsRespostas = acompanharAsRespostas(server);
  server.on('request', app);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(porta, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const endereco = server.address() as AddressInfo;
  logger('http').info({ servico: nome, porta: endereco.port }, 'escutando');
  aoEncerrar('http', `http:${nome}`, () => fecharServidor(server, fecharAsRespostas));
  return server;
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
  else res.once('finish', () => server.closeIdleConnections());
}

function fecharServidor(server: http.Server, fecharAsRespostas: () => void): Promise<void> {
  return new Promise<void>((resolve) => {
    if (!server.listening) return resolve();
    fecharAsRespostas();
    const prazo = setTimeout(() => server.closeAllConnections(), config().shutdownGraceMs);
    prazo.unref();
    server.close(() => {
      clearTimeout(prazo);
      resolve();
    });
    server.closeIdleConnections();
  });
}
