import { ChildProcess, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import IORedis from 'ioredis';
import { createConnection } from 'mysql2/promise';
import { servidorDaUrl } from '../lib/database';

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

/** A function answering, at each call, one of `de` drawn at random (a record per request). */
export const sorteado = <T>(de: T[]) => (): T => de[Math.floor(Math.random() * de.length)];

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

/** A connection to the server of MYSQL_URL (its Unix socket when the URL names one), with `opcoes`. */
export function conectarAoServidor(opcoes: { database?: string; timezone?: string } = {}) {
  return createConnection({ ...servidorDaUrl(MYSQL_URL), ...opcoes });
}

/** The server's InnoDB buffer pool in MiB: lookups over a data set larger than it read from disk. */
export async function bufferPoolEmMiB(): Promise<number> {
  const conexao = await conectarAoServidor();
  try {
    const [[linha]] = (await conexao.query('SELECT @@innodb_buffer_pool_size AS bytes')) as any;
    return Math.round(Number(linha.bytes) / 1048576);
  } finally {
    await conexao.end();
  }
}

/** Drops `<prefix>_<service>` of each service and the Redis keys `<prefix>*` (as test/helpers/suite.ts). */
export async function limparDados(prefixo: string, servicos: string[]): Promise<void> {
  const conexao = await conectarAoServidor();
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

export interface Ambiente {
  prefixo: string;
  dataDir: string;
  servicos: string[];
  env: NodeJS.ProcessEnv;
}

/** A unique DB/queue prefix and the environment every child of one run shares (compiled suite). */
export function novoAmbiente(c: Compilado, servicos: string[], extra: Record<string, string> = {}): Ambiente {
  const prefixo = `bench${servicos.at(-1)}${Date.now().toString(36)}${randomBytes(2).toString('hex')}`;
  const dataDir = mkdtempSync(path.join(tmpdir(), 'suite-bench-'));
  return {
    prefixo,
    dataDir,
    servicos,
    env: { ...ambienteDoSuite(prefixo, dataDir, process.env.BENCH_LOG_LEVEL || 'warn'), ...c.env, BENCH_SERVICOS: servicos.join(','), ...extra },
  };
}

/** Drops the run's databases, keys and data folder, unless BENCH_MANTER=1. */
export async function limparAmbiente(a: Ambiente): Promise<void> {
  if (process.env.BENCH_MANTER === '1') {
    console.log(`kept the data (BENCH_MANTER=1): databases ${a.prefixo}_*`);
    return;
  }
  await limparDados(a.prefixo, a.servicos);
  rmSync(a.dataDir, { recursive: true, force: true });
}

/**
 * node arguments of a child for BENCH_CPU_PROF=<dir>: it writes a V8 CPU profile there when it
 * exits, named by node after its pid (the benches print their children's pids) or `nome`. None
 * when unset.
 */
export function argumentosDePerfil(nome?: string): string[] {
  if (!process.env.BENCH_CPU_PROF) return [];
  const dir = path.resolve(process.env.BENCH_CPU_PROF);
  mkdirSync(dir, { recursive: true });
  return ['--cpu-prof', `--cpu-prof-dir=${dir}`, ...(nome ? [`--cpu-prof-name=${nome}`] : [])];
}

/**
 * Starts bench/servidor.ts (compiled) in a child and waits for its addresses. BENCH_CPU_PROF=<dir>:
 * the server writes a V8 CPU profile there when it exits; BENCH_SERVER_LOG=<file>: its log goes there.
 */
export function iniciarServidorDoBench<E>(script: string, a: Ambiente): Promise<{ filho: ChildProcess; e: E }> {
  const log = process.env.BENCH_SERVER_LOG ? openSync(process.env.BENCH_SERVER_LOG, 'a') : 'ignore';
  const filho = spawn(process.execPath, [...argumentosDePerfil(), script], { cwd: RAIZ, env: a.env, stdio: ['ignore', log, 'inherit', 'ipc'] });
  if (typeof log === 'number') closeSync(log);
  return new Promise((resolve, reject) => {
    filho.on('message', (m: any) => (m?.tipo === 'pronto' ? resolve({ filho, e: m }) : m?.tipo === 'erro' && reject(new Error(m.mensagem))));
    filho.once('exit', (code) => reject(new Error(`bench server exited (${code}) before it was ready`)));
  });
}

/** SIGTERM, and wait for the exit. */
export function pararProcesso(filho: ChildProcess): Promise<void> {
  if (filho.exitCode !== null || filho.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    filho.once('exit', () => resolve());
    filho.kill('SIGTERM');
  });
}

/**
 * A benchmark's frame: the suite compiled, its server (bench/servidor.ts) started with `servicos`
 * on databases of its own, `corpo` run against it, then everything stopped and dropped.
 */
export async function comServidorDoBench<E>(
  servicos: string[],
  extra: Record<string, string>,
  corpo: (e: E, a: Ambiente, c: Compilado) => Promise<void>,
): Promise<void> {
  const c = compilarParaBench(['suite.ts', 'bench/servidor.ts']);
  const a = novoAmbiente(c, servicos, extra);
  let filho: ChildProcess | undefined;
  try {
    const s = await iniciarServidorDoBench<E>(c.saida('bench/servidor.ts'), a);
    filho = s.filho;
    await corpo(s.e, a, c);
  } finally {
    if (filho) await pararProcesso(filho);
    await limparAmbiente(a);
    rmSync(c.dir, { recursive: true, force: true });
  }
}

export const f0 = (n: number) => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : '-');
export const fms = (n: number) => (!Number.isFinite(n) ? '-' : n >= 10 ? n.toFixed(0) : n.toFixed(1));
/** percent of one core (or of the machine), rounded */
export const fpct = (n?: number) => (n === undefined || !Number.isFinite(n) ? '-' : `${Math.round(n)}%`);

export function percentil(valores: number[], p: number): number {
  if (!valores.length) return NaN;
  const ordenados = [...valores].sort((x, y) => x - y);
  return ordenados[Math.min(ordenados.length - 1, Math.ceil((p / 100) * ordenados.length) - 1)];
}
