/**
 * `npm run bench:access`: cost of authentication + access control on read routes (never part of
 * `npm test`).
 *
 * Measures, with autocannon (50 connections, BENCH_DURATION seconds each, 10 by default):
 *   - a bare Express route (`app.get('/x', (req, res) => res.json({...}))`), the baseline;
 *   - intranet `GET /colaborador/{id}` by a NON-master user whose access profile grants
 *     `{colaboradores: ['ler']}`, each request a collaborator drawn among BENCH_PESSOAS;
 *   - identity `GET /usuario/{id}` by a non-master user reading its own record;
 *   - identity `GET /usuario/{id}` by the master reading another user, drawn among BENCH_PESSOAS.
 * Goal per service route: req/s >= 0.35 x the bare route's, and p99 <= 25 ms.
 *
 * The servers run in a child process (bench/servidor.ts) with their own databases and Redis keys
 * (a unique prefix), dropped at the end; this process only generates load. One pass per log level
 * (BENCH_LOG_LEVELS, `info,warn` by default): at `info` every request writes its access log line,
 * sent to /dev/null.
 *
 * Environment (all optional):
 *   BENCH_DURATION      seconds measured per route (10)
 *   BENCH_WARMUP        seconds of load before each measurement (3)
 *   BENCH_CONNECTIONS   autocannon connections (50)
 *   BENCH_PESSOAS       people (identity users, intranet collaborators) the reads draw from (200):
 *                       reads of one record only would let a batch of reads be one row read
 *   BENCH_LOG_LEVELS    one pass per level (`info,warn`)
 *   BENCH_ROUTES        route keys besides the baseline: colaborador,usuario,usuario_master (all)
 *   BENCH_QUIET_WAIT    before each route, wait up to this many seconds for the machine to be
 *                       idle, since others' work on 2 cores skews the figures (30; 0 = don't)
 *   BENCH_CPU_PROF      folder where the server writes a V8 CPU profile when it exits
 *   BENCH_SERVER_LOG    file for the server's stdout instead of /dev/null
 *   BENCH_SERVER_PRELOAD  module the server loads first (to try a change without editing the product)
 *   BENCH_COMPILED=0    server through ts-node instead of plain node on tsc output (as `npm start`)
 *   MYSQL_URL, REDIS_URL  as the suite
 */
import { ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, mkdtempSync, openSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import type { EnderecosDoBench } from './servidor';
import { amostrarCpu, ocupacaoDaMaquina, usoDeCpu, usPorRequisicao } from './processo';
import { ADMIN_DO_BENCH, ambienteDoSuite, argumentosDePerfil, chamar, Compilado, compilarParaBench, esperar, f0, fms, fpct, inteiro, limparDados, RAIZ, sorteado } from './comum';

/** the services this benchmark starts, whose databases it drops */
const SERVICOS = ['identity', 'intranet'];

const DURACAO = inteiro('BENCH_DURATION', 10);
const AQUECIMENTO = inteiro('BENCH_WARMUP', 3);
const CONEXOES = inteiro('BENCH_CONNECTIONS', 50);
const PESSOAS = inteiro('BENCH_PESSOAS', 200);
const ESPERA_SOSSEGO = inteiro('BENCH_QUIET_WAIT', 30);
const COMPILADO = process.env.BENCH_COMPILED !== '0';
const NIVEIS = (process.env.BENCH_LOG_LEVELS ?? 'info,warn').split(',').map((s) => s.trim()).filter(Boolean);
const ROTAS_PEDIDAS = process.env.BENCH_ROUTES?.split(',').map((s) => s.trim()).filter(Boolean);
const ADMIN = ADMIN_DO_BENCH;

const META_RAZAO = 0.35;
const META_P99_MS = 25;

// ---------------------------------------------------------------- HTTP setup calls

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

let compilado: Compilado | undefined;

/** Unless BENCH_COMPILED=0, the server runs as `npm start` does, plain node on tsc output. */
const compilarServidor = () => (compilado ??= compilarParaBench(['bench/servidor.ts']));

function iniciarServidor(logLevel: string): Promise<Servidor> {
  const prefixo = `bench${Date.now().toString(36)}${randomBytes(2).toString('hex')}`;
  const dataDir = mkdtempSync(path.join(tmpdir(), 'suite-bench-'));
  const saida = openSync(process.env.BENCH_SERVER_LOG || '/dev/null', 'a');
  const preload = process.env.BENCH_SERVER_PRELOAD;
  const execArgv = !COMPILADO || preload?.endsWith('.ts') ? ['-r', 'ts-node/register/transpile-only'] : [];
  const script = COMPILADO ? compilarServidor().saida('bench/servidor.ts') : path.join(RAIZ, 'bench', 'servidor.ts');
  // a module loaded in the server before it starts: to try a change without editing the product
  if (preload) execArgv.push('-r', path.resolve(preload));
  execArgv.push(...argumentosDePerfil(`servidor-${logLevel}-${prefixo}.cpuprofile`));
  const filho = spawn(process.execPath, [...execArgv, script], {
    cwd: RAIZ,
    stdio: ['ignore', saida, 'inherit', 'ipc'],
    // tsc output lives in a temp folder: packages are found through NODE_PATH
    env: { ...ambienteDoSuite(prefixo, dataDir, logLevel), ...(COMPILADO ? compilarServidor().env : {}) },
  });
  closeSync(saida);
  const servidor = { filho, prefixo, dataDir } as Servidor;
  return new Promise((resolve, reject) => {
    const falhou = (mensagem: string) => reject(Object.assign(new Error(mensagem), { servidor }));
    const prazo = setTimeout(() => falhou('bench server did not start within 120 s'), 120_000);
    filho.on('message', (m: any) => {
      if (m?.tipo === 'pronto') {
        clearTimeout(prazo);
        resolve({ ...servidor, enderecos: m });
      } else if (m?.tipo === 'erro') {
        clearTimeout(prazo);
        falhou(`bench server failed: ${m.mensagem}`);
      }
    });
    filho.once('exit', (code, sinal) => {
      clearTimeout(prazo);
      falhou(`bench server exited (${code ?? sinal}) before it was ready`);
    });
  });
}

const parando = new Map<string, Promise<void>>();

/** SIGTERM to the server, then its databases, Redis keys and data folder go; once per server. */
function pararServidor(s: Pick<Servidor, 'filho' | 'prefixo' | 'dataDir'>): Promise<void> {
  let p = parando.get(s.prefixo);
  if (!p) {
    p = pararUmaVez(s);
    parando.set(s.prefixo, p);
  }
  return p;
}

async function pararUmaVez(s: Pick<Servidor, 'filho' | 'prefixo' | 'dataDir'>): Promise<void> {
  const { filho } = s;
  if (filho.exitCode === null && filho.signalCode === null) {
    const saiu = new Promise<void>((resolve) => filho.once('exit', () => resolve()));
    filho.kill('SIGTERM');
    const prazo = setTimeout(() => filho.kill('SIGKILL'), 15_000);
    await saiu;
    clearTimeout(prazo);
  }
  await limparDados(s.prefixo, SERVICOS);
  rmSync(s.dataDir, { recursive: true, force: true });
}

// ---------------------------------------------------------------- scenario

interface Alvo {
  chave: string;
  nome: string;
  url: string;
  token?: string;
  /** each request's path, when it varies (a record drawn at random) */
  caminhos?: () => string;
}

/**
 * The admin logs in, creates BENCH_PESSOAS collaborators, has the intranet register them and gives
 * the first a profile with {colaboradores: ['ler']}; then that collaborator logs in.
 */
async function prepararCenario(e: EnderecosDoBench): Promise<Alvo[]> {
  const admin = await login(e.identity, ADMIN.email, ADMIN.senha);
  const sufixo = randomBytes(4).toString('hex');
  const senha = `Senha-${sufixo}-Forte`;
  const usuario = await esperar(e.identity, 'POST', '/usuario', 201, {
    token: admin,
    body: { nome: `Pessoa Bench ${sufixo}`, email: `bench${sufixo}@bench.test`, perfil: 'colaborador', senha },
  });

  const outros: string[] = [];
  for (let i = 1; i < PESSOAS; i++) {
    const b = await esperar(e.identity, 'POST', '/usuario', 201, {
      token: admin,
      body: { nome: `Pessoa Bench ${sufixo} ${i}`, email: `bench${sufixo}-${i}@bench.test`, perfil: 'colaborador', senha },
    });
    outros.push(b.id);
  }

  // the master's listing registers identity's collaborators in the intranet (SPEC 4.5 rule 2)
  let colaboradores: any[] = [];
  for (let tentativa = 0; tentativa < 10 && colaboradores.length < PESSOAS; tentativa++) {
    colaboradores = [];
    let cursor: string | null = null;
    do {
      const pagina: any = await esperar(e.intranet, 'GET', `/colaborador?tamanho=100${cursor ? `&cursor=${cursor}` : ''}`, 200, { token: admin });
      colaboradores.push(...pagina.itens.filter((c: any) => c.nome.startsWith(`Pessoa Bench ${sufixo}`)));
      cursor = pagina.proximo_cursor;
    } while (cursor);
    if (colaboradores.length < PESSOAS) await new Promise((r) => setTimeout(r, 500));
  }
  const colaborador = colaboradores.find((c: any) => c.auth_id === usuario.id);
  if (!colaborador || colaboradores.length < PESSOAS) throw new Error('the intranet did not register the bench users as collaborators');

  const perfil = await esperar(e.intranet, 'POST', '/perfil_acesso', 201, {
    token: admin,
    body: { nome: `Bench leitura ${sufixo}`, descricao: 'Perfil do benchmark', permissoes: { colaboradores: ['ler'] } },
  });
  await esperar(e.intranet, 'PATCH', `/colaborador/${colaborador.id}/perfil_acesso`, 200, {
    token: admin,
    body: { perfil_acesso_id: perfil.id },
  });
  const tokenUsuario = await login(e.identity, usuario.email, senha);
  const colaboradorSorteado = sorteado<string>(colaboradores.map((c: any) => c.id));
  const usuarioSorteado = sorteado([usuario.id, ...outros]);

  const alvos: Alvo[] = [
    { chave: 'bare', nome: 'bare express GET /x', url: `${e.bare}/x` },
    {
      chave: 'colaborador',
      nome: 'intranet GET /colaborador/{id} (non-master, profile ler)',
      url: `${e.intranet}/colaborador/${colaborador.id}`,
      token: tokenUsuario,
      caminhos: () => `/colaborador/${colaboradorSorteado()}`,
    },
    {
      chave: 'usuario',
      nome: 'identity GET /usuario/{own id} (non-master)',
      url: `${e.identity}/usuario/${usuario.id}`,
      token: tokenUsuario,
    },
    {
      chave: 'usuario_master',
      nome: 'identity GET /usuario/{id} (master, other user)',
      url: `${e.identity}/usuario/${usuario.id}`,
      token: admin,
      caminhos: () => `/usuario/${usuarioSorteado()}`,
    },
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
  /** server CPU time per answered request (µs): less sensitive than req/s to others' work on the machine */
  usPorReq?: number;
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
    ...(a.caminhos && { requests: [{ method: 'GET', setupRequest: (req: any) => ({ ...req, path: a.caminhos!() }) }] }),
  }) as unknown as Execucao;
  emCurso = inst;
  return Promise.resolve(inst).finally(() => {
    emCurso = undefined;
  });
}

/** Waits (bounded) until the machine has been idle for 2 s in a row: others' work on 2 cores skews everything. */
async function esperarSossego(): Promise<number | undefined> {
  const limite = Date.now() + ESPERA_SOSSEGO * 1000;
  let seguidos = 0;
  let ultima: number | undefined;
  while (ESPERA_SOSSEGO > 0 && Date.now() < limite) {
    ultima = await ocupacaoDaMaquina(1000);
    if (ultima === undefined) return undefined;
    seguidos = ultima < 8 ? seguidos + 1 : 0;
    if (seguidos >= 2) return ultima;
  }
  if (ultima !== undefined) {
    console.log(`    (machine still ${Math.round(ultima)}% busy after waiting ${ESPERA_SOSSEGO} s to idle; measuring anyway)`);
  }
  return ultima;
}

async function medir(a: Alvo, s: Servidor, logLevel: string): Promise<Medida> {
  await esperarSossego();
  if (AQUECIMENTO > 0) await rodar(a, AQUECIMENTO);
  const antes = amostrarCpu(s.enderecos.pid);
  const r = await rodar(a, DURACAO);
  const depois = amostrarCpu(s.enderecos.pid);
  return {
    alvo: a,
    logLevel,
    reqPorSeg: r.requests.average,
    p50: r.latency.p50,
    p99: r.latency.p99,
    total: r.requests.total,
    non2xx: r.non2xx,
    erros: r.errors, // autocannon counts its time-outs among them
    cpu: usoDeCpu(antes, depois),
    usPorReq: usPorRequisicao(antes, depois, r.requests.total),
  };
}

// ---------------------------------------------------------------- report

function veredito(m: Medida, bare?: Medida) {
  if (m.alvo.chave === 'bare') return { razao: 1, ok: undefined as boolean | undefined, texto: 'baseline' };
  const razao = bare ? m.reqPorSeg / bare.reqPorSeg : NaN;
  const okRazao = razao >= META_RAZAO;
  // autocannon keeps whole milliseconds (25.9 ms is printed 25): within the goal means below it
  const okP99 = m.p99 < META_P99_MS;
  const valido = m.non2xx === 0 && m.erros === 0;
  const ok = okRazao && okP99 && valido;
  const partes = [
    `ratio ${razao.toFixed(2)} ${okRazao ? '>=' : '<'} ${META_RAZAO}`,
    `p99 ${fms(m.p99)} ${okP99 ? '<' : '>='} ${META_P99_MS} ms`,
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
    `    CPU: server ${fpct(m.cpu.servidor)} (${m.usPorReq === undefined ? '-' : f0(m.usPorReq)} µs per request), ` +
    `load generator ${fpct(m.cpu.gerador)}, mariadb ${fpct(m.cpu.banco)}, redis ${fpct(m.cpu.redis)}, ` +
    `other processes ${fpct(m.cpu.outros)} (100% = one core); machine ${fpct(m.cpu.maquina)} of all cores\n` +
    `    goal: ${v.texto}`
  );
}

function tabela(medidas: Medida[]): string {
  const cab = ['log', 'route', 'req/s', 'p50 ms', 'p99 ms', 'ratio', 'srv CPU', 'srv µs/req', 'db CPU', 'others', 'goal'];
  const linhas = medidas.map((m) => {
    const bare = medidas.find((b) => b.logLevel === m.logLevel && b.alvo.chave === 'bare');
    const v = veredito(m, bare);
    return [
      m.logLevel,
      m.alvo.chave === 'bare'
        ? 'bare GET /x'
        : m.alvo.nome.replace(/ \(.*\)$/, '') + (m.alvo.chave === 'usuario_master' ? ' (master)' : ''),
      f0(m.reqPorSeg),
      fms(m.p50),
      fms(m.p99),
      v.razao.toFixed(2),
      fpct(m.cpu.servidor),
      m.usPorReq === undefined ? '-' : f0(m.usPorReq),
      fpct(m.cpu.banco),
      fpct(m.cpu.outros),
      v.ok === undefined ? '-' : v.ok ? 'met' : 'NOT met',
    ];
  });
  const larguras = cab.map((c, i) => Math.max(c.length, ...linhas.map((l) => l[i].length)));
  const fmt = (l: string[]) => l.map((c, i) => (i >= 2 && i <= 9 ? c.padStart(larguras[i]) : c.padEnd(larguras[i]))).join('  ');
  return [fmt(cab), larguras.map((w) => '-'.repeat(w)).join('  '), ...linhas.map(fmt)].join('\n');
}

// ---------------------------------------------------------------- main

let atual: Pick<Servidor, 'filho' | 'prefixo' | 'dataDir'> | undefined;
let interrompido = false;

async function passada(logLevel: string): Promise<Medida[]> {
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
      const m = await medir(a, s, logLevel);
      if (interrompido) break;
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
      `node ${process.version}; servers in a child process ` +
      `(${COMPILADO ? 'plain node on tsc output' : 'ts-node transpile-only'}), ` +
      `this process only generates load`,
  );
  console.log(`goal per service route: req/s >= ${META_RAZAO} x bare route, p99 <= ${META_P99_MS} ms`);
  console.log(
    `(closed loop: mean latency = ${CONEXOES} connections / req/s, so p99 <= ${META_P99_MS} ms needs well over ` +
      `${f0((CONEXOES * 1000) / META_P99_MS)} req/s)`,
  );
  const todas: Medida[] = [];
  try {
    for (const nivel of NIVEIS) todas.push(...(await passada(nivel)));
  } finally {
    if (compilado) rmSync(compilado.dir, { recursive: true, force: true });
  }

  console.log(`\nSummary (${DURACAO} s per route, ${CONEXOES} connections; ratio = req/s / bare req/s of the same log level)`);
  console.log(tabela(todas));
  const servicos = todas.filter((m) => m.alvo.chave !== 'bare');
  const falhas = servicos.filter((m) => !veredito(m, todas.find((b) => b.logLevel === m.logLevel && b.alvo.chave === 'bare')).ok);
  console.log(
    falhas.length ? `\nGoal NOT met by ${falhas.length} of ${servicos.length} measurements.` : '\nGoal met by every measurement.',
  );
}

process.once('SIGINT', () => {
  interrompido = true;
  console.error('\ninterrupted: stopping the server and dropping its data');
  emCurso?.stop();
  const s = atual;
  (s ? pararServidor(s) : Promise.resolve()).finally(() => process.exit(130));
});

main().then(
  () => process.exit(0),
  (err) => {
    // after Ctrl-C the SIGINT handler finishes the clean-up and exits
    if (interrompido) return;
    console.error(err instanceof Error ? (err.stack ?? err.message) : err);
    process.exit(1);
  },
);
