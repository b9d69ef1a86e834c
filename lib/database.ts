import { readFileSync } from 'node:fs';
import { PoolConnection as CorePoolConnection } from 'mysql2';
import { Connection, createConnection, createPool, Pool, PoolConnection } from 'mysql2/promise';
import { Model, ModelStatic, QueryInterface, QueryTypes, Transaction } from 'sequelize';
import { ModelCtor, Sequelize } from 'sequelize-typescript';
import { SequelizeStorage, Umzug } from 'umzug';
import { config, ConfigError } from '../config';
import { NomeDoServico } from '../config/services';
import { CacheComPrazo } from './cache';
import { aoEncerrar, emSegundoPlano, encerramentoComecou } from './lifecycle';
import { logger } from './logger';
import { SONDA_DA_CONEXAO_MS } from './tcp';

export interface Migracao {
  name: string;
  up: (qi: QueryInterface) => Promise<void>;
  down?: (qi: QueryInterface) => Promise<void>;
}

/** Each service owns its own database: `<DB_PREFIX>_<service>` (DESIGN §2). */
export function nomeDoBanco(servico: NomeDoServico): string {
  return `${config().dbPrefix}_${servico}`;
}

/**
 * Host, port and credentials of a MySQL URL, and its options: `socketPath` (a server on the same
 * machine through its Unix socket, as mysql2 reads it in a URL: each round trip then costs the
 * caller less CPU than through TCP on the loopback); `ssl=true`, TLS with the server's certificate
 * checked against the system's authorities, or `sslCa=<file>`, against the authority in that PEM
 * file (a managed database's). Without either the connection is plain, as on the loopback.
 */
export function servidorDaUrl(url: string) {
  const u = new URL(url);
  const ca = u.searchParams.get('sslCa');
  const tls = ca !== null || u.searchParams.get('ssl') === 'true';
  return {
    // an IPv6 address comes bracketed in a URL ([::1]); mysql2 wants it bare
    host: u.hostname.replace(/^\[|\]$/g, ''),
    port: Number(u.port || 3306),
    user: decodeURIComponent(u.username || 'root'),
    password: decodeURIComponent(u.password),
    socketPath: u.searchParams.get('socketPath') || undefined,
    enableKeepAlive: true,
    keepAliveInitialDelay: SONDA_DA_CONEXAO_MS,
    ...(tls && { ssl: { rejectUnauthorized: true, minVersion: 'TLSv1.2', ...(ca !== null && { ca: autoridade(ca) }) } }),
  };
}

/** An authority's PEM file, read once per process (every new connection asks for it). */
const autoridades = new Map<string, string>();
const autoridade = (arquivo: string): string => {
  let pem = autoridades.get(arquivo);
  if (pem === undefined) autoridades.set(arquivo, (pem = readFileSync(arquivo, 'utf8')));
  return pem;
};

/** The server of MYSQL_URL. */
const servidor = () => servidorDaUrl(config().mysqlUrl);

/**
 * A statement that found no connection of its pool in time, or too many others already waiting
 * for one there (`comPrazoParaConexao`).
 */
const SEM_CONEXAO_A_TEMPO = 'POOL_ESPERA_ESGOTADA';
const FILA_CHEIA = 'POOL_FILA_CHEIA';

/**
 * mysql2's errors of a connection that could not be made or was lost (the server, not the
 * statement): refused, unreachable, its name not resolved (yet), its Unix socket not there (yet).
 * Sequelize wraps them (`parent`); an ENOENT is the socket's only when connecting (a file's is not).
 * So are a server that refuses one more connection (max_connections, a user's limit) and a
 * statement that found no connection of its pool: the database, busy or full, is out of reach for
 * now, and the caller is told so (503) instead of waiting.
 */
const ERROS_DE_CONEXAO = new Set([
  'ECONNREFUSED',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ECONNRESET',
  'ENOENT',
  'PROTOCOL_CONNECTION_LOST',
  'ER_CON_COUNT_ERROR',
  'ER_USER_LIMIT_REACHED',
  'ER_TOO_MANY_USER_CONNECTIONS',
  SEM_CONEXAO_A_TEMPO,
  FILA_CHEIA,
]);
export const bancoForaDoAlcance = (err: unknown): boolean => {
  const e = err as { code?: string; syscall?: string; parent?: unknown } | undefined;
  if (e?.parent && bancoForaDoAlcance(e.parent)) return true;
  return ERROS_DE_CONEXAO.has(e?.code ?? '') && (e?.code !== 'ENOENT' || e.syscall === 'connect');
};

/**
 * At start, as for Redis: a server restarting (or starting beside the suite, as in docker-compose),
 * or full, is waited for a bounded time; a refused login or any other answer of the server stops
 * at once.
 */
export async function esperarBanco(prazoMs = 30_000): Promise<void> {
  const limite = Date.now() + prazoMs;
  for (let avisado = false; ; avisado = true) {
    try {
      return await noServidor('SELECT 1');
    } catch (err) {
      if (!bancoForaDoAlcance(err) || Date.now() > limite) throw err;
      if (!avisado) logger('database').warn({ erro: (err as Error).message }, 'MySQL/MariaDB fora do alcance; aguardando');
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}

/** A statement on the server itself, outside any service's database (create or drop one), after `antes`. */
async function noServidor(sql: string, antes?: (conexao: Connection) => Promise<void>): Promise<void> {
  const conexao = await createConnection(servidor());
  try {
    await antes?.(conexao);
    await conexao.query(sql);
  } finally {
    await conexao.end();
  }
}

export async function criarBanco(servico: NomeDoServico): Promise<void> {
  await noServidor(`CREATE DATABASE IF NOT EXISTS \`${nomeDoBanco(servico)}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`, conferirModoSql);
}

/**
 * Values reach every statement escaped with backslashes (mysql2's and Sequelize's escaping): a
 * server whose sql_mode holds NO_BACKSLASH_ESCAPES reads `\'` as a backslash and the end of the
 * string, so a value could end its string and write SQL of its own. Such a server is refused, on
 * the connection given (a new one has the server's global mode).
 */
export async function conferirModoSql(conexao: Connection): Promise<void> {
  const [[{ modo }]] = (await conexao.query('SELECT @@SESSION.sql_mode AS modo')) as unknown as [{ modo: string }[]];
  if (/\bNO_BACKSLASH_ESCAPES\b/i.test(modo)) {
    throw new ConfigError('the MySQL/MariaDB server has NO_BACKSLASH_ESCAPES in its sql_mode: take it out (SET GLOBAL sql_mode, or the server\'s configuration) for the suite to connect');
  }
}

export function apagarBanco(servico: NomeDoServico): Promise<void> {
  return noServidor(`DROP DATABASE IF EXISTS \`${nomeDoBanco(servico)}\``);
}

/**
 * The limits of every pool of a service's database in a process: Sequelize's and the three of
 * mysql2 (`poolRapido`), each of DB_CONEXOES_POR_POOL connections, so a service opens at most four
 * times that per process, and `npm start` (six services in one process) 120 by default, under
 * MariaDB's and MySQL's default max_connections of 151 with room for the connections of their own
 * (`novaConexao`, `sozinho`) and a command run beside it. A statement waits for a connection a
 * bounded time, then fails as the database out of reach (503), rather than holding its request
 * for as long as the statements before it take; so does one that finds `fila` others already
 * waiting in its pool. A connection idle past `ociosaMs` is closed, so the count falls back after
 * a peak. Tests lower them.
 */
export const LIMITES_DOS_POOLS = {
  /** for a connection of the quick pools and of Sequelize's: their statements take milliseconds */
  esperaMs: 5_000,
  /** for one of `lerDemorado`'s pool, whose statements run for seconds each (a listing's page, up to 10 s) */
  esperaDemoradoMs: 15_000,
  /** statements waiting in one mysql2 pool, past which the next fails at once */
  fila: 500,
  ociosaMs: 10_000,
};

const abertos = new Map<NomeDoServico, Sequelize>();

/** Connects a service's models to its database (created when absent). */
export async function abrirBanco(servico: NomeDoServico, models: ModelCtor[]): Promise<Sequelize> {
  const existente = abertos.get(servico);
  if (existente) return existente;
  await criarBanco(servico);
  const { host, port, user, password, socketPath, ssl, enableKeepAlive, keepAliveInitialDelay } = servidor();
  const sequelize = new Sequelize({
    dialect: 'mysql',
    host,
    port,
    username: user,
    password,
    database: nomeDoBanco(servico),
    timezone: '+00:00',
    logging: false,
    benchmark: false,
    // the limits of the mysql2 pools beside it (LIMITES_DOS_POOLS); Sequelize's queue has no cap
    pool: { max: config().dbConexoesPorPool, min: 0, idle: LIMITES_DOS_POOLS.ociosaMs, acquire: LIMITES_DOS_POOLS.esperaMs, evict: 1000 },
    dialectOptions: { dateStrings: false, supportBigNumbers: true, bigNumberStrings: true, socketPath, ssl, enableKeepAlive, keepAliveInitialDelay },
    models,
  });
  abertos.set(servico, sequelize);
  aoEncerrar('bancos', `mysql:${servico}`, async () => {
    abertos.delete(servico);
    await sequelize.close();
  });
  return sequelize;
}

export function banco(servico: NomeDoServico): Sequelize {
  const s = abertos.get(servico);
  if (!s) throw new Error(`database of ${servico} is not open`);
  return s;
}

/**
 * READ COMMITTED for a transaction: its locking reads lock the rows they find, not the index gaps
 * beside them, and each statement sees what others committed before it.
 */
export const LEITURA_CONFIRMADA = { isolationLevel: Transaction.ISOLATION_LEVELS.READ_COMMITTED };

/** How long a process starting beside another that migrates waits for it. */
const ESPERA_DA_MIGRACAO_S = 1800;

/**
 * How often the connection holding the migration lock sends a statement while the migrations and
 * seeds run on others: well within the idle limits proxies are often given (30 s). Tests lower it.
 */
export const PULSO_DA_TRAVA = { ms: 10_000 };

/**
 * Keeps a named lock's connection busy while the work it guards runs on others: `enviar` (a
 * `DO 0` on it) every `ms`, `aoPerder` told of the first failure (the connection, and the lock with
 * it, gone). Answers how to stop.
 */
export function pulsar(enviar: () => Promise<unknown>, ms: number, aoPerder: (err: Error) => void): () => void {
  let perdida = false;
  const pulso = setInterval(() => {
    enviar().catch((err: Error) => {
      if (!perdida) aoPerder(err);
      perdida = true;
    });
  }, ms);
  return () => clearInterval(pulso);
}

/** The named lock a service's migrations run under (leads imports swap their tables under it too). */
export const travaDaMigracao = (servico: NomeDoServico) => `migracao_${nomeDoBanco(servico)}`.slice(0, 64);

/**
 * Applies the service's versioned migrations in order, once each (table `schema_migracoes`), then
 * `preparar` (the service's seeds and keys). A named lock keeps two processes starting together
 * from doing either at the same time: each seed is read, then made when missing, so two processes
 * side by side would both make it.
 */
export async function migrar(servico: NomeDoServico, migracoes: Migracao[], preparar: () => Promise<void> = async () => undefined): Promise<string[]> {
  const sequelize = banco(servico);
  const qi = sequelize.getQueryInterface();
  const umzug = new Umzug({
    migrations: migracoes.map((m) => ({ name: m.name, up: () => m.up(qi), down: m.down ? () => m.down!(qi) : undefined })),
    storage: new SequelizeStorage({ sequelize, tableName: 'schema_migracoes' }),
    logger: undefined,
  });
  const trava = travaDaMigracao(servico);
  return sequelize.transaction(LEITURA_CONFIRMADA, async (transaction) => {
    const travar = async (segundos: number) => {
      const [linha] = await sequelize.query<{ obtida: number | null }>('SELECT GET_LOCK(?, ?) AS obtida', {
        replacements: [trava, segundos],
        transaction,
        type: QueryTypes.SELECT,
      });
      // NULL is an error of the server's (its statement killed), not a wait that ended: asked
      // again at once, the wait below would spin
      if (linha?.obtida == null) throw new Error(`migration lock ${trava}: the server answered no result`);
      return linha.obtida === 1;
    };
    if (!(await travar(0))) {
      // another process is migrating or preparing (a large table's new index, the sales text
      // index's first build can take minutes): wait for it rather than race its seeds, a second
      // at a time, so a shutdown meanwhile ends the wait (the database closes only once this
      // connection is back)
      logger('migracoes').info({ servico }, 'outro processo migra ou prepara este serviço; aguardando');
      const ate = Date.now() + ESPERA_DA_MIGRACAO_S * 1000;
      while (!(await travar(1))) {
        if (encerramentoComecou()) throw new Error(`the shutdown stopped the wait for migration lock ${trava}`);
        if (Date.now() >= ate) throw new Error(`migration lock ${trava} not obtained in ${ESPERA_DA_MIGRACAO_S} s`);
      }
    }
    // the lock lives as long as its connection, which otherwise sends nothing while the migrations
    // and seeds run on others (an index over the registry, the text index's first build: minutes):
    // a server's or a proxy's idle limit would cut it, and another process would migrate beside
    // this one. Lost all the same, nothing more is run
    let travaPerdida: Error | undefined;
    const naConexaoDaTrava = () => sequelize.query('DO 0', { transaction });
    const pararPulso = pulsar(naConexaoDaTrava, PULSO_DA_TRAVA.ms, (err) => (travaPerdida ??= err));
    // asked of the connection itself, not only of the last pulse: a lock lost since is seen
    const conferirTrava = async () => {
      await naConexaoDaTrava().catch((err: Error) => (travaPerdida ??= err));
      if (travaPerdida) throw new Error(`migration lock ${trava} lost with its connection: ${travaPerdida.message}`, { cause: travaPerdida });
    };
    try {
      // one at a time, each recorded before the next starts: a shutdown stops between two, and
      // waits for the one under way (emSegundoPlano) before it closes the database, which would
      // otherwise leave it applied and unrecorded, to fail at every later start
      const feitas: string[] = [];
      for (const { name } of await umzug.pending()) {
        await conferirTrava();
        if (encerramentoComecou()) throw new Error(`migrations of ${servico} stopped by the shutdown before ${name}`);
        const passo = umzug.up({ to: name });
        emSegundoPlano(passo);
        await passo.catch((err: unknown) => {
          throw comPistaDeJaFeita(err, name, nomeDoBanco(servico));
        });
        feitas.push(name);
      }
      if (feitas.length) logger('migracoes').info({ servico, migracoes: feitas }, 'migrações aplicadas');
      await conferirTrava();
      await preparar();
      return feitas;
    } finally {
      pararPulso();
      // a lock lost went with its connection
      if (!travaPerdida) await sequelize.query('SELECT RELEASE_LOCK(?)', { replacements: [trava], transaction });
    }
  });
}

/** Errors of a migration whose change is there already (an index, a column, a table made, or one dropped, before). */
const MUDANCA_JA_FEITA = new Set(['ER_DUP_KEYNAME', 'ER_DUP_FIELDNAME', 'ER_TABLE_EXISTS_ERROR', 'ER_CANT_DROP_FIELD_OR_KEY']);

/**
 * A migration that fails because its change is there already was most likely made by a process
 * killed before it recorded it (the server finishes a statement whose client is gone): the error
 * says so and how to record it, instead of leaving the operator with `Duplicate key name` alone.
 */
function comPistaDeJaFeita(err: unknown, migracao: string, bancoDoServico: string): unknown {
  let causa: unknown = err;
  for (let i = 0; i < 5 && causa; i++) {
    const codigo = (causa as { code?: unknown }).code;
    if (typeof codigo === 'string' && MUDANCA_JA_FEITA.has(codigo)) {
      return new Error(
        `${(err as Error).message}. Its change is there already: most likely made by a process stopped before it recorded it ` +
          `(killed, or past the shutdown's grace). If all of it is there, record it (INSERT INTO ${bancoDoServico}.schema_migracoes (name) ` +
          `VALUES ('${migracao}')) and start again; if only part of it is, finish or undo that part first.`,
        { cause: err },
      );
    }
    const c = causa as { cause?: unknown; parent?: unknown; original?: unknown };
    causa = c.cause ?? c.parent ?? c.original;
  }
  return err;
}

/**
 * Decides about a row (delete it, refuse, deactivate) under its lock, `null` when it is gone.
 * Writers of rows that depend on it read it FOR SHARE until they commit (a subscription of an
 * application, a link to a profile): the lock waits for one under way, and in READ COMMITTED the
 * counts `decidir` makes after it see what that one wrote, so nothing slips in between. A decision
 * that also changes the rows depending on it (a subscription's pending deliveries, which a worker
 * locks in the other order) may lose a deadlock: it is made again from the start, row read anew, so
 * `decidir` must only touch the database.
 */
export function decidirSobTrava<M extends Model, T>(
  modelo: ModelStatic<M>,
  id: string,
  decidir: (linha: M | null, transaction: Transaction) => Promise<T>,
): Promise<T> {
  return repetirEmConflito(`decisão sobre ${modelo.name}`, () =>
    modelo.sequelize!.transaction(LEITURA_CONFIRMADA, async (transaction) =>
      decidir(await modelo.findByPk(id, { transaction, lock: transaction.LOCK.UPDATE }), transaction),
    ),
  );
}

/**
 * A connection of its own on a service's database, for long work that should not hold one of the
 * pool's (a bulk load). The caller ends it.
 */
export function novaConexao(servico: NomeDoServico): Promise<Connection> {
  return createConnection({ ...servidor(), database: nomeDoBanco(servico), timezone: 'Z' });
}

/** The server-wide name of `sozinho`'s lock `nome` of a service: its database's name first, within MySQL's 64 characters. */
export const nomeDaTrava = (servico: NomeDoServico, nome: string) => `${nomeDoBanco(servico)}_${nome}`.slice(0, 64);

/**
 * Runs `fn` holding the service database's named lock `nome`, on a connection of its own for as
 * long as `fn` runs; answers null, without running it, when another holder (in this process or any
 * other) keeps the lock past `esperaS` seconds (by default, not waiting at all), or `sinal` (a
 * shutdown) stops the wait. A wait the server stops fails as a statement stopped does
 * (bancoIndisponivel).
 */
export async function sozinho<T>(servico: NomeDoServico, nome: string, fn: () => Promise<T>, esperaS = 0, sinal?: AbortSignal): Promise<T | null> {
  const conexao = await novaConexao(servico);
  try {
    const trava = nomeDaTrava(servico, nome);
    if (sinal?.aborted) return null;
    // a shutdown ends the wait here, whatever the server does with it: the connection is dropped
    // (below), which ends its statement and frees a lock it may get at that very moment
    let desistir!: () => void;
    const desistencia = new Promise<null>((resolve) => (desistir = () => resolve(null)));
    sinal?.addEventListener('abort', desistir, { once: true });
    const espera = conexao.query('SELECT GET_LOCK(?, ?) AS obtida', [trava, esperaS]) as unknown as Promise<[[{ obtida: number | null }]]>;
    espera.catch(() => undefined);
    let resposta: [[{ obtida: number | null }]] | null;
    try {
      resposta = await Promise.race([espera, desistencia]);
    } finally {
      sinal?.removeEventListener('abort', desistir);
    }
    // also when the lock came as the signal did: fn does not start on a shutdown
    if (!resposta || sinal?.aborted) return null;
    const [[{ obtida }]] = resposta;
    // NULL is the wait stopped by the server (its statement killed), not a lock another holder
    // keeps: failed as a statement so stopped fails (errno 1317, a failure of the moment, 503)
    if (obtida == null) throw Object.assign(new Error(`lock ${trava}: the server stopped the wait`), { errno: 1317, code: 'ER_QUERY_INTERRUPTED' });
    if (obtida !== 1) return null;
    try {
      return await fn();
    } finally {
      // released before the connection closes: the server frees a closed connection's locks only
      // some time after its QUIT, and a holder starting right after this one would find it held
      await conexao.query('DO RELEASE_LOCK(?)', [trava]).catch(() => undefined);
    }
  } finally {
    // a lock not released above (the connection broken) goes with the connection; after a
    // shutdown's signal the connection is dropped, not ended: its QUIT would wait behind the wait
    if (sinal?.aborted) conexao.destroy();
    else await conexao.end().catch(() => conexao.destroy());
  }
}

const pools = new Map<string, Pool>();

/**
 * Hot paths (a record by id on every request, a delivery attempt) use mysql2's prepared
 * statements on a small pool of the same database, without Sequelize's query pipeline, which cost
 * more than the queries themselves. Dates come back as UTC Dates, booleans as 0/1.
 *
 * `lotes` is a second pool whose connections take several statements in one message: only
 * `emTransacaoAgrupada` uses it, with values escaped by mysql2, so no other query can carry a
 * second statement. `demorado` is a third, for statements that may take seconds (`lerDemorado`).
 * Each keeps the limits of LIMITES_DOS_POOLS.
 */
function poolRapido(sequelize: { config: { database: string } }, tipo: 'rapido' | 'lotes' | 'demorado' = 'rapido'): Pool {
  const database = sequelize.config.database;
  const emLotes = tipo === 'lotes';
  const chave = tipo === 'rapido' ? database : `${database}:${tipo}`;
  let pool = pools.get(chave);
  if (!pool) {
    const conexoes = config().dbConexoesPorPool;
    // trace off: mysql2 would capture a stack trace on every query, a cost per request on hot
    // paths; an error still names the statement and the server's message
    const criado = createPool({
      ...servidor(),
      database,
      connectionLimit: conexoes,
      // mysql2 closes idle connections only while it may keep fewer idle than its limit: then
      // any idle past idleTimeout, and those beyond maxIdle within a second (one here, so the
      // idle time governs), each with a proper QUIT (gracefulEnd: dropped, the server would log
      // every one as an aborted connection)
      maxIdle: conexoes - 1,
      idleTimeout: LIMITES_DOS_POOLS.ociosaMs,
      gracefulEnd: true,
      queueLimit: LIMITES_DOS_POOLS.fila,
      timezone: 'Z',
      trace: false,
      multipleStatements: emLotes,
    });
    comPrazoParaConexao(criado, `${tipo} de ${database}`, () => (tipo === 'demorado' ? LIMITES_DOS_POOLS.esperaDemoradoMs : LIMITES_DOS_POOLS.esperaMs));
    pools.set(chave, criado);
    aoEncerrar('bancos', `mysql-rapido:${chave}`, async () => {
      pools.delete(chave);
      await criado.end();
    });
    pool = criado;
  }
  return pool;
}

type AoObterConexao = ((err: (Error & { code?: string }) | null, conexao?: CorePoolConnection) => void) & { comPrazo?: true };

/** The line of waiters of mysql2's core pool (its ring queue); what it offers is checked before use. */
interface FilaDoMysql2 {
  length: number;
  peekAt?(indice: number): unknown;
  removeOne?(indice: number): unknown;
}

function tirarDaFila(fila: FilaDoMysql2 | undefined, quem: AoObterConexao): void {
  if (!fila?.peekAt || !fila.removeOne) return;
  for (let i = 0; i < fila.length; i++) {
    if (fila.peekAt(i) === quem) {
      fila.removeOne(i);
      return;
    }
  }
}

/**
 * mysql2 has no deadline for a connection of its pool: a statement waits in line for as long as
 * the ones before it hold every connection. Every way into the pool (`query`, `execute`,
 * `getConnection`) goes through the core pool's `getConnection`, so that is where the deadline
 * is set: past it the waiter fails (SEM_CONEXAO_A_TEMPO), and the connection its place in line
 * gets later is released at once, to the next one waiting (none is lost). mysql2's own error for
 * a full line has no code: it is given FILA_CHEIA.
 */
function comPrazoParaConexao(pool: Pool, nome: string, esperaMs: () => number): void {
  const nucleo = pool.pool as unknown as { getConnection(cb: AoObterConexao): void; _connectionQueue?: FilaDoMysql2 };
  const obter = nucleo.getConnection.bind(nucleo);
  nucleo.getConnection = (cb: AoObterConexao) => {
    // mysql2 asks again for a waiter it already holds (after a connection it gave was dropped):
    // that one keeps its own deadline
    if (cb.comPrazo) return obter(cb);
    const ms = esperaMs();
    let desistiu = false;
    const prazo = setTimeout(() => {
      desistiu = true;
      // out of the line too: left there it would count against its limit (`fila`) after giving up
      tirarDaFila(nucleo._connectionQueue, aoObter);
      cb(Object.assign(new Error(`no connection of the pool ${nome} within ${ms} ms`), { code: SEM_CONEXAO_A_TEMPO }));
    }, ms);
    const aoObter: AoObterConexao = (err, conexao) => {
      if (desistiu) {
        conexao?.release();
        return;
      }
      clearTimeout(prazo);
      if (err && !err.code && err.message === 'Queue limit reached.') err.code = FILA_CHEIA;
      cb(err, conexao);
    };
    aoObter.comPrazo = true;
    return obter(aoObter);
  };
}

/**
 * The values of a prepared `IN (...)` list, their number rounded up to a power of two by repeating
 * the last: each length is a statement text of its own, prepared and kept on every connection of
 * the pool, and the server's prepared statements are limited (shared by every service). Rounded, a
 * list of up to 500 values needs at most ten texts. A repeated value changes nothing an IN matches.
 */
export function emPotenciaDeDois<T>(valores: T[]): T[] {
  let tamanho = 1;
  while (tamanho < valores.length) tamanho *= 2;
  return [...valores, ...Array<T>(tamanho - valores.length).fill(valores[valores.length - 1])];
}

export async function lerLinhas<T>(sequelize: { config: { database: string } }, sql: string, parametros: unknown[]): Promise<T[]> {
  const [linhas] = await poolRapido(sequelize).execute(sql, parametros as never[]);
  return linhas as T[];
}

/**
 * Statements whose text varies with the request (a filter set, a page's LIMIT): sent as text with
 * values escaped by mysql2, since each distinct text would otherwise stay prepared on the server,
 * and the server-wide cap of prepared statements is shared by every service.
 */
export async function lerPorTexto<T>(sequelize: { config: { database: string } }, sql: string, parametros: unknown[]): Promise<T[]> {
  const [linhas] = await poolRapido(sequelize).query(sql, parametros);
  return linhas as T[];
}

/**
 * As `lerPorTexto`, for statements that may run for seconds (a listing's page, a count): on a pool
 * of their own, so a burst of them never holds every connection the lookups by id are waiting for.
 * With `prazoS`, a SELECT the database itself stops after that many seconds (see `tempoEsgotado`).
 */
export async function lerDemorado<T>(sequelize: { config: { database: string } }, sql: string, parametros: unknown[], prazoS?: number): Promise<T[]> {
  const comando = prazoS === undefined ? sql : await comPrazo(sequelize, sql, prazoS);
  const [linhas] = await poolRapido(sequelize, 'demorado').query(comando, parametros);
  return linhas as T[];
}

/**
 * Statement timeouts: MariaDB (max_statement_time) and MySQL (MAX_EXECUTION_TIME). MariaDB's limit
 * stopping InnoDB inside a full-text search comes back as error 188 instead, its storage engine's
 * "aborted by user" (the statement interrupted there; mysql2 names the code by MySQL's meaning).
 */
const TEMPO_ESGOTADO = new Set([1969, 3024, 188]);
export const tempoEsgotado = (err: unknown) => TEMPO_ESGOTADO.has((err as { errno?: number }).errno ?? 0);

const servidoresMariaDb = new CacheComPrazo<string, Promise<boolean>>(() => Infinity);

/** MariaDB and MySQL write a few things differently; asked once per database (again after a failure). */
export function ehMariaDb(sequelize: { config: { database: string } }): Promise<boolean> {
  return servidoresMariaDb.compartilhar(sequelize.config.database, () =>
    lerLinhas<{ v: string }>(sequelize, 'SELECT VERSION() AS v', []).then(([l]) => /mariadb/i.test(l.v)),
  );
}

/** A SELECT the database itself stops after `segundos` (see `tempoEsgotado`). */
async function comPrazo(sequelize: { config: { database: string } }, select: string, segundos: number): Promise<string> {
  return (await ehMariaDb(sequelize))
    ? `SET STATEMENT max_statement_time = ${segundos} FOR ${select}`
    : select.replace(/^\s*SELECT\b/i, `SELECT /*+ MAX_EXECUTION_TIME(${segundos * 1000}) */`);
}

/**
 * The database's clock, in UTC (the connections' zone): one for every process of a service,
 * whatever each one's own says. A time one process writes and another compares with its "now"
 * (a sweep's "older than") is written and compared on it.
 */
export const AGORA_NO_BANCO = 'UTC_TIMESTAMP(3)';

/** A Date as DATETIME(3) text in UTC (the connections' zone), milliseconds kept. */
export const dataSql = (d: Date) => d.toISOString().slice(0, 23).replace('T', ' ');

/**
 * `(CASE id WHEN ? THEN ? ... END)`: each row's own value in one multi-row UPDATE by primary key,
 * with its parameters in the order they appear. `tipo` casts each value (`DATETIME(3)`, say);
 * `coluna` names the key where a bare `id` would be another table's (inside a subquery).
 */
export function valorPorId<T>(linhas: readonly T[], id: (l: T) => string, valor: (l: T) => unknown, tipo?: string, coluna = 'id') {
  const entao = tipo ? `CAST(? AS ${tipo})` : '?';
  return {
    sql: `(CASE ${coluna} ${linhas.map(() => `WHEN ? THEN ${entao}`).join(' ')} END)`,
    parametros: linhas.flatMap((l) => [id(l), valor(l)]),
  };
}

/** A duplicate key, as mysql2 reports it. */
export const chaveDuplicada = (err: unknown) => (err as { code?: string })?.code === 'ER_DUP_ENTRY';

/** A connection of the fast pool inside one transaction. */
export type ConexaoEmTransacao = PoolConnection;

/**
 * Runs `trabalho` in one transaction on a connection of the fast pool: committed when it
 * resolves, rolled back when it throws. READ COMMITTED when asked: inserts that check a unique key
 * then take no gap locks, so concurrent writers of different rows do not deadlock each other.
 */
export async function emTransacao<T>(
  sequelize: { config: { database: string } },
  trabalho: (conexao: ConexaoEmTransacao) => Promise<T>,
  opcoes: { leituraConfirmada?: boolean } = {},
): Promise<T> {
  const conexao = await poolRapido(sequelize).getConnection();
  try {
    if (opcoes.leituraConfirmada) await conexao.query('SET TRANSACTION ISOLATION LEVEL READ COMMITTED');
    await conexao.beginTransaction();
    const resultado = await trabalho(conexao);
    await conexao.commit();
    conexao.release();
    return resultado;
  } catch (err) {
    await desfazer(conexao);
    throw err;
  }
}

/** What one statement answers: its rows for a SELECT, the rows it changed otherwise. */
export type RespostaDoComando = { affectedRows: number } | Record<string, unknown>[];

/**
 * A transaction whose statements travel to the server together. A statement whose answer can wait
 * (`depois`) joins the next message; `consultar` sends what waits and its own statement as one
 * message and answers its rows; the commit goes with the last statements. Each write to the
 * socket costs the caller's process more CPU than the server spends on a small statement, so a
 * transaction costs as many round trips as it has reads, plus one. The answer of a `depois` comes
 * once its message is sent: awaiting it before the next `consultar`, or before the work returns,
 * would wait for ever.
 *
 * Each statement is formatted alone (its values escaped by mysql2, its `?` count checked), so a
 * value can never slip into the next statement. The server stops at the first statement of a
 * message that fails: that message's caller gets the error (and so does each statement left
 * waiting), and the transaction is rolled back.
 */
export class TransacaoAgrupada {
  private esperando: { sql: string; responder: (r: RespostaDoComando) => void; falhar: (e: unknown) => void }[] = [];

  constructor(private readonly conexao: PoolConnection) {}

  /** A statement sent with the next message; its answer, once that message has run. */
  depois(sql: string, parametros: unknown[] = []): Promise<RespostaDoComando> {
    const marcas = sql.split('?').length - 1;
    if (marcas !== parametros.length) throw new Error(`statement with ${marcas} placeholders and ${parametros.length} values`);
    const formatado = this.conexao.format(sql.trim().replace(/;+$/, ''), parametros as never[]);
    const resposta = new Promise<RespostaDoComando>((responder, falhar) => this.esperando.push({ sql: formatado, responder, falhar }));
    // whoever needs the answer awaits it; an error also reaches the caller of the message's send
    resposta.catch(() => undefined);
    return resposta;
  }

  /** Sends what waits and this statement; answers this statement's rows. */
  async consultar<T>(sql: string, parametros: unknown[] = []): Promise<T[]> {
    const linhas = this.depois(sql, parametros);
    await this.enviar();
    return (await linhas) as unknown as T[];
  }

  /** Sends what waits, as one message. */
  async enviar(): Promise<void> {
    const lote = this.esperando.splice(0);
    if (!lote.length) return;
    try {
      const [respostas] = await this.conexao.query(lote.map((c) => c.sql).join(';\n'));
      // one statement answers its result alone; several, an array of results
      const porComando = (lote.length === 1 ? [respostas] : respostas) as RespostaDoComando[];
      lote.forEach((c, i) => c.responder(porComando[i]));
    } catch (err) {
      for (const c of lote) c.falhar(err);
      throw err;
    }
  }

  /** Statements that will never be sent (the work failed): their answers fail too. */
  descartar(motivo: unknown): void {
    for (const c of this.esperando.splice(0)) c.falhar(motivo);
  }
}

/** The server's error code (`ER_LOCK_DEADLOCK`) of mysql2's error, or of Sequelize's wrapping it (`parent`). */
export const codigoDoBanco = (err: unknown): string | undefined => {
  const e = err as { code?: string; parent?: { code?: string } } | undefined;
  return e?.code ?? e?.parent?.code;
};

/** A lock the statement waited for past the server's limit (innodb_lock_wait_timeout, lock_wait_timeout). */
export const esperaPorTravaEsgotada = (err: unknown) => codigoDoBanco(err) === 'ER_LOCK_WAIT_TIMEOUT';

/** A transaction the server rolled back for a deadlock (repetirEmConflito runs it again). */
export const impasseDeTravas = (err: unknown) => codigoDoBanco(err) === 'ER_LOCK_DEADLOCK';

/** Sequelize's errors of a connection it could not make or get from its pool. */
const CONEXAO_DO_SEQUELIZE = new Set([
  'SequelizeConnectionError',
  'SequelizeConnectionRefusedError',
  'SequelizeConnectionAcquireTimeoutError',
  'SequelizeConnectionTimedOutError',
  'SequelizeHostNotFoundError',
  'SequelizeHostNotReachableError',
]);

/**
 * A statement another connection stopped (KILL QUERY: the CNPJ import's swap stopping reads that
 * hold it up), wrapped by Sequelize or not: a failure of the moment, like a busy database.
 */
const consultaInterrompida = (err: unknown): boolean => {
  const e = err as { errno?: number; parent?: unknown } | undefined;
  return e?.errno === 1317 || (!!e?.parent && consultaInterrompida(e.parent));
};

/**
 * The database out of reach or too busy to answer for now (no connection, a lock waited for past
 * its limit, a statement stopped): a failure of the moment, not of what was asked (a request
 * answers 503; an attachment's copy is put off without spending an attempt).
 */
export const bancoIndisponivel = (err: unknown): boolean =>
  CONEXAO_DO_SEQUELIZE.has((err as Error)?.name ?? '') || bancoForaDoAlcance(err) || consultaInterrompida(err) || esperaPorTravaEsgotada(err);

/**
 * Runs a whole transaction (`trabalho`) again when the database rolled it back for a deadlock: two
 * writers of the same rows in different orders, where one of them has to lose. Again after a short
 * random pause, up to 3 more times; any other error at once (a lock wait that timed out has
 * already waited the server's limit, 50 s by default: its caller is told).
 */
export async function repetirEmConflito<T>(descricao: string, trabalho: () => Promise<T>): Promise<T> {
  for (let tentativa = 1; ; tentativa++) {
    try {
      return await trabalho();
    } catch (err) {
      if (tentativa > 3 || !impasseDeTravas(err)) throw err;
      logger('database').warn({ erro: (err as Error).message, tentativa, trabalho: descricao }, 'transação repetida após conflito de travas');
      await new Promise((r) => setTimeout(r, Math.random() * 20 * tentativa));
    }
  }
}

/** Rolls back; a connection that cannot even do that is closed instead of going back to the pool. */
async function desfazer(conexao: PoolConnection): Promise<void> {
  try {
    await conexao.query('ROLLBACK');
    conexao.release();
  } catch {
    conexao.destroy();
  }
}

/**
 * Runs `trabalho` in one transaction whose statements travel together (TransacaoAgrupada), on a
 * pool of its own whose connections take several statements in one message: values are always
 * escaped by mysql2, and no other query runs there. Committed when `trabalho` resolves, with the
 * statements still waiting; rolled back when anything fails. READ COMMITTED when asked, as in
 * `emTransacao`.
 */
export async function emTransacaoAgrupada<T>(
  sequelize: { config: { database: string } },
  trabalho: (transacao: TransacaoAgrupada) => Promise<T>,
  opcoes: { leituraConfirmada?: boolean } = {},
): Promise<T> {
  const conexao = await poolRapido(sequelize, 'lotes').getConnection();
  const transacao = new TransacaoAgrupada(conexao);
  try {
    if (opcoes.leituraConfirmada) void transacao.depois('SET TRANSACTION ISOLATION LEVEL READ COMMITTED');
    void transacao.depois('START TRANSACTION');
    const resultado = await trabalho(transacao);
    void transacao.depois('COMMIT');
    await transacao.enviar();
    conexao.release();
    return resultado;
  } catch (err) {
    transacao.descartar(err);
    await desfazer(conexao);
    throw err;
  }
}

/**
 * Statements in one transaction, sent with its commit as one message (one round trip); answers
 * the rows each one changed. `VALUES ?` takes an array of rows (a multi-row insert).
 */
export async function escreverJuntos(
  sequelize: { config: { database: string } },
  comandos: [sql: string, parametros: unknown[]][],
  opcoes: { leituraConfirmada?: boolean } = {},
): Promise<number[]> {
  const respostas = await emTransacaoAgrupada(sequelize, async (t) => comandos.map(([sql, parametros]) => t.depois(sql, parametros)), opcoes);
  return (await Promise.all(respostas)).map((r) => (r as { affectedRows: number }).affectedRows);
}
