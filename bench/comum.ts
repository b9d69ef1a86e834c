import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import IORedis from 'ioredis';
import { createConnection } from 'mysql2/promise';

/** What every benchmark needs: its knobs, setup calls over HTTP, and leaving nothing behind. */

export const MYSQL_URL = process.env.MYSQL_URL ?? 'mysql://root@127.0.0.1:3306';
export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

export function inteiro(nome: string, padrao: number): number {
  const v = process.env[nome];
  if (v === undefined || v === '') return padrao;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) throw new Error(`${nome} must be a non-negative integer, got "${v}"`);
  return n;
}

export type Opcoes = { token?: string; body?: unknown };

export async function chamar(base: string, metodo: string, caminho: string, o: Opcoes = {}) {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (o.token) headers.authorization = `Bearer ${o.token}`;
  if (o.body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(base + caminho, {
    method: metodo,
    headers,
    body: o.body === undefined ? undefined : JSON.stringify(o.body),
    signal: AbortSignal.timeout(60_000),
  });
  const text = await res.text();
  let body: any;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  return { status: res.status, body, text };
}

export async function esperar(base: string, metodo: string, caminho: string, status: number, o: Opcoes = {}) {
  const r = await chamar(base, metodo, caminho, o);
  if (r.status !== status) throw new Error(`${metodo} ${caminho}: expected ${status}, got ${r.status} ${r.text.slice(0, 500)}`);
  return r.body;
}

/** Drops `<prefix>_<service>` of each service and the Redis keys `<prefix>*` (as test/helpers/suite.ts). */
export async function limparDados(prefixo: string, servicos: string[]): Promise<void> {
  const u = new URL(MYSQL_URL);
  const conexao = await createConnection({
    host: u.hostname,
    port: Number(u.port || 3306),
    user: decodeURIComponent(u.username || 'root'),
    password: decodeURIComponent(u.password),
  });
  try {
    for (const servico of servicos) await conexao.query(`DROP DATABASE IF EXISTS \`${prefixo}_${servico}\``);
  } finally {
    await conexao.end();
  }
  const r = new IORedis(REDIS_URL, { maxRetriesPerRequest: 2 });
  try {
    let cursor = '0';
    do {
      const [proximo, chaves] = await r.scan(cursor, 'MATCH', `${prefixo}*`, 'COUNT', 1000);
      cursor = proximo;
      if (chaves.length) await r.del(...chaves);
    } while (cursor !== '0');
  } finally {
    r.disconnect();
  }
}

export const RAIZ = path.resolve(__dirname, '..');

export interface Compilado {
  dir: string;
  /** where tsc put an entry of the project, e.g. `saida('suite.ts')` */
  saida(arquivo: string): string;
  /** compiled code lives in a temp folder: its packages are found through NODE_PATH */
  env: { NODE_PATH: string };
}

/**
 * Compiles entries of the project with tsc into a temp folder (dist/ is left alone), so a bench
 * can run them as `npm start` does, plain node on tsc output, instead of through ts-node. The
 * caller removes `dir` when done.
 */
export function compilarParaBench(entradas: string[]): Compilado {
  const dir = mkdtempSync(path.join(tmpdir(), 'suite-bench-dist-'));
  const tsconfig = path.join(dir, 'tsconfig.json');
  writeFileSync(
    tsconfig,
    JSON.stringify({
      extends: path.join(RAIZ, 'tsconfig.build.json'),
      compilerOptions: {
        outDir: path.join(dir, 'out'),
        rootDir: RAIZ,
        sourceMap: false,
        incremental: false,
        tsBuildInfoFile: null,
        typeRoots: [path.join(RAIZ, 'node_modules', '@types')],
      },
      files: entradas.map((e) => path.join(RAIZ, e)),
      include: [],
    }),
  );
  const inicio = Date.now();
  const r = spawnSync(process.execPath, [path.join(RAIZ, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', tsconfig], { cwd: RAIZ, encoding: 'utf8' });
  const saida = (arquivo: string) => path.join(dir, 'out', arquivo.replace(/\.ts$/, '.js'));
  // type errors (others' work in progress) still emit; only a missing output stops the run
  const faltando = entradas.filter((e) => !existsSync(saida(e)));
  if (faltando.length) throw new Error(`tsc did not emit ${faltando.join(', ')}: ${r.stdout}${r.stderr}`);
  console.log(`compiled ${entradas.join(', ')} with tsc in ${((Date.now() - inicio) / 1000).toFixed(1)} s${r.status ? ' (with type errors, emitted anyway)' : ''}`);
  return { dir, saida, env: { NODE_PATH: [path.join(RAIZ, 'node_modules'), process.env.NODE_PATH].filter(Boolean).join(path.delimiter) } };
}

export const ADMIN_DO_BENCH = { email: 'admin@bench.test', senha: 'Admin-Bench-Senha-Forte-1' };

/** The environment of a suite process a bench starts: its own databases, keys and data folder. */
export function ambienteDoSuite(prefixo: string, dataDir: string, logLevel: string): NodeJS.ProcessEnv {
  return {
    ...process.env,
    APP_ENV: 'LOCALHOST',
    DB_PREFIX: prefixo,
    QUEUE_PREFIX: prefixo,
    DATA_DIR: dataDir,
    LOG_LEVEL: logLevel,
    MYSQL_URL,
    REDIS_URL,
    IDENTITY_ADMIN_EMAIL: ADMIN_DO_BENCH.email,
    IDENTITY_ADMIN_SENHA: ADMIN_DO_BENCH.senha,
    IDENTITY_LOGIN_LIMITE_POR_MINUTO: '100000',
    SHUTDOWN_GRACE_MS: '2000',
  };
}
