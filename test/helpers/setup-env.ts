import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

/**
 * Each test file runs on databases and Redis keys of its own (a unique prefix), so files run in
 * parallel and leave nothing behind (test/helpers/suite.ts drops them at the end).
 */
const prefixo = `t${randomBytes(5).toString('hex')}`;
Object.assign(process.env, {
  APP_ENV: 'LOCALHOST',
  DB_PREFIX: prefixo,
  QUEUE_PREFIX: prefixo,
  // inside the run's folder, removed when the run ends (test/helpers/global-setup.js)
  DATA_DIR: mkdtempSync(path.join(process.env.SUITE_TESTES_DIR ?? tmpdir(), 'suite-teste-')),
  LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
  IDENTITY_ADMIN_EMAIL: 'admin@suite.test',
  IDENTITY_ADMIN_SENHA: 'Admin-Senha-Forte-1',
  IDENTITY_LOGIN_LIMITE_POR_MINUTO: '100000',
  // password hashes are slow on purpose; tests use the lowest cost config accepts
  IDENTITY_SENHA_CUSTO: '10',
  SHUTDOWN_GRACE_MS: '2000',
});
delete process.env.MASTER_EMAILS;
