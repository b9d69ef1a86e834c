/**
 * `npm run bench:access`: cost of authentication + access control on read routes (never part of
 * `npm test`).
 *
 * Measures, with autocannon (50 connections, BENCH_DURATION seconds each, 10 by default):
 *   - a bare Express route (`app.get('/x', (req, res) => res.json({...}))`), the baseline;
 *   - intranet `GET /colaborador/{id}` by a NON-master user whose access profile grants
 *     `{colaboradores: ['ler']}`;
 *   - identity `GET /usuario/{id}` by a non-master user reading its own record;
 *   - identity `GET /usuario/{id}` by the master reading another user.
 * Goal per service route: req/s >= 0.35 x the bare route's, and p99 <= 25 ms.
 *
 * The servers run in a child process (bench/servidor.ts) with their own databases and Redis keys
 * (a unique prefix), dropped at the end; this process only generates load. One pass per log level
 * (BENCH_LOG_LEVELS, `info,warn` by default): at `info` every request writes its access log line,
 * sent to /dev/null.
 *
 * Environment: BENCH_DURATION (s, default 10), BENCH_WARMUP (s, default 3), BENCH_CONNECTIONS
 * (default 50), BENCH_LOG_LEVELS (default `info,warn`), BENCH_ROUTES (comma list of route keys:
 * bare,colaborador,usuario,usuario_master; default all), BENCH_CPU_PROF (folder: the server writes
 * a V8 CPU profile there on exit), BENCH_SERVER_LOG (file for the server's stdout instead of
 * /dev/null), MYSQL_URL / REDIS_URL (as the suite).
 */
import { ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, mkdirSync, mkdtempSync, openSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import IORedis from 'ioredis';
import { createConnection } from 'mysql2/promise';
import type { EnderecosDoBench } from './servidor';
import { amostrarCpu, pidsPeloNome, usoDeCpu } from './processo';

const RAIZ = path.resolve(__dirname, '..');
const DURACAO = inteiro('BENCH_DURATION', 10);
const AQUECIMENTO = inteiro('BENCH_WARMUP', 3);
const CONEXOES = inteiro('BENCH_CONNECTIONS', 50);
const NIVEIS = (process.env.BENCH_LOG_LEVELS ?? 'info,warn').split(',').map((s) => s.trim()).filter(Boolean);
const ROTAS_PEDIDAS = process.env.BENCH_ROUTES?.split(',').map((s) => s.trim()).filter(Boolean);
const MYSQL_URL = process.env.MYSQL_URL ?? 'mysql://root@127.0.0.1:3306';
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const ADMIN = { email: 'admin@bench.test', senha: 'Admin-Bench-Senha-Forte-1' };

const META_RAZAO = 0.35;
const META_P99_MS = 25;

function inteiro(nome: string, padrao: number): number {
  const v = process.env[nome];
  if (v === undefined || v === '') return padrao;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) throw new Error(`${nome} must be a non-negative integer, got "${v}"`);
  return n;
}

// ---------------------------------------------------------------- HTTP setup calls

async function chamar(base: string, metodo: string, caminho: string, o: { token?: string; body?: unknown } = {}) {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (o.token) headers.authorization = `Bearer ${o.token}`;
  if (o.body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(base + caminho, {
    method: metodo,
    headers,
    body: o.body === undefined ? undefined : JSON.stringify(o.body),
    signal: AbortSignal.timeout(30_000),
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

async function esperar(base: string, metodo: string, caminho: string, status: number, o: { token?: string; body?: unknown } = {}) {
  const r = await chamar(base, metodo, caminho, o);
  if (r.status !== status) throw new Error(`${metodo} ${caminho}: expected ${status}, got ${r.status} ${r.text.slice(0, 500)}`);
  return r.body;
}

async function login(base: string, email: string, senha: string): Promise<string> {
  const b = await esperar(base, 'POST', '/auth/login', 200, { body: { email, senha } });
  return b.access_token;
}

// ---------------------------------------------------------------- server process

interface Servidor {
  filho: ChildProcess;
  enderecos: EnderecosDoBench;
  prefixo: string;
  dataDir: string;
}

function iniciarServidor(logLevel: string): Promise<Servidor> {
  const prefixo = `bench${Date.now().toString(36)}${randomBytes(2).toString('hex')}`;
  const dataDir = mkdtempSync(path.join(tmpdir(), 'suite-bench-'));
  const saida = openSync(process.env.BENCH_SERVER_LOG || '/dev/null', 'a');
  const execArgv = ['-r', 'ts-node/register/transpile-only'];
  if (process.env.BENCH_CPU_PROF) {
    mkdirSync(process.env.BENCH_CPU_PROF, { recursive: true });
    execArgv.push('--cpu-prof', `--cpu-prof-dir=${path.resolve(process.env.BENCH_CPU_PROF)}`, `--cpu-prof-name=servidor-${logLevel}-${prefixo}.cpuprofile`);
  }
  const filho = spawn(process.execPath, [...execArgv, path.join(RAIZ, 'bench', 'servidor.ts')], {
    cwd: RAIZ,
    stdio: ['ignore', saida, 'inherit', 'ipc'],
    env: {
      ...process.env,
      APP_ENV: 'LOCALHOST',
      DB_PREFIX: prefixo,
      QUEUE_PREFIX: prefixo,
      DATA_DIR: dataDir,
      LOG_LEVEL: logLevel,
      MYSQL_URL,
      REDIS_URL,
      IDENTITY_ADMIN_EMAIL: ADMIN.email,
      IDENTITY_ADMIN_SENHA: ADMIN.senha,
      IDENTITY_LOGIN_LIMITE_POR_MINUTO: '100000',
      SHUTDOWN_GRACE_MS: '2000',
    },
  });
  closeSync(saida);
  const servidor = { filho, prefixo, dataDir } as Servidor;
  return new Promise((resolve, reject) => {
    const prazo = setTimeout(() => reject(Object.assign(new Error('bench server did not start within 120 s'), { servidor })), 120_000);
    filho.on('message', (m: any) => {
      if (m?.tipo === 'pronto') {
        clearTimeout(prazo);
        resolve({ ...servidor, enderecos: m });
      } else if (m?.tipo === 'erro') {
        clearTimeout(prazo);
        reject(Object.assign(new Error(`bench server failed: ${m.mensagem}`), { servidor }));
      }
    });
    filho.once('exit', (code, sinal) => {
      clearTimeout(prazo);
      reject(Object.assign(new Error(`bench server exited (${code ?? sinal}) before it was ready`), { servidor }));
    });
  });
}

async function pararServidor(s: Pick<Servidor, 'filho' | 'prefixo' | 'dataDir'>): Promise<void> {
  const { filho } = s;
  if (filho.exitCode === null && filho.signalCode === null) {
    const saiu = new Promise<void>((resolve) => filho.once('exit', () => resolve()));
    filho.kill('SIGTERM');
    const prazo = setTimeout(() => filho.kill('SIGKILL'), 15_000);
    await saiu;
    clearTimeout(prazo);
  }
  await limparDados(s.prefixo);
  rmSync(s.dataDir, { recursive: true, force: true });
}

/** Drops `<prefix>_identity`, `<prefix>_intranet` and the Redis keys `<prefix>*` (as test/helpers/suite.ts). */
async function limparDados(prefixo: string): Promise<void> {
  const u = new URL(MYSQL_URL);
  const conexao = await createConnection({
    host: u.hostname,
    port: Number(u.port || 3306),
    user: decodeURIComponent(u.username || 'root'),
    password: decodeURIComponent(u.password),
  });
  try {
    for (const servico of ['identity', 'intranet']) await conexao.query(`DROP DATABASE IF EXISTS \`${prefixo}_${servico}\``);
  } finally {
    await conexao.end();
  }
  const r = new IORedis(REDIS_URL, { lazyConnect: false, maxRetriesPerRequest: 2 });
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

// ---------------------------------------------------------------- scenario

interface Alvo {
  chave: string;
  nome: string;
  url: string;
  token?: string;
}

/** Admin logs in, creates a non-master collaborator, registers it in the intranet, gives it a profile with {colaboradores: ['ler']}. */
async function prepararCenario(e: EnderecosDoBench): Promise<Alvo[]> {
  const admin = await login(e.identity, ADMIN.email, ADMIN.senha);
  const sufixo = randomBytes(4).toString('hex');
  const senha = `Senha-${sufixo}-Forte`;
  const usuario = await esperar(e.identity, 'POST', '/usuario', 201, {
    token: admin,
    body: { nome: `Pessoa Bench ${sufixo}`, email: `bench${sufixo}@bench.test`, perfil: 'colaborador', senha },
  });

  // the master's listing registers identity's collaborators in the intranet (SPEC 4.5 rule 2)
  let colaborador: any;
  for (let tentativa = 0; tentativa < 10 && !colaborador; tentativa++) {
    const pagina = await esperar(e.intranet, 'GET', '/colaborador', 200, { token: admin });
    colaborador = pagina.itens.find((c: any) => c.auth_id === usuario.id);
    if (!colaborador) await new Promise((r) => setTimeout(r, 500));
  }
  if (!colaborador) throw new Error('the intranet did not register the bench user as a collaborator');

  const perfil = await esperar(e.intranet, 'POST', '/perfil_acesso', 201, {
    token: admin,
    body: { nome: `Bench leitura ${sufixo}`, descricao: 'Perfil do benchmark', permissoes: { colaboradores: ['ler'] } },
  });
  await esperar(e.intranet, 'PATCH', `/colaborador/${colaborador.id}/perfil_acesso`, 200, {
    token: admin,
    body: { perfil_acesso_id: perfil.id },
  });
  const tokenUsuario = await login(e.identity, usuario.email, senha);

  const alvos: Alvo[] = [
    { chave: 'bare', nome: 'bare express GET /x', url: `${e.bare}/x` },
    {
      chave: 'colaborador',
      nome: 'intranet GET /colaborador/{id} (non-master, profile ler)',
      url: `${e.intranet}/colaborador/${colaborador.id}`,
      token: tokenUsuario,
    },
    { chave: 'usuario', nome: 'identity GET /usuario/{own id} (non-master)', url: `${e.identity}/usuario/${usuario.id}`, token: tokenUsuario },
    { chave: 'usuario_master', nome: 'identity GET /usuario/{id} (master, other user)', url: `${e.identity}/usuario/${usuario.id}`, token: admin },
  ];
  // each target answers 200 with the expected record before it is measured
  for (const a of alvos) {
    const r = await chamar(a.url, 'GET', '', { token: a.token });
    if (r.status !== 200) throw new Error(`${a.nome}: expected 200, got ${r.status} ${r.text.slice(0, 300)}`);
  }
  const r = await chamar(e.intranet, 'GET', `/colaborador/${colaborador.id}`, { token: tokenUsuario });
  if (r.body?.perfil_acesso_id !== perfil.id) throw new Error('the collaborator does not carry the bench profile');
  return ROTAS_PEDIDAS ? alvos.filter((a) => a.chave === 'bare' || ROTAS_PEDIDAS.includes(a.chave)) : alvos;
}

// ---------------------------------------------------------------- measuring

interface Medida {
  alvo: Alvo;
  logLevel: string;
  reqPorSeg: number;
  p50: number;
  p99: number;
  total: number;
  non2xx: number;
  erros: number;
  cpu: ReturnType<typeof usoDeCpu>;
}

/** autocannon returns its instance, also a promise of the result (the types only show the promise) */
type Execucao = autocannon.Instance & PromiseLike<autocannon.Result>;
let emCurso: Execucao | undefined;

function rodar(a: Alvo, segundos: number): Promise<autocannon.Result> {
  const inst = autocannon({
    url: a.url,
    connections: CONEXOES,
    duration: segundos,
    pipelining: 1,
    headers: a.token ? { authorization: `Bearer ${a.token}`, accept: 'application/json' } : { accept: 'application/json' },
  }) as unknown as Execucao;
  emCurso = inst;
  return Promise.resolve(inst).finally(() => {
    emCurso = undefined;
  });
}

async function medir(a: Alvo, s: Servidor, pidsBanco: number[], pidsRedis: number[], logLevel: string): Promise<Medida> {
  if (AQUECIMENTO > 0) await rodar(a, AQUECIMENTO);
  const antes = amostrarCpu(s.enderecos.pid, pidsBanco, pidsRedis);
  const r = await rodar(a, DURACAO);
  const depois = amostrarCpu(s.enderecos.pid, pidsBanco, pidsRedis);
  return {
    alvo: a,
    logLevel,
    reqPorSeg: r.requests.average,
    p50: r.latency.p50,
    p99: r.latency.p99,
    total: r.requests.total,
    non2xx: r.non2xx,
    erros: r.errors + r.timeouts,
    cpu: usoDeCpu(antes, depois),
  };
}

// ---------------------------------------------------------------- report

const f0 = (n: number) => Math.round(n).toLocaleString('en-US');
const fms = (n: number) => (Number.isInteger(n) ? String(n) : n.toFixed(2));
const fpct = (n?: number) => (n === undefined ? '-' : `${Math.round(n)}%`);

function veredito(m: Medida, bare?: Medida) {
  if (m.alvo.chave === 'bare') return { razao: 1, ok: undefined as boolean | undefined, texto: 'baseline' };
  const razao = bare ? m.reqPorSeg / bare.reqPorSeg : NaN;
  const okRazao = razao >= META_RAZAO;
  const okP99 = m.p99 <= META_P99_MS;
  const valido = m.non2xx === 0 && m.erros === 0;
  const ok = okRazao && okP99 && valido;
  const partes = [
    `ratio ${razao.toFixed(2)} ${okRazao ? '>=' : '<'} ${META_RAZAO}`,
    `p99 ${fms(m.p99)} ${okP99 ? '<=' : '>'} ${META_P99_MS} ms`,
  ];
  if (!valido) partes.push(`INVALID: ${m.non2xx} non-2xx, ${m.erros} errors`);
  return { razao, ok, texto: `${ok ? 'MET' : 'NOT MET'} (${partes.join(', ')})` };
}

function linhaDaMedida(m: Medida, bare?: Medida): string {
  const v = veredito(m, bare);
  return (
    `  ${m.alvo.nome}\n` +
    `    ${f0(m.reqPorSeg)} req/s  p50 ${fms(m.p50)} ms  p99 ${fms(m.p99)} ms  ratio ${v.razao.toFixed(2)}  ` +
    `[${m.total} requests, ${m.non2xx} non-2xx, ${m.erros} errors]\n` +
    `    CPU: server ${fpct(m.cpu.servidor)}, load generator ${fpct(m.cpu.gerador)}, mariadb ${fpct(m.cpu.banco)}, ` +
    `redis ${fpct(m.cpu.redis)}, machine ${fpct(m.cpu.maquina)} of all cores\n` +
    `    goal: ${v.texto}`
  );
}

function tabela(medidas: Medida[]): string {
  const cab = ['log', 'route', 'req/s', 'p50 ms', 'p99 ms', 'ratio', 'srv CPU', 'db CPU', 'goal'];
  const linhas = medidas.map((m) => {
    const bare = medidas.find((b) => b.logLevel === m.logLevel && b.alvo.chave === 'bare');
    const v = veredito(m, bare);
    return [
      m.logLevel,
      m.alvo.chave === 'bare' ? 'bare GET /x' : m.alvo.nome.replace(/ \(.*\)$/, '') + (m.alvo.chave === 'usuario_master' ? ' (master)' : ''),
      f0(m.reqPorSeg),
      fms(m.p50),
      fms(m.p99),
      v.razao.toFixed(2),
      fpct(m.cpu.servidor),
      fpct(m.cpu.banco),
      v.ok === undefined ? '-' : v.ok ? 'met' : 'NOT met',
    ];
  });
  const larguras = cab.map((c, i) => Math.max(c.length, ...linhas.map((l) => l[i].length)));
  const fmt = (l: string[]) => l.map((c, i) => (i >= 2 && i <= 7 ? c.padStart(larguras[i]) : c.padEnd(larguras[i]))).join('  ');
  return [fmt(cab), larguras.map((w) => '-'.repeat(w)).join('  '), ...linhas.map(fmt)].join('\n');
}

// ---------------------------------------------------------------- main

let atual: Pick<Servidor, 'filho' | 'prefixo' | 'dataDir'> | undefined;

async function passada(logLevel: string, pidsBanco: number[], pidsRedis: number[]): Promise<Medida[]> {
  console.log(`\n== LOG_LEVEL=${logLevel} (server stdout -> ${process.env.BENCH_SERVER_LOG || '/dev/null'}) ==`);
  const inicio = Date.now();
  let s: Servidor;
  try {
    s = await iniciarServidor(logLevel);
  } catch (err: any) {
    if (err.servidor) await pararServidor(err.servidor).catch(() => undefined);
    throw err;
  }
  atual = s;
  try {
    console.log(`server pid ${s.enderecos.pid}, prefix ${s.prefixo}, ready in ${((Date.now() - inicio) / 1000).toFixed(1)} s`);
    const alvos = await prepararCenario(s.enderecos);
    const medidas: Medida[] = [];
    for (const a of alvos) {
      const m = await medir(a, s, pidsBanco, pidsRedis, logLevel);
      medidas.push(m);
      console.log(linhaDaMedida(m, medidas.find((b) => b.alvo.chave === 'bare')));
    }
    return medidas;
  } finally {
    await pararServidor(s);
    atual = undefined;
  }
}

async function main(): Promise<void> {
  console.log(
    `bench:access: autocannon ${CONEXOES} connections, ${DURACAO} s per route after a ${AQUECIMENTO} s warm-up; ` +
      `node ${process.version}; servers in a child process, this process only generates load`,
  );
  console.log(`goal per service route: req/s >= ${META_RAZAO} x bare route, p99 <= ${META_P99_MS} ms`);
  const pidsBanco = pidsPeloNome(['mariadbd', 'mysqld']);
  const pidsRedis = pidsPeloNome(['redis-server']);
  const todas: Medida[] = [];
  for (const nivel of NIVEIS) todas.push(...(await passada(nivel, pidsBanco, pidsRedis)));

  console.log(`\nSummary (${DURACAO} s per route, ${CONEXOES} connections; ratio = req/s / bare req/s of the same log level)`);
  console.log(tabela(todas));
  const servicos = todas.filter((m) => m.alvo.chave !== 'bare');
  const falhas = servicos.filter((m) => !veredito(m, todas.find((b) => b.logLevel === m.logLevel && b.alvo.chave === 'bare')).ok);
  console.log(falhas.length ? `\nGoal NOT met by ${falhas.length} of ${servicos.length} measurements.` : `\nGoal met by every measurement.`);
}

process.once('SIGINT', () => {
  console.error('\ninterrupted: stopping the server and dropping its data');
  emCurso?.stop();
  const s = atual;
  (s ? pararServidor(s) : Promise.resolve()).finally(() => process.exit(130));
});

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err instanceof Error ? (err.stack ?? err.message) : err);
    process.exit(1);
  },
);
