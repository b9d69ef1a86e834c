import http from 'node:http';
import { AddressInfo } from 'node:net';
import { Express } from 'express';
import { config } from '../config';
import { aoEncerrar } from './lifecycle';
import { logger } from './logger';

/**
 * Listens and registers a graceful close: stop accepting, let in-flight requests finish within
 * the grace period, then cut what is left. `prazoDaRequisicaoMs`: how long a request may take to
 * arrive whole (Node's default is 5 minutes), checked at a quarter of it (at most every 30 s).
 */
export async function escutar(app: Express, porta: number, nome: string, host?: string, prazoDaRequisicaoMs?: number): Promise<http.Server> {
  const server = prazoDaRequisicaoMs
    ? http.createServer({ requestTimeout: prazoDaRequisicaoMs, connectionsCheckingInterval: Math.min(30_000, Math.max(100, prazoDaRequisicaoMs / 4)) }, app)
    : http.createServer(app);
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(porta, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const endereco = server.address() as AddressInfo;
  logger('http').info({ servico: nome, porta: endereco.port }, 'escutando');
  aoEncerrar('http', `http:${nome}`, () => fecharServidor(server));
  return server;
}

export function fecharServidor(server: http.Server): Promise<void> {
  return new Promise<void>((resolve) => {
    if (!server.listening) return resolve();
    const prazo = setTimeout(() => server.closeAllConnections(), config().shutdownGraceMs);
    prazo.unref();
    server.close(() => {
      clearTimeout(prazo);
      resolve();
    });
    server.closeIdleConnections();
  });
}
