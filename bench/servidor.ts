/**
 * Server side of `npm run bench:access` (bench/access.ts spawns it; never part of `npm test`).
 *
 * Starts, in this one process, the APIs of BENCH_SERVICOS (identity and intranet by default) as
 * `npm start` would (migrated databases, seeds, the workers of their queues) on free loopback
 * ports, plus a bare Express route as the baseline, and tells the parent the addresses over the IPC channel
 * (stdout is left to the logs, which the parent sends to /dev/null).
 *
 * The parent sets DB_PREFIX/QUEUE_PREFIX (unique per run), DATA_DIR (a temp folder), LOG_LEVEL
 * and the admin credentials; run alone, it picks its own and prints the addresses on stdout.
 */
import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import express from 'express';
import type { NomeDoServico } from '../config/services';

const prefixoPadrao = `bench${Date.now().toString(36)}${randomBytes(2).toString('hex')}`;
process.env.APP_ENV = 'LOCALHOST';
process.env.DB_PREFIX ??= prefixoPadrao;
process.env.QUEUE_PREFIX ??= process.env.DB_PREFIX;
process.env.DATA_DIR ??= mkdtempSync(path.join(tmpdir(), 'suite-bench-'));
process.env.LOG_LEVEL ??= 'warn';
process.env.IDENTITY_ADMIN_EMAIL ??= 'admin@bench.test';
process.env.IDENTITY_ADMIN_SENHA ??= 'Admin-Bench-Senha-Forte-1';
process.env.IDENTITY_LOGIN_LIMITE_POR_MINUTO ??= '100000';
process.env.SHUTDOWN_GRACE_MS ??= '2000';
delete process.env.MASTER_EMAILS;

export interface EnderecosDoBench {
  tipo: 'pronto';
  pid: number;
  prefixo: string;
  logLevel: string;
  bare: string;
  identity: string;
  intranet: string;
  leads: string;
  sales: string;
}

function avisar(msg: unknown): void {
  if (process.send) process.send(msg);
  else process.stdout.write(`${JSON.stringify(msg)}\n`);
}

async function main(): Promise<void> {
  // imported here so that the environment above is what config() reads
  const { config } = await import('../config');
  const { escutar } = await import('../lib/http-server');
  const { encerrarNoSinal, encerrar } = await import('../lib/lifecycle');
  const { agendarRepetiveis, iniciarApisEmPortasLivres, iniciarWorkers } = await import('../lib/runner');
  const { FILAS } = await import('../queues');
  const servicos = (process.env.BENCH_SERVICOS || 'identity,intranet').split(',') as NomeDoServico[];

  config();
  encerrarNoSinal();
  // the parent went away (crash, Ctrl-C): close like on SIGTERM
  process.once('disconnect', () => {
    encerrar().finally(() => process.exit(0));
  });

  const url = await iniciarApisEmPortasLivres(servicos);
  // e.g. the master's GET /colaborador registers identity's collaborators through a queue
  await iniciarWorkers(FILAS.filter((f) => servicos.includes(f.servico)).map((f) => f.nome));
  // the repeatable jobs `npm start` schedules (sales folds its conversation counts every 10 s)
  await agendarRepetiveis();

  const bare = express();
  bare.disable('x-powered-by');
  bare.set('etag', false);
  bare.get('/x', (_req, res) => {
    res.json({ id: '0190f2a4-6b1e-7c3d-8e9f-0a1b2c3d4e5f', nome: 'Fulano de Tal', ativo: true });
  });
  // a JSON body parsed and answered, nothing stored: the floor of a webhook
  bare.post('/x', express.json({ limit: '1mb' }), (req, res) => {
    res.json({ recebido: typeof req.body?.id });
  });
  const servidorBare = await escutar(bare, 0, 'bare', '127.0.0.1');

  const enderecos: EnderecosDoBench = {
    tipo: 'pronto',
    pid: process.pid,
    prefixo: config().dbPrefix,
    logLevel: config().logLevel,
    bare: `http://127.0.0.1:${(servidorBare.address() as AddressInfo).port}`,
    identity: url.identity,
    intranet: url.intranet,
    leads: url.leads,
    sales: url.sales,
  };
  avisar(enderecos);
}

main().catch((err: Error) => {
  avisar({ tipo: 'erro', mensagem: err.message, pilha: err.stack });
  process.stderr.write(`bench server failed to start: ${err.stack ?? err.message}\n`);
  process.exit(1);
});
