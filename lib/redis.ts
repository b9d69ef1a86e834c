import { randomUUID } from 'node:crypto';
import IORedis, { RedisOptions } from 'ioredis';
import { config } from '../config';
import { aoEncerrar, dentroDe } from './lifecycle';
import { logger } from './logger';
import { SONDA_DA_CONEXAO_MS } from './tcp';

/**
 * Two kinds of connection (BullMQ docs): workers block and must retry forever
 * (`maxRetriesPerRequest: null`); producers behind HTTP (and the dashboard's and the rate limits'
 * connections) fail fast so a route answers 503 instead of hanging when Redis is down. Down
 * includes a server that stops answering on a connection still open (paused, partitioned, failing
 * over): a producer's command then fails after PRAZO_DO_COMANDO_MS, a rate limit falls back to its
 * in-memory count, and a route answers 503. Not workers': their commands block on purpose.
 */
export type TipoDeConexao = 'worker' | 'produtor' | 'painel' | 'limites';

/** A producer's command answered later than this is taken for Redis out of reach. */
export const PRAZO_DO_COMANDO_MS = 3000;
/** The rate limits' connection, silent this long while it waits for an answer, is dropped. */
export const SILENCIO_DOS_LIMITES_MS = 2000;

const compartilhadas = new Map<TipoDeConexao, IORedis>();

const SONDADA: RedisOptions = { keepAlive: SONDA_DA_CONEXAO_MS };
const FALHA_LOGO: RedisOptions = { ...SONDADA, maxRetriesPerRequest: 1, enableOfflineQueue: false, connectTimeout: 2000 };
const OPCOES: Record<TipoDeConexao, RedisOptions> = {
  worker: { ...SONDADA, maxRetriesPerRequest: null, enableReadyCheck: false },
  produtor: { ...FALHA_LOGO, commandTimeout: PRAZO_DO_COMANDO_MS },
  // the dashboard's, as a producer's but without the deadline: its bulk actions (clean a queue,
  // retry every failed job) may take Redis longer than a request's command
  painel: FALHA_LOGO,
  // the public routes' rate limits: every request is counted, so the counts of the requests read
  // in one turn of the event loop leave in one write (auto-pipelining halved Redis's CPU per CNPJ
  // lookup). It sends one batch at a time, so a Redis that stops answering would hold each next
  // batch behind the last one's deadline: a connection silent for SILENCIO_DOS_LIMITES_MS is dropped
  // instead, before any command's own deadline fires (else the batch sent in between waited one
  // more), and until it is back every count falls to the in-memory one at once. Not the queues'
  // connection: BullMQ is not known to work with auto-pipelining; nor a count whose order matters.
  // Commands under way when it is dropped are not sent again once it is back (ioredis would):
  // Redis may have counted them before it fell silent, and they fail at their deadline instead.
  limites: {
    ...FALHA_LOGO,
    commandTimeout: PRAZO_DO_COMANDO_MS,
    socketTimeout: SILENCIO_DOS_LIMITES_MS,
    autoResendUnfulfilledCommands: false,
    enableAutoPipelining: true,
  },
};

/** `lazyConnect`: connected by its first command only, or never (a connection BullMQ only copies). */
export function novaConexaoRedis(tipo: TipoDeConexao, nome: string = tipo, lazyConnect = false): IORedis {
  const conexao = new IORedis(config().redisUrl, { ...OPCOES[tipo], lazyConnect, connectionName: nome });
  conexao.on('error', () => {
    // reconnection is automatic; readiness (/pronto) reports the outage
  });
  aoEncerrar('redis', `redis:${nome}`, () => fechar(conexao));
  return conexao;
}

/**
 * QUIT when connected (pending replies arrive first); otherwise, or when QUIT is not answered in a
 * second, the socket is dropped: a connection retrying forever would never settle a QUIT.
 */
async function fechar(conexao: IORedis): Promise<void> {
  let respondeu = false;
  if (conexao.status === 'ready') await dentroDe(conexao.quit().then(() => (respondeu = true)), 1000);
  if (!respondeu) conexao.disconnect();
}

/** The Redis address for messages and logs: host and port, never the password. */
export const enderecoDoRedis = () => {
  const u = new URL(config().redisUrl);
  return `${u.hostname}:${u.port || 6379}`;
};

/** One shared connection per kind, for producers, rate limits and caches. */
export function redis(tipo: TipoDeConexao = 'produtor'): IORedis {
  let c = compartilhadas.get(tipo);
  if (!c) {
    c = novaConexaoRedis(tipo);
    compartilhadas.set(tipo, c);
    aoEncerrar('redis', `redis-compartilhada:${tipo}`, async () => compartilhadas.delete(tipo));
  }
  return c;
}

/**
 * Producers refuse commands until connected (no offline queue): wait for the first connection.
 * Once the producers' connection is up, the server's settings are checked
 * (conferirConfiguracaoDoRedis), once a connection, for at most PRAZO_DA_CONFERENCIA_MS: a server
 * (or proxy) that never answers CONFIG only loses its warnings, it does not hold up the start.
 * Every process waits for that connection; its others reach the same server.
 */
export async function esperarRedis(tipo: TipoDeConexao = 'produtor', prazoMs = 15_000): Promise<void> {
  const c = redis(tipo);
  if (c.status !== 'ready') await conectado(c, prazoMs);
  if (tipo !== 'produtor') return;
  let conferencia = conferidas.get(c);
  if (!conferencia) conferidas.set(c, (conferencia = conferirConfiguracaoDoRedis(c)));
  if (!(await dentroDe(conferencia, PRAZO_DA_CONFERENCIA_MS))) {
    logger('redis').debug({ redis: enderecoDoRedis() }, 'CONFIG GET sem resposta: a configuração do Redis não foi conferida');
  }
}

const PRAZO_DA_CONFERENCIA_MS = 2000;

const conferidas = new WeakMap<IORedis, Promise<void>>();

async function conectado(c: IORedis, prazoMs: number): Promise<void> {
  // the last error says why (a refused connection, WRONGPASS, a TLS failure): never the password
  let ultimoErro: Error | undefined;
  const guardar = (err: Error) => (ultimoErro = err);
  c.on('error', guardar);
  try {
    await new Promise<void>((resolve, reject) => {
      const prazo = setTimeout(() => {
        reject(new Error(`Redis did not answer at ${enderecoDoRedis()}${ultimoErro ? `: ${ultimoErro.message}` : ''}`));
      }, prazoMs);
      c.once('ready', () => {
        clearTimeout(prazo);
        resolve();
      });
    });
  } finally {
    c.off('error', guardar);
  }
}

/**
 * The Redis settings the suite relies on (DESIGN §8), each with what goes wrong without it: the
 * process starts whatever they are, and logs a warning naming each one that differs.
 */
const CONFIGURACAO_ESPERADA = [
  {
    nome: 'maxmemory-policy',
    esperado: 'noeviction',
    risco: 'com a memória cheia o Redis apaga chaves, as das filas também (jobs, travas, agendamentos): BullMQ exige noeviction',
  },
  {
    nome: 'appendonly',
    esperado: 'yes',
    risco: 'sem o append-only file, os jobs enfileirados desde o último snapshot se perdem quando o Redis reinicia',
  },
] as const;

/**
 * Reads the settings of CONFIGURACAO_ESPERADA (CONFIG GET) and logs a warning for each that
 * differs; never throws. A managed Redis may refuse CONFIG (disabled, renamed, or left out of the
 * user's ACL): nothing is checked then, and a debug line says so.
 */
export async function conferirConfiguracaoDoRedis(c: IORedis): Promise<void> {
  const log = logger('redis');
  await conferirVersaoDoRedis(c);
  for (const { nome, esperado, risco } of CONFIGURACAO_ESPERADA) {
    let valor: string | undefined;
    try {
      // [name, value], or nothing for a setting this server does not have
      valor = ((await c.config('GET', nome)) as string[])[1];
    } catch (err) {
      log.debug({ err, redis: enderecoDoRedis() }, 'CONFIG GET recusado: a configuração do Redis não foi conferida');
      return;
    }
    if (valor !== undefined && valor !== esperado) {
      log.warn({ redis: enderecoDoRedis(), configuracao: nome, valor, esperado }, `Redis com ${nome} ${valor}, não ${esperado}: ${risco}`);
    }
  }
}

/** SET with both NX and GET (umaVez) came with Redis 7.0; BullMQ alone would run on 5. */
const VERSAO_MINIMA_DO_REDIS = [7, 0];

/** Warns when the server is older than VERSAO_MINIMA_DO_REDIS; never throws (an INFO refused checks nothing). */
async function conferirVersaoDoRedis(c: IORedis): Promise<void> {
  let versao: string | undefined;
  try {
    versao = /^redis_version:([0-9.]+)/m.exec(await c.info('server'))?.[1];
  } catch {
    return;
  }
  if (!versao) return;
  const [maior, menor] = versao.split('.').map(Number);
  const [minMaior, minMenor] = VERSAO_MINIMA_DO_REDIS;
  if (maior > minMaior || (maior === minMaior && menor >= minMenor)) return;
  logger('redis').warn(
    { redis: enderecoDoRedis(), versao, minima: VERSAO_MINIMA_DO_REDIS.join('.') },
    `Redis ${versao}, anterior a ${VERSAO_MINIMA_DO_REDIS.join('.')}: os webhooks assinados do sales (SET NX GET) falham com erro`,
  );
}

/** Where a mark of umaVez stands when another copy finds it (the mark's value in Redis). */
export type EstadoDaMarca = 'em-andamento' | 'feito';

/**
 * How long a mark says em-andamento before it lapses unless `fazer` ends first: a process that died
 * meanwhile, or a SET applied whose answer never came back (lost past PRAZO_DO_COMANDO_MS), would
 * otherwise leave every copy refused (503) for the whole `validadeMs`, and a platform retrying
 * within its signature's window would have its event lost.
 */
export const PRAZO_DO_ANDAMENTO_MS = 60_000;

const APAGAR_SE_MINHA = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end";

/**
 * Runs `fazer` unless `chave` was marked within the last `validadeMs`, in which case it answers
 * `repetida` with where the mark stands and does nothing. The mark is `em-andamento` from before
 * `fazer` starts (SET NX PX GET: one call, which also tells a copy that finds the mark what it
 * holds), for at most PRAZO_DO_ANDAMENTO_MS, and `feito` once `fazer` succeeded, to the end of
 * `validadeMs` (a second call, after a success only). A failure of `fazer` removes the mark, so
 * that a retry runs.
 */
export async function umaVez<T>(chave: string, validadeMs: number, repetida: (estado: EstadoDaMarca) => T, fazer: () => Promise<T>): Promise<T> {
  const inicio = Date.now();
  const andamento = Math.min(validadeMs, PRAZO_DO_ANDAMENTO_MS);
  // this call's own mark: a failure removes it only while it is still there (a copy taken once it
  // lapsed may have marked the key since)
  const minha = `${'em-andamento' satisfies EstadoDaMarca}:${randomUUID()}`;
  const encontrada = await redis('produtor').set(chave, minha, 'PX', andamento, 'NX', 'GET');
  if (encontrada !== null) return repetida(encontrada.startsWith('em-andamento') ? 'em-andamento' : 'feito');
  let feito: T;
  try {
    feito = await fazer();
  } catch (err) {
    await redis('produtor')
      .eval(APAGAR_SE_MINHA, 1, chave, minha)
      .catch((erroAoApagar) => logger('redis').warn({ err: erroAoApagar, chave }, 'marca não removida: uma nova tentativa será tida por repetida'));
    throw err;
  }
  // done all the same: a copy arriving while the mark still says em-andamento is told to try again.
  // Written whether or not the mark lapsed meanwhile (a `fazer` past PRAZO_DO_ANDAMENTO_MS)
  const restante = validadeMs - (Date.now() - inicio);
  if (restante > 0) {
    await redis('produtor')
      .set(chave, 'feito' satisfies EstadoDaMarca, 'PX', restante)
      .catch((erroAoMarcar) => logger('redis').warn({ err: erroAoMarcar, chave }, 'marca não passou a feito: uma cópia será tida por em andamento'));
  }
  return feito;
}
