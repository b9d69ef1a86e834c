/**
 * What the webhook hub benchmarks share (bench/hub-ingest.ts, bench/hub-entrega.ts,
 * bench/hub-falhas.ts; never part of `npm test`):
 *
 *   - the processes: the identity + hub APIs in one child (bench/hub-servidor.ts, no delivery
 *     worker), delivery workers as separate children (`suite worker hub-entrega`, the command an
 *     operator scales), the subscriber in its own child (bench/hub-receptor.ts); this process only
 *     sets things up over HTTP and generates load;
 *   - setup over HTTP, as a client would: admin login, applications at identity, a master's
 *     GET /aplicativo at the hub to sync them, an event type with a version, subscriptions, the
 *     publisher's token;
 *   - publishing with autocannon (as fast as the hub answers) or bench/carga-ritmada.ts (at a rate), the deliveries counted in the run's database, CPU and RSS from /proc;
 *   - clean-up: children stopped with SIGTERM, databases `<prefix>_identity` / `<prefix>_hub`
 *     and Redis keys `<prefix>*` dropped, the temp DATA_DIR removed (also on Ctrl-C).
 *
 * Only HTTP and the queue's name (`hub-entrega`) are relied on, never the product's internals.
 */
import { ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { JobType, Queue } from 'bullmq';
import { cargaRitmada } from './carga-ritmada';
import type { EnderecosDoHubBench } from './hub-servidor';
import { cpuDaMaquina, cpuDoProcesso, cpuDosProcessos, PIDS_DO_BANCO, PIDS_DO_REDIS, picoDeRssMb, rssMb } from './processo';
import IORedis from 'ioredis';
import {
  argumentosDePerfil,
  chamar,
  Compilado,
  compilarParaBench,
  conectarAoServidor,
  esperar,
  f0,
  fms,
  fpct,
  inteiro,
  limparDados as limparDadosDe,
  MYSQL_URL,
  RAIZ,
  REDIS_URL,
} from './comum';

export { chamar, esperar, inteiro, RAIZ, REDIS_URL };
export const ADMIN = { email: 'admin@bench.test', senha: 'Admin-Bench-Senha-Forte-1' };
/** the delivery queue's name (queues/hub-entrega.ts): the only product internal the benches use */
export const FILA_DE_ENTREGAS = 'hub-entrega';
/**
 * The hub and its workers run on tsc output, as `npm start` runs them, unless BENCH_COMPILED=0
 * (ts-node: its compiler's memory and source-map support would be in every figure).
 */
export const compiladoAtivo = () => process.env.BENCH_COMPILED !== '0';
export const LOG_LEVEL = process.env.BENCH_LOG_LEVEL || 'warn';

export function inteiros(nome: string, padrao: number[]): number[] {
  const v = process.env[nome];
  if (v === undefined || v === '') return padrao;
  const lista = v.split(',').map((s) => Number(s.trim()));
  if (!lista.length || lista.some((n) => !Number.isInteger(n) || n < 1)) throw new Error(`${nome} must be a comma list of positive integers, got "${v}"`);
  return lista;
}

export const dormir = (ms: number) => new Promise((r) => setTimeout(r, ms));

// ---------------------------------------------------------------- HTTP

// ---------------------------------------------------------------- compiled mode

let compilado: Compilado | undefined;

/**
 * Compiled mode (unless BENCH_COMPILED=0): hub server and workers run as `npm start`
 * does, plain node on tsc output, instead of through ts-node (whose source-map support makes every
 * error stack, e.g. of a failed attempt, dearer than in production).
 */
const compilar = () => (compilado ??= compilarParaBench(['suite.ts', 'bench/hub-servidor.ts']));

/** node arguments to run a TypeScript entry of the project (ts-node, or its compiled twin) */
function comando(entrada: 'suite' | 'servidor', args: string[] = []): { argv: string[]; env: Record<string, string> } {
  const perfil = argumentosDePerfil();
  if (compiladoAtivo()) {
    const c = compilar();
    return { argv: [...perfil, c.saida(entrada === 'suite' ? 'suite.ts' : 'bench/hub-servidor.ts'), ...args], env: c.env };
  }
  const arquivo = entrada === 'suite' ? path.join(RAIZ, 'suite.ts') : path.join(RAIZ, 'bench', 'hub-servidor.ts');
  return { argv: [...perfil, '-r', 'ts-node/register/transpile-only', arquivo, ...args], env: {} };
}

// ---------------------------------------------------------------- processes

export interface Receptor {
  filho: ChildProcess;
  pid: number;
  porta: number;
  url(caminho?: string): string;
  pedir<T = any>(cmd: 'estado' | 'latencias' | 'zerar'): Promise<T>;
}

export interface EstadoDoReceptor {
  chamadas: number;
  sucessos: number;
  falhas: number;
  idsDistintos: number;
  idsComSucesso: number;
  idsSoComFalhas: number;
  falhasDosSemSucesso: Record<string, number>;
  duplicados: number;
  semCriadoEm: number;
  primeiroOk: number;
  ultimoOk: number;
}

export interface Latencias {
  n: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  media: number;
}

function vivo(p: ChildProcess): boolean {
  return p.exitCode === null && p.signalCode === null;
}

async function terminar(p: ChildProcess, prazoMs = 20_000): Promise<void> {
  if (!vivo(p)) return;
  const saiu = new Promise<void>((resolve) => p.once('exit', () => resolve()));
  p.kill('SIGTERM');
  const prazo = setTimeout(() => {
    if (vivo(p)) p.kill('SIGKILL');
  }, prazoMs);
  await saiu;
  clearTimeout(prazo);
}

/**
 * One benchmark run: a unique prefix (databases `<prefix>_identity`, `<prefix>_hub`, Redis keys
 * `<prefix>*`), a temp DATA_DIR, and every child process started for it.
 */
export class Bancada {
  readonly prefixo = `bhub${Date.now().toString(36)}${randomBytes(2).toString('hex')}`;
  readonly dataDir = mkdtempSync(path.join(tmpdir(), 'suite-bench-hub-'));
  enderecos?: EnderecosDoHubBench;
  servidor?: ChildProcess;
  workers: ChildProcess[] = [];
  receptores: Receptor[] = [];
  private redisConexao?: IORedis;
  private fila?: Queue;
  private encerrando?: Promise<void>;

  /** `extra`: environment of every child of this run (e.g. HUB_RETRY_SCHEDULE_MS) */
  constructor(private readonly extra: Record<string, string> = {}) {}

  env(): NodeJS.ProcessEnv {
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      APP_ENV: 'LOCALHOST',
      DB_PREFIX: this.prefixo,
      QUEUE_PREFIX: this.prefixo,
      DATA_DIR: this.dataDir,
      LOG_LEVEL: LOG_LEVEL,
      MYSQL_URL,
      REDIS_URL,
      IDENTITY_ADMIN_EMAIL: ADMIN.email,
      IDENTITY_ADMIN_SENHA: ADMIN.senha,
      IDENTITY_LOGIN_LIMITE_POR_MINUTO: '100000',
      // setup logs in a few users and applications: no need for production's password cost
      IDENTITY_SENHA_CUSTO: '10',
      SHUTDOWN_GRACE_MS: '5000',
      ...this.extra,
    };
    delete env.MASTER_EMAILS;
    if (this.enderecos) {
      env.IDENTITY_URL = this.enderecos.identity;
      env.HUB_URL = this.enderecos.hub;
    }
    return env;
  }

  /** where the children's stdout (their pino logs) goes: BENCH_SERVER_LOG, this, or /dev/null */
  arquivoDeLog?: string;

  private saida(): number {
    return openSync(process.env.BENCH_SERVER_LOG || this.arquivoDeLog || '/dev/null', 'a');
  }

  /** The children's warnings and errors grouped by message (from their pino JSON logs). */
  resumoDoLog(maximo = 12): string[] {
    const arquivo = process.env.BENCH_SERVER_LOG || this.arquivoDeLog;
    if (!arquivo || !existsSync(arquivo)) return [];
    const grupos = new Map<string, number>();
    for (const linha of readFileSync(arquivo, 'utf8').split('\n')) {
      if (!linha.startsWith('{')) continue;
      try {
        const l = JSON.parse(linha);
        if ((l.level ?? 0) < 40) continue;
        const err = l.erro ?? l.err?.message ?? '';
        const chave = `${l.level >= 50 ? 'ERROR' : 'WARN'} ${l.msg ?? ''}${err ? `: ${String(err).slice(0, 120)}` : ''}`;
        grupos.set(chave, (grupos.get(chave) ?? 0) + 1);
      } catch {
        // not a log line
      }
    }
    return [...grupos].sort((a, b) => b[1] - a[1]).slice(0, maximo).map(([k, n]) => `${String(n).padStart(8)}  ${k}`);
  }

  /** The identity + hub APIs (bench/hub-servidor.ts), ready. */
  async iniciarServidor(): Promise<EnderecosDoHubBench> {
    const { argv, env } = comando('servidor');
    const saida = this.saida();
    const filho = spawn(process.execPath, argv, { cwd: RAIZ, stdio: ['ignore', saida, 'inherit', 'ipc'], env: { ...this.env(), ...env } });
    closeSync(saida);
    this.servidor = filho;
    this.enderecos = await new Promise<EnderecosDoHubBench>((resolve, reject) => {
      const prazo = setTimeout(() => reject(new Error('the hub bench server did not start within 180 s')), 180_000);
      filho.on('message', (m: any) => {
        if (m?.tipo === 'pronto') {
          clearTimeout(prazo);
          resolve(m);
        } else if (m?.tipo === 'erro') {
          clearTimeout(prazo);
          reject(new Error(`the hub bench server failed: ${m.mensagem}`));
        }
      });
      filho.once('exit', (code, sinal) => {
        clearTimeout(prazo);
        reject(new Error(`the hub bench server exited (${code ?? sinal}) before it was ready`));
      });
    });
    return this.enderecos;
  }

  /** The subscriber (bench/hub-receptor.ts) in `modo` (`ok` or `metade`). */
  async iniciarReceptor(modo: 'ok' | 'metade'): Promise<Receptor> {
    const filho = spawn(process.execPath, ['-r', 'ts-node/register/transpile-only', path.join(RAIZ, 'bench', 'hub-receptor.ts')], {
      cwd: RAIZ,
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      env: { ...process.env, BENCH_RECEPTOR_MODO: modo },
    });
    const pendentes = new Map<number, (m: any) => void>();
    let proximo = 0;
    const pronto = await new Promise<{ pid: number; porta: number }>((resolve, reject) => {
      const prazo = setTimeout(() => reject(new Error('the receiver did not start within 60 s')), 60_000);
      filho.on('message', (m: any) => {
        if (m?.tipo === 'pronto') {
          clearTimeout(prazo);
          resolve(m);
        } else if (m && typeof m.pedido === 'number') {
          pendentes.get(m.pedido)?.(m);
          pendentes.delete(m.pedido);
        }
      });
      filho.once('exit', (code, sinal) => {
        clearTimeout(prazo);
        reject(new Error(`the receiver exited (${code ?? sinal})`));
        for (const r of pendentes.values()) r({ erro: 'receiver exited' });
      });
    });
    const receptor: Receptor = {
      filho,
      pid: pronto.pid,
      porta: pronto.porta,
      // 127.0.0.1: allowed for http like localhost (SPEC 4.3 rule 7), without a DNS lookup per connection
      url: (caminho = '/webhook') => `http://${process.env.BENCH_RECEPTOR_HOST || '127.0.0.1'}:${pronto.porta}${caminho}`,
      pedir: (cmd) =>
        new Promise((resolve, reject) => {
          if (!vivo(filho)) return reject(new Error('the receiver is not running'));
          const pedido = ++proximo;
          pendentes.set(pedido, resolve);
          filho.send({ pedido, cmd });
        }),
    };
    this.receptores.push(receptor);
    return receptor;
  }

  /** The delivery queue (producer side) of this run, for pause/resume and counts. */
  filaDeEntregas(): Queue {
    this.fila ??= new Queue(FILA_DE_ENTREGAS, { connection: this.conexao(), prefix: this.prefixo });
    return this.fila;
  }

  /**
   * Deliveries held by the queue's jobs in the given states: a batch job (`entregar-lote`) holds
   * its first attempts, a job of one delivery one.
   */
  async entregasNaFila(...estados: JobType[]): Promise<{ jobs: number; entregas: number }> {
    const jobs = await this.filaDeEntregas().getJobs(estados);
    const entregas = jobs.reduce((n, j) => n + (Array.isArray(j?.data?.entregas) ? j.data.entregas.length : 1), 0);
    return { jobs: jobs.length, entregas };
  }

  private conexao(): IORedis {
    this.redisConexao ??= new IORedis(REDIS_URL, { maxRetriesPerRequest: null });
    return this.redisConexao;
  }

  /**
   * `n` delivery worker processes (`suite worker hub-entrega`), returned once every one is
   * connected to the queue (BullMQ lists its worker connections).
   */
  async iniciarWorkers(n: number): Promise<ChildProcess[]> {
    const { argv, env } = comando('suite', ['worker', FILA_DE_ENTREGAS]);
    const fila = new Queue(FILA_DE_ENTREGAS, { connection: this.conexao(), prefix: this.prefixo });
    const esperados = n + (await fila.getWorkersCount());
    const novos: ChildProcess[] = [];
    for (let i = 0; i < n; i++) {
      const saida = this.saida();
      const filho = spawn(process.execPath, argv, { cwd: RAIZ, stdio: ['ignore', saida, 'inherit'], env: { ...this.env(), ...env } });
      closeSync(saida);
      novos.push(filho);
      this.workers.push(filho);
    }
    try {
      const limite = Date.now() + 180_000;
      for (;;) {
        const mortos = novos.filter((w) => !vivo(w));
        if (mortos.length) throw new Error(`a ${FILA_DE_ENTREGAS} worker exited before it was ready (${mortos[0].exitCode ?? mortos[0].signalCode})`);
        if ((await fila.getWorkersCount()) >= esperados) return novos;
        if (Date.now() > limite) throw new Error(`the ${FILA_DE_ENTREGAS} workers did not connect within 180 s`);
        await dormir(200);
      }
    } finally {
      await fila.close();
    }
  }

  async pararWorkers(): Promise<void> {
    const lista = this.workers.splice(0);
    await Promise.all(lista.map((w) => terminar(w)));
  }

  /** Stops every child, drops the run's databases and Redis keys, removes DATA_DIR. Every call waits for the one clean-up. */
  encerrar(): Promise<void> {
    this.encerrando ??= this.limpar();
    return this.encerrando;
  }

  private async limpar(): Promise<void> {
    await this.pararWorkers().catch(() => undefined);
    await Promise.all(this.receptores.map((r) => terminar(r.filho, 5000))).catch(() => undefined);
    if (this.servidor) await terminar(this.servidor).catch(() => undefined);
    await this.fila?.close().catch(() => undefined);
    this.redisConexao?.disconnect();
    await limparDados(this.prefixo).catch((err) => console.error(`clean-up of ${this.prefixo} failed: ${err.message}`));
    rmSync(this.dataDir, { recursive: true, force: true });
    if (compilado) {
      rmSync(compilado.dir, { recursive: true, force: true });
      compilado = undefined;
    }
  }
}

/** Drops `<prefix>_identity`, `<prefix>_hub` and the Redis keys `<prefix>*`. */
export const limparDados = (prefixo: string) => limparDadosDe(prefixo, ['identity', 'hub']);

// ---------------------------------------------------------------- the scenario, over HTTP

/** `dados` of the bench events: a collaborator-like record of about 150 bytes. */
export const ESQUEMA = {
  type: 'object',
  required: ['n', 'nome', 'email'],
  properties: {
    n: { type: 'integer' },
    nome: { type: 'string', maxLength: 200 },
    email: { type: 'string', maxLength: 200 },
    setor: { type: 'string' },
    ativo: { type: 'boolean' },
  },
  additionalProperties: false,
};
export const DADOS = { n: 1, nome: 'Fulana de Tal da Silva', email: 'fulana.silva@empresa.test', setor: 'Comercial', ativo: true };

export interface OpcoesDaAssinatura {
  url: string;
  maximo_de_tentativas: number;
  tempo_limite_em_segundos: number;
}

export interface Cenario {
  e: EnderecosDoHubBench;
  /** the master's token (identity user token; valid 8 h) */
  admin: string;
  tipo: { id: string; nome: string };
  assinaturas: string[];
  /** a fresh application token of the publisher */
  tokenDoPublicador(): Promise<string>;
  /** `k` more subscriber applications, each with one subscription of the type's version 1 */
  adicionarAssinaturas(k: number, o: OpcoesDaAssinatura): Promise<void>;
}

/** Applications created at identity, then synced into the hub by a master's listing; their hub records. */
async function aplicativos(e: EnderecosDoHubBench, admin: string, nomes: string[]) {
  const criados: any[] = [];
  for (const nome of nomes) criados.push(await esperar(e.identity, 'POST', '/aplicativo', 201, { token: admin, body: { nome } }));
  for (let tentativa = 0; ; tentativa++) {
    const pagina = await esperar(e.hub, 'GET', '/aplicativo?tamanho=1000', 200, { token: admin });
    const locais = criados.map((c) => (pagina.itens as any[]).find((a) => a.identificador_no_auth === c.id));
    if (locais.every(Boolean)) return criados.map((c, i) => ({ identity: c, hub: locais[i] }));
    if (tentativa >= 20) throw new Error('the applications did not reach the hub (sync)');
    await dormir(500);
  }
}

export async function prepararCenario(e: EnderecosDoHubBench, assinaturas: number, o: OpcoesDaAssinatura): Promise<Cenario> {
  const admin = (await esperar(e.identity, 'POST', '/auth/login', 200, { body: ADMIN })).access_token as string;
  const tag = randomBytes(4).toString('hex');
  const [publicador] = await aplicativos(e, admin, [`Bench publicador ${tag}`]);
  const tipo = await esperar(e.hub, 'POST', '/tipo_de_evento', 201, {
    token: admin,
    body: { nome: `bench${tag}.criado`, descricao: 'Evento do benchmark', aplicativo_id: publicador.hub.id },
  });
  await esperar(e.hub, 'POST', `/tipo_de_evento/${tipo.id}/versao`, 201, { token: admin, body: { esquema: ESQUEMA } });
  let n = 0;
  const cenario: Cenario = {
    e,
    admin,
    tipo: { id: tipo.id, nome: tipo.nome },
    assinaturas: [],
    async tokenDoPublicador() {
      const t = await esperar(e.identity, 'POST', '/auth/token', 200, {
        body: { client_id: publicador.identity.client_id, client_secret: publicador.identity.client_secret },
      });
      return t.access_token;
    },
    async adicionarAssinaturas(k, opcoes) {
      const nomes = Array.from({ length: k }, () => `Bench assinante ${tag} ${++n}`);
      for (const a of await aplicativos(e, admin, nomes)) {
        const s = await esperar(e.hub, 'POST', '/assinatura', 201, {
          token: admin,
          body: {
            aplicativo_assinante_id: a.hub.id,
            tipo_de_evento_id: tipo.id,
            url_de_destino: opcoes.url,
            versao_do_esquema: 1,
            maximo_de_tentativas: opcoes.maximo_de_tentativas,
            tempo_limite_em_segundos: opcoes.tempo_limite_em_segundos,
          },
        });
        cenario.assinaturas.push(s.id);
      }
    },
  };
  if (assinaturas) await cenario.adicionarAssinaturas(assinaturas, o);
  return cenario;
}

/**
 * Deliveries stored in the run's hub database (all, or in one `situacao`), counted there: GET
 * /entrega's `total` stops at 10,000, and these runs hold a hundred thousand.
 */
export async function totalDeEntregas(c: Cenario, situacao?: 'pendente' | 'entregue' | 'fila_de_erro' | 'cancelada'): Promise<number> {
  const conexao = await conectarAoServidor({ database: `${c.e.prefixo}_hub` });
  try {
    const [linhas] = await conexao.query(`SELECT COUNT(*) AS n FROM entrega${situacao ? ' WHERE situacao = ?' : ''}`, situacao ? [situacao] : []);
    return Number((linhas as { n: number | string }[])[0].n);
  } finally {
    await conexao.end();
  }
}

// ---------------------------------------------------------------- load

/** autocannon returns its instance, also a promise of the result (the types only show the promise) */
type Execucao = autocannon.Instance & PromiseLike<autocannon.Result>;
let emCurso: Execucao | undefined;

export interface Carga {
  /** 2xx answers: events accepted */
  aceitos: number;
  non2xx: number;
  erros: number;
  segundos: number;
  eventosPorSeg: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  /** a few non-2xx status codes with their counts */
  codigos: Record<string, number>;
  /** at an offered rate: how late the load generator sent its requests (ms), charged to the latency */
  atrasoDoGerador?: { p99: number; max: number };
  /** at an offered rate: events accepted in its warm-up, not in the figures, and its other answers and errors */
  aceitosNoAquecimento?: number;
  falhasNoAquecimento?: number;
}

/**
 * POST /eventos as fast as the hub answers (autocannon): `duracao` seconds, or `quantidade`
 * requests; or, with `taxa`, that many a second for `duracao` seconds, each due at its time
 * (bench/carga-ritmada.ts). Every request is a new event (no idempotency `id`).
 */
export async function publicar(
  c: Cenario,
  token: string,
  o: { conexoes: number; duracao?: number; quantidade?: number; taxa?: number },
): Promise<Carga> {
  const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json' };
  const body = JSON.stringify({ tipo: c.tipo.nome, versao: 1, dados: DADOS });
  if (o.taxa) {
    const r = await cargaRitmada({ url: `${c.e.hub}/eventos`, method: 'POST', headers, corpo: () => body, taxa: o.taxa, segundos: o.duracao ?? 10, conexoes: o.conexoes });
    const codigos = Object.fromEntries(Object.entries(r.codigos).filter(([k]) => !k.startsWith('2')));
    return {
      aceitos: r['2xx'],
      non2xx: r.non2xx,
      erros: r.errors,
      segundos: r.segundos,
      eventosPorSeg: r['2xx'] / r.segundos,
      ...r.latency,
      codigos,
      atrasoDoGerador: r.atrasoDoGerador,
      aceitosNoAquecimento: r.aceitosNoAquecimento,
      falhasNoAquecimento: r.falhasNoAquecimento,
    };
  }
  const inicio = performance.now();
  const inst = autocannon({
    url: `${c.e.hub}/eventos`,
    method: 'POST',
    connections: o.conexoes,
    pipelining: 1,
    ...(o.quantidade !== undefined ? { amount: o.quantidade } : { duration: o.duracao ?? 10 }),
    timeout: 30,
    headers,
    body,
  }) as unknown as Execucao;
  emCurso = inst;
  const r = await Promise.resolve(inst).finally(() => {
    emCurso = undefined;
  });
  const segundos = (performance.now() - inicio) / 1000;
  const codigos: Record<string, number> = {};
  for (const [k, v] of Object.entries((r as any).statusCodeStats ?? {})) if (!k.startsWith('2')) codigos[k] = (v as any).count;
  const aceitos = (r as any)['2xx'] as number;
  return {
    aceitos,
    non2xx: r.non2xx,
    erros: r.errors, // autocannon counts its time-outs among them
    segundos,
    eventosPorSeg: aceitos / segundos,
    p50: r.latency.p50,
    p90: r.latency.p90,
    p99: r.latency.p99,
    max: r.latency.max,
    codigos,
  };
}

/** Publishes `quantidade` events at full speed (50 connections by default); prints a line. */
export async function publicarLote(c: Cenario, quantidade: number, conexoes = inteiro('BENCH_CONEXOES', 50)): Promise<Carga> {
  const token = await c.tokenDoPublicador();
  const r = await publicar(c, token, { conexoes, quantidade });
  console.log(
    `  published ${f0(r.aceitos)} of ${f0(quantidade)} events in ${r.segundos.toFixed(1)} s (${f0(r.eventosPorSeg)} events/s, ` +
      `p50 ${fms(r.p50)} ms, p99 ${fms(r.p99)} ms${r.non2xx || r.erros ? `, ${r.non2xx} non-2xx ${JSON.stringify(r.codigos)}, ${r.erros} errors` : ''})`,
  );
  return r;
}

// ---------------------------------------------------------------- CPU and memory

/**
 * Samples the RSS of `pids` every `ms` (what a run prints as it goes); `parar()` answers the peak
 * per pid (MB), the kernel's high-water mark, which no sample between two peaks misses.
 */
export function amostrarRss(pids: number[], ms = 250) {
  const pico = new Map<number, number>();
  const ler = () => {
    for (const p of pids) {
      const v = rssMb(p);
      if (v !== undefined && v > (pico.get(p) ?? 0)) pico.set(p, v);
    }
  };
  ler();
  const t = setInterval(ler, ms);
  return {
    pico,
    parar() {
      clearInterval(t);
      ler();
      for (const p of pids) pico.set(p, Math.max(pico.get(p) ?? 0, picoDeRssMb(p) ?? 0));
      return pico;
    },
  };
}

export interface UsoDeCpu {
  /** percent of one core, per role */
  hub?: number;
  workers?: number;
  receptor?: number;
  gerador: number;
  banco?: number;
  redis?: number;
  /** everybody else on the machine (others' tests and builds) */
  outros?: number;
  /** busy share of all cores */
  maquina?: number;
}

/** CPU of the run's processes between `medir()` and the returned function's call. */
export function medirCpu(papeis: { hub?: number; workers?: number[]; receptor?: number }) {
  const amostra = () => {
    const u = process.cpuUsage();
    return {
      hub: papeis.hub ? cpuDoProcesso(papeis.hub) : undefined,
      workers: papeis.workers ? cpuDosProcessos(papeis.workers) : undefined,
      receptor: papeis.receptor ? cpuDoProcesso(papeis.receptor) : undefined,
      gerador: (u.user + u.system) / 1e6,
      banco: cpuDosProcessos(PIDS_DO_BANCO),
      redis: cpuDosProcessos(PIDS_DO_REDIS),
      maquina: cpuDaMaquina(),
      em: performance.now(),
    };
  };
  const a = amostra();
  return (): UsoDeCpu => {
    const b = amostra();
    const seg = (b.em - a.em) / 1000;
    const pct = (x?: number, y?: number) => (x === undefined || y === undefined ? undefined : (100 * (y - x)) / seg);
    const uso: UsoDeCpu = {
      hub: pct(a.hub, b.hub),
      workers: pct(a.workers, b.workers),
      receptor: pct(a.receptor, b.receptor),
      gerador: pct(a.gerador, b.gerador)!,
      banco: pct(a.banco, b.banco),
      redis: pct(a.redis, b.redis),
    };
    if (a.maquina && b.maquina && b.maquina.total > a.maquina.total) {
      uso.maquina = (100 * (b.maquina.ocupado - a.maquina.ocupado)) / (b.maquina.total - a.maquina.total);
      const nossos = [uso.hub, uso.workers, uso.receptor, uso.gerador, uso.banco, uso.redis].reduce<number>((t, v) => t + (v ?? 0), 0);
      uso.outros = Math.max(0, (100 * (b.maquina.ocupado - a.maquina.ocupado)) / seg - nossos);
    }
    return uso;
  };
}

export function linhaDeCpu(u: UsoDeCpu): string {
  const partes = [
    u.hub !== undefined ? `hub API ${fpct(u.hub)}` : '',
    u.workers !== undefined ? `workers ${fpct(u.workers)}` : '',
    u.receptor !== undefined ? `receiver ${fpct(u.receptor)}` : '',
    `load generator ${fpct(u.gerador)}`,
    u.banco !== undefined ? `mariadb ${fpct(u.banco)}` : '',
    u.redis !== undefined ? `redis ${fpct(u.redis)}` : '',
    u.outros !== undefined ? `other processes ${fpct(u.outros)}` : '',
  ].filter(Boolean);
  return `CPU (100% = one core): ${partes.join(', ')}; machine ${fpct(u.maquina)} of all cores`;
}

// ---------------------------------------------------------------- report

export { f0, fms, fpct };

/** A plain text table; columns listed in `direita` are right-aligned. */
export function tabela(cab: string[], linhas: string[][], direita: number[] = []): string {
  const larguras = cab.map((c, i) => Math.max(c.length, ...linhas.map((l) => (l[i] ?? '').length)));
  const fmt = (l: string[]) =>
    l
      .map((c, i) => (direita.includes(i) ? (c ?? '').padStart(larguras[i]) : (c ?? '').padEnd(larguras[i])))
      .join('  ')
      .trimEnd();
  return [fmt(cab), larguras.map((w) => '-'.repeat(w)).join('  '), ...linhas.map(fmt)].join('\n');
}

export function cabecalho(nome: string): void {
  console.log(
    `${nome}: node ${process.version}, ${require('node:os').cpus().length} cores, ` +
      `${compiladoAtivo() ? 'plain node on tsc output' : 'ts-node transpile-only'} for the hub and workers, LOG_LEVEL=${LOG_LEVEL}; ` +
      `load average ${require('node:os')
        .loadavg()
        .map((x: number) => x.toFixed(2))
        .join(' ')}`,
  );
}

// ---------------------------------------------------------------- running

/**
 * Runs `corpo` with a fresh Bancada, always cleaning up (also on Ctrl-C), and exits with
 * `corpo`'s code (0 unless it answers otherwise or throws).
 */
export function rodar(corpo: (b: Bancada) => Promise<number | void>, extra: Record<string, string> = {}): void {
  const b = new Bancada(extra);
  console.log(`run prefix ${b.prefixo} (databases ${b.prefixo}_identity, ${b.prefixo}_hub; Redis keys ${b.prefixo}*; dropped at the end)`);
  let interrompido = false;
  const sair = (codigo: number) => b.encerrar().finally(() => process.exit(interrompido ? 130 : codigo));
  process.once('SIGINT', () => {
    interrompido = true;
    console.error('\ninterrupted: stopping the children and dropping the run data');
    emCurso?.stop();
    void sair(130);
  });
  corpo(b).then(
    (codigo) => sair(codigo ?? 0),
    (err) => {
      // after Ctrl-C the run fails as its children go away: that is no news
      if (!interrompido) console.error(err instanceof Error ? (err.stack ?? err.message) : err);
      return sair(1);
    },
  );
}
