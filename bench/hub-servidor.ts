/**
 * Server side of the hub benchmarks (`npm run bench:hub-ingest`, `bench:hub-entrega`,
 * `bench:hub-falhas`; never part of `npm test`). bench/hub-comum.ts spawns it.
 *
 * Starts, in this one process, the identity and hub APIs (as `npm start` would: migrated
 * databases, seeds, keys) on free loopback ports, identity first, and the two workers the hub's
 * administration needs (application sync, behind a master's GET /aplicativo, and collaborator
 * sync). It starts NO delivery worker (`hub-entrega`): the benchmarks run those as separate
 * processes (`suite worker hub-entrega`), so publishing and delivering are measured apart.
 * Tells the parent the addresses over the IPC channel (stdout is left to the logs).
 *
 * The parent sets DB_PREFIX/QUEUE_PREFIX (unique per run), DATA_DIR (a temp folder), LOG_LEVEL
 * and the admin credentials; run alone, it picks its own and prints the addresses on stdout.
 */
import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

const prefixoPadrao = `bhub${Date.now().toString(36)}${randomBytes(2).toString('hex')}`;
process.env.APP_ENV = 'LOCALHOST';
process.env.DB_PREFIX ??= prefixoPadrao;
process.env.QUEUE_PREFIX ??= process.env.DB_PREFIX;
process.env.DATA_DIR ??= mkdtempSync(path.join(tmpdir(), 'suite-bench-hub-'));
process.env.LOG_LEVEL ??= 'warn';
process.env.IDENTITY_ADMIN_EMAIL ??= 'admin@bench.test';
process.env.IDENTITY_ADMIN_SENHA ??= 'Admin-Bench-Senha-Forte-1';
process.env.IDENTITY_LOGIN_LIMITE_POR_MINUTO ??= '100000';
process.env.SHUTDOWN_GRACE_MS ??= '5000';
delete process.env.MASTER_EMAILS;

export interface EnderecosDoHubBench {
  tipo: 'pronto';
  pid: number;
  prefixo: string;
  identity: string;
  hub: string;
}

function avisar(msg: unknown): void {
  if (process.send) process.send(msg);
  else process.stdout.write(`${JSON.stringify(msg)}\n`);
}

async function main(): Promise<void> {
  // imported here so that the environment above is what config() reads
  const { config } = await import('../config');
  const { encerrarNoSinal, encerrar } = await import('../lib/lifecycle');
  const { iniciarApisEmPortasLivres, iniciarWorkers } = await import('../lib/runner');
  const { filaHubAplicativoSync } = await import('../queues/hub-aplicativo-sync');
  const { filaHubColaboradorSync } = await import('../queues/hub-colaborador-sync');

  config();
  encerrarNoSinal();
  // the parent went away (crash, Ctrl-C): close like on SIGTERM
  process.once('disconnect', () => {
    encerrar().finally(() => process.exit(0));
  });

  const url = await iniciarApisEmPortasLivres(['identity', 'hub']);
  // publishing and administration only: no delivery worker here
  await iniciarWorkers([filaHubAplicativoSync.nome, filaHubColaboradorSync.nome]);

  const enderecos: EnderecosDoHubBench = {
    tipo: 'pronto',
    pid: process.pid,
    prefixo: config().dbPrefix,
    identity: url.identity,
    hub: url.hub,
  };
  avisar(enderecos);
}

main().catch((err: Error) => {
  avisar({ tipo: 'erro', mensagem: err.message, pilha: err.stack });
  process.stderr.write(`hub bench server failed to start: ${err.stack ?? err.message}\n`);
  process.exit(1);
});
