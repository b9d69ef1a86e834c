import http from 'node:http';
import net, { AddressInfo } from 'node:net';
import { decodeJwt } from 'jose';
import { Connection, createConnection } from 'mysql2/promise';
import { Sequelize } from 'sequelize-typescript';
import { config, resetConfig } from '../../config';
import { criarApp } from '../../api/shared/app';
import { Rota } from '../../api/shared/rotas';
import {
  abrirBanco,
  apagarBanco,
  banco,
  bancoForaDoAlcance,
  criarBanco,
  emTransacao,
  emTransacaoAgrupada,
  escreverJuntos,
  LIMITES_DOS_POOLS,
  lerDemorado,
  lerLinhas,
  lerPorTexto,
  nomeDoBanco,
  novaConexao,
  servidorDaUrl,
} from '../../lib/database';
import { encerrar } from '../../lib/lifecycle';
import { dormir, esperarAte } from '../helpers/espera';
import { cliente, esperarProblema } from '../helpers/http';
import { identityDe } from '../helpers/identity';
import { iniciarSuite, SuiteDeTeste } from '../helpers/suite';

/**
 * The database pools' limits (lib/database.ts LIMITES_DOS_POOLS): a statement waits a bounded time
 * for a connection, a full line fails at once, a server that refuses one more connection is the
 * database out of reach (503), and idle connections are closed. The limits are lowered here so
 * the file runs in seconds: pools of 2, a wait of 400 ms (600 on the slow statements' pool), 3
 * waiting at most, idle for 500 ms.
 */
const ORIGINAIS = { ...LIMITES_DOS_POOLS };
const MYSQL_URL = config().mysqlUrl;

/**
 * Connections of this file's database on the server, the probe's own left out. One probe for the
 * file: a probe ended is still listed a moment (mysql2 answers `end()` before the server has
 * read the quit), and would count as the pool's.
 */
let sonda: Connection | undefined;
async function conexoesNoBanco(): Promise<number> {
  sonda ??= await novaConexao('intranet');
  const [[{ n }]] = (await sonda.query('SELECT COUNT(*) AS n FROM information_schema.PROCESSLIST WHERE DB = DATABASE() AND ID <> CONNECTION_ID()')) as unknown as [[{ n: number }]];
  return Number(n);
}
afterAll(() => sonda?.end());

/** Until `quantas` statements of the database sleep (the pools' connections are taken). */
async function dormindo(database: string, quantas: number): Promise<void> {
  const c = await createConnection(servidorDaUrl(MYSQL_URL));
  try {
    await esperarAte(async () => {
      const [[{ n }]] = (await c.query("SELECT COUNT(*) AS n FROM information_schema.PROCESSLIST WHERE DB = ? AND INFO LIKE '%SLEEP(%' AND ID <> CONNECTION_ID()", [
        database,
      ])) as unknown as [[{ n: number }]];
      return Number(n) >= quantas;
    }, `${quantas} statements sleeping`);
  } finally {
    await c.end();
  }
}

/** Runs `fazer` while `lentas` hold connections, and waits for them to end whatever it does, so the next test finds the pools free. */
async function enquanto<T>(lentas: Promise<unknown>[], fazer: () => Promise<T>): Promise<T> {
  try {
    return await fazer();
  } finally {
    await Promise.allSettled(lentas);
  }
}

/** How a promise ended, and after how many ms. */
async function desfecho(p: Promise<unknown>): Promise<{ erro?: { code?: string }; ms: number }> {
  const inicio = Date.now();
  try {
    await p;
    return { ms: Date.now() - inicio };
  } catch (erro) {
    return { erro: erro as { code?: string }, ms: Date.now() - inicio };
  }
}

describe('pools of a service database', () => {
  let sequelize: Sequelize;
  const alvo = { config: { database: '' } };
  /** servers started by a test, closed after the pools that use them */
  const servidores: net.Server[] = [];
  const sockets = new Set<net.Socket>();
  let usuarioCriado = false;

  /** A test app whose route reads through the quick pool of `alvoDaRota` (as a service's lookup by id). */
  let alvoDaRota = alvo;
  const rotas: Rota[] = [
    {
      metodo: 'get',
      caminho: '/leitura',
      operacao: 'leitura',
      resumo: 'a read by the quick pool',
      acesso: 'publico',
      tratar: () => lerLinhas(alvoDaRota, 'SELECT 1 AS um', []),
    },
  ];
  let api: ReturnType<typeof cliente>;
  let servidorHttp: http.Server;

  beforeAll(async () => {
    process.env.DB_CONEXOES_POR_POOL = '2';
    resetConfig();
    Object.assign(LIMITES_DOS_POOLS, { esperaMs: 400, esperaDemoradoMs: 600, fila: 3, ociosaMs: 500 });
    sequelize = await abrirBanco('intranet', []);
    alvo.config.database = sequelize.config.database!;
    const app = criarApp({
      nome: 'teste',
      info: { title: 'teste', version: '0' },
      rotas,
      autenticar: async () => {
        throw new Error('no token here');
      },
      pronto: async () => undefined,
    });
    servidorHttp = app.listen(0, '127.0.0.1');
    await new Promise((r) => servidorHttp.once('listening', r));
    api = cliente(`http://127.0.0.1:${(servidorHttp.address() as AddressInfo).port}`);
  });

  afterAll(async () => {
    await encerrar();
    for (const s of sockets) s.destroy();
    await Promise.all(servidores.map((s) => new Promise((r) => s.close(r))));
    await new Promise((r) => servidorHttp.close(r));
    if (usuarioCriado) {
      const c = await createConnection(servidorDaUrl(MYSQL_URL));
      await c.query("DROP USER IF EXISTS ?@'%'", [`${config().dbPrefix}_limite`]);
      await c.end();
    }
    await apagarBanco('intranet');
    await apagarBanco('files');
    await apagarBanco('tracing');
    Object.assign(LIMITES_DOS_POOLS, ORIGINAIS);
    delete process.env.DB_CONEXOES_POR_POOL;
    resetConfig();
  });

  /** Pools made while MYSQL_URL is `url` (a pool reads the server when it is made). */
  async function comServidor<T>(url: string, fazer: () => Promise<T>): Promise<T> {
    process.env.MYSQL_URL = url;
    resetConfig();
    try {
      return await fazer();
    } finally {
      process.env.MYSQL_URL = MYSQL_URL;
      resetConfig();
    }
  }

  test('a pool held by slow statements: the next quick statement fails within the wait, as the database out of reach, on every pool and way in', async () => {
    const lentas = [
      ...[0, 1].map(() => lerPorTexto(alvo, 'SELECT SLEEP(2.5)', [])),
      ...[0, 1].map(() => lerDemorado(alvo, 'SELECT SLEEP(2.5)', [])),
      ...[0, 1].map(() => emTransacaoAgrupada(alvo, (t) => t.consultar('SELECT SLEEP(2.5)'))),
    ];
    const [lida, porTexto, transacao, agrupada, demorada] = await enquanto(lentas, async () => {
      await dormindo(alvo.config.database, 6);
      return Promise.all([
        desfecho(lerLinhas(alvo, 'SELECT 1', [])),
        desfecho(lerPorTexto(alvo, 'SELECT 1', [])),
        desfecho(emTransacao(alvo, async () => 1)),
        desfecho(escreverJuntos(alvo, [['DO 1', []]])),
        desfecho(lerDemorado(alvo, 'SELECT 1', [])),
      ]);
    });
    for (const r of [lida, porTexto, transacao, agrupada]) {
      expect(r.erro).toMatchObject({ code: 'POOL_ESPERA_ESGOTADA' });
      expect(r.ms).toBeGreaterThanOrEqual(380);
      expect(r.ms).toBeLessThan(1200);
    }
    // the slow statements' pool waits longer: its statements hold a connection for seconds
    expect(demorada.erro).toMatchObject({ code: 'POOL_ESPERA_ESGOTADA' });
    expect(demorada.ms).toBeGreaterThanOrEqual(580);
    expect(demorada.ms).toBeLessThan(1400);
    expect(bancoForaDoAlcance(lida.erro)).toBe(true);
  });

  test('a route whose read finds no connection in time answers 503 problem+json, without internals', async () => {
    const lentas = [0, 1].map(() => lerPorTexto(alvo, 'SELECT SLEEP(1.5)', []));
    const { res, ms } = await enquanto(lentas, async () => {
      await dormindo(alvo.config.database, 2);
      const inicio = Date.now();
      return { res: await api.get('/leitura', { headers: { 'x-request-id': 'req-sem-conexao' } }), ms: Date.now() - inicio };
    });
    expect(ms).toBeLessThan(1200);
    expect(esperarProblema(res, 503)).toMatchObject({ code: 'indisponivel', request_id: 'req-sem-conexao' });
    // neither the pool's message nor the database's name
    expect(res.text).not.toMatch(/POOL_|no connection|within/);
    expect(res.text).not.toContain(alvo.config.database);
    // and once they end, the same route reads again
    expect((await api.get('/leitura')).status).toBe(200);
  });

  test('a connection that comes after its waiter gave up goes back to the pool: every connection serves again', async () => {
    // long enough to outlast, however slow the machine, the look for them and the waiter's 400 ms
    const lentas = [0, 1].map(() => lerPorTexto(alvo, 'SELECT SLEEP(3)', []));
    const desistente = await enquanto(lentas, async () => {
      await dormindo(alvo.config.database, 2);
      return desfecho(lerLinhas(alvo, 'SELECT 1', []));
    });
    expect(desistente.erro).toMatchObject({ code: 'POOL_ESPERA_ESGOTADA' });
    // the first connection freed went to the waiter that gave up, which handed it back
    // both connections at once, each longer than the wait: one kept by that waiter would leave
    // the second statement waiting past it, and failing
    const duas = [0, 1].map(() => desfecho(lerPorTexto(alvo, 'SELECT SLEEP(2)', [])));
    // side by side, on a connection each
    await dormindo(alvo.config.database, 2);
    const [a, b] = await Promise.all(duas);
    expect([a.erro, b.erro]).toEqual([undefined, undefined]);
  });

  test('a server slow to take a connection: the wait is bounded too, and the connection made late serves the next statement', async () => {
    const real = new URL(MYSQL_URL);
    // a "server" that takes every connection a second late, through a proxy to the real one
    let aceitas = 0;
    const proxy = net.createServer((c) => {
      aceitas++;
      sockets.add(c);
      c.pause();
      setTimeout(() => {
        const s = net.connect(Number(real.port || 3306), real.hostname);
        sockets.add(s);
        c.pipe(s).pipe(c);
        c.resume();
        c.on('error', () => s.destroy());
        s.on('error', () => c.destroy());
      }, 1000);
    });
    servidores.push(proxy);
    await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
    await criarBanco('tracing');
    const lento = { config: { database: nomeDoBanco('tracing') } };
    const url = new URL(MYSQL_URL);
    url.host = `127.0.0.1:${(proxy.address() as AddressInfo).port}`;
    // kept while idle for longer than this test takes, however slow the machine: the pool's idle
    // check closing it would make the second statement open a connection of its own
    LIMITES_DOS_POOLS.ociosaMs = 30_000;
    try {
      const primeira = await comServidor(url.toString(), () => desfecho(lerLinhas(lento, 'SELECT 1', [])));
      expect(primeira.erro).toMatchObject({ code: 'POOL_ESPERA_ESGOTADA' });
      expect(primeira.ms).toBeLessThan(900);
      // the connection it asked for is made about a second after it was asked for, and kept
      await esperarAte(
        async () => Number((await lerLinhas<{ n: string }>(alvo, 'SELECT COUNT(*) AS n FROM information_schema.PROCESSLIST WHERE DB = ?', [lento.config.database]))[0].n) > 0,
        'the late connection made',
      );
      // the server shows it once it has answered the handshake; the pool holds it a moment later
      await dormir(200);
      // through the connection already made: a new one would take the proxy's second, past the wait
      const segunda = await desfecho(lerLinhas(lento, 'SELECT 2 AS n', []));
      expect(segunda).toEqual({ ms: expect.any(Number) });
      expect(aceitas).toBe(1);
    } finally {
      LIMITES_DOS_POOLS.ociosaMs = 500;
    }
  });

  test("a full line fails at once with the pool's own error, as the database out of reach", async () => {
    // long enough to outlast, however slow the machine, the look for them and the waiters' 400 ms
    const lentas = [0, 1].map(() => lerPorTexto(alvo, 'SELECT SLEEP(3)', []));
    const { naFila, alemDaFila } = await enquanto(lentas, async () => {
      await dormindo(alvo.config.database, 2);
      const naFila = [0, 1, 2].map(() => desfecho(lerLinhas(alvo, 'SELECT 1', [])));
      return { alemDaFila: await desfecho(lerLinhas(alvo, 'SELECT 1', [])), naFila: await Promise.all(naFila) };
    });
    // at once: a statement that waited would have ended with POOL_ESPERA_ESGOTADA instead
    expect(alemDaFila.erro).toMatchObject({ code: 'POOL_FILA_CHEIA' });
    expect(bancoForaDoAlcance(alemDaFila.erro)).toBe(true);
    for (const r of naFila) expect(r.erro).toMatchObject({ code: 'POOL_ESPERA_ESGOTADA' });
    expect(await lerLinhas(alvo, 'SELECT 1 AS um', [])).toEqual([{ um: 1 }]);
  });

  test('waiters that gave up leave the line: a newcomer is not refused as if they still waited', async () => {
    // long enough that the newcomer comes while both connections are still taken, however slow the machine
    const lentas = [0, 1].map(() => lerPorTexto(alvo, 'SELECT SLEEP(3)', []));
    const { desistentes, recemChegado } = await enquanto(lentas, async () => {
      await dormindo(alvo.config.database, 2);
      // as many as the line holds, each giving up at the wait (400 ms here)
      const desistentes = await Promise.all([0, 1, 2].map(() => desfecho(lerLinhas(alvo, 'SELECT 1', []))));
      return { desistentes, recemChegado: await desfecho(lerLinhas(alvo, 'SELECT 1', [])) };
    });
    for (const r of desistentes) expect(r.erro).toMatchObject({ code: 'POOL_ESPERA_ESGOTADA' });
    // alone in the line: it waits for a connection (and gets one when the sleeps end), not refused at once
    expect(recemChegado.erro?.code).not.toBe('POOL_FILA_CHEIA');
    expect(recemChegado.ms).toBeGreaterThan(100);
  });

  test("Sequelize's pool keeps the same limits: as many connections, and the same bounded wait", async () => {
    const lentas = [0, 1].map(() => sequelize.query('SELECT SLEEP(1.5)'));
    const r = await enquanto(lentas, async () => {
      await dormindo(alvo.config.database, 2);
      return desfecho(sequelize.query('SELECT 1'));
    });
    expect(r.erro).toMatchObject({ name: 'SequelizeConnectionAcquireTimeoutError' });
    expect(r.ms).toBeGreaterThanOrEqual(380);
    expect(r.ms).toBeLessThan(1200);
  });

  test("a server that refuses one more connection (its max_connections, a user's limit) is the database out of reach: 503, never 500", async () => {
    // max_connections is the whole server's, shared by every test file: a "server" that answers as
    // a full one does, with an error packet in place of its greeting
    const cheio = net.createServer((c) => {
      const mensagem = Buffer.from('Too many connections');
      const corpo = Buffer.concat([Buffer.from([0xff, 1040 & 0xff, 1040 >> 8]), mensagem]);
      c.end(Buffer.concat([Buffer.from([corpo.length, 0, 0, 0]), corpo]));
    });
    servidores.push(cheio);
    await new Promise<void>((r) => cheio.listen(0, '127.0.0.1', r));
    const url = new URL(MYSQL_URL);
    url.host = `127.0.0.1:${(cheio.address() as AddressInfo).port}`;
    const noCheio = { config: { database: nomeDoBanco('leads') } };
    const recusa = await comServidor(url.toString(), () => desfecho(lerLinhas(noCheio, 'SELECT 1', [])));
    expect(recusa.erro).toMatchObject({ code: 'ER_CON_COUNT_ERROR' });
    expect(bancoForaDoAlcance(recusa.erro)).toBe(true);
    alvoDaRota = noCheio;
    esperarProblema(await api.get('/leitura'), 503);

    // a user's own limit, for real: an account of one connection at a time
    const usuario = `${config().dbPrefix}_limite`;
    await criarBanco('files');
    const raiz = await createConnection(servidorDaUrl(MYSQL_URL));
    try {
      await raiz.query("CREATE USER ?@'%' WITH MAX_USER_CONNECTIONS 1", [usuario]);
      usuarioCriado = true;
      await raiz.query(`GRANT ALL ON \`${nomeDoBanco('files')}\`.* TO ?@'%'`, [usuario]);
    } finally {
      await raiz.end();
    }
    const comLimite = new URL(MYSQL_URL);
    comLimite.username = usuario;
    comLimite.password = '';
    const doUsuario = { config: { database: nomeDoBanco('files') } };
    // its one connection held by a slow statement, the pool's second is refused
    const { lenta } = await comServidor(comLimite.toString(), async () => ({ lenta: lerPorTexto(doUsuario, 'SELECT SLEEP(1)', []) }));
    const { segunda, res } = await enquanto([lenta], async () => {
      await dormindo(doUsuario.config.database, 1);
      const segunda = await desfecho(lerLinhas(doUsuario, 'SELECT 1', []));
      alvoDaRota = doUsuario;
      return { segunda, res: await api.get('/leitura') };
    });
    alvoDaRota = alvo;
    expect(segunda.erro).toMatchObject({ code: 'ER_USER_LIMIT_REACHED' });
    expect(bancoForaDoAlcance(segunda.erro)).toBe(true);
    esperarProblema(res, 503);
  });

  test("idle connections are closed past the idle time, mysql2's and Sequelize's, and the next statement opens one again", async () => {
    // every pool at its limit at once
    await Promise.all([
      ...[0, 1].map(() => lerPorTexto(alvo, 'SELECT SLEEP(0.2)', [])),
      ...[0, 1].map(() => lerDemorado(alvo, 'SELECT SLEEP(0.2)', [])),
      ...[0, 1].map(() => escreverJuntos(alvo, [['DO SLEEP(0.2)', []]])),
      ...[0, 1].map(() => sequelize.query('SELECT SLEEP(0.2)')),
    ]);
    expect(await conexoesNoBanco()).toBeGreaterThanOrEqual(4);
    // past 500 ms idle, at each pool's next look (every second)
    const inicio = Date.now();
    await esperarAte(async () => (await conexoesNoBanco()) === 0, 'the idle connections closed', 4000);
    expect(Date.now() - inicio).toBeLessThan(3000);
    expect(await lerLinhas(alvo, 'SELECT 1 AS um', [])).toEqual([{ um: 1 }]);
    expect(await conexoesNoBanco()).toBe(1);
  });
});

describe("a service's route on a pool held by slow statements", () => {
  let suite: SuiteDeTeste;
  let id: ReturnType<typeof identityDe>;
  let admin: string;

  beforeAll(async () => {
    suite = await iniciarSuite(['identity'], { workers: false, env: { DB_CONEXOES_POR_POOL: '2' } });
    id = identityDe(suite.url.identity);
    admin = await id.admin();
    LIMITES_DOS_POOLS.esperaMs = 500;
  });
  afterAll(async () => {
    Object.assign(LIMITES_DOS_POOLS, ORIGINAIS);
    await suite.encerrar();
    delete process.env.DB_CONEXOES_POR_POOL;
    resetConfig();
  });

  test('GET /usuario/{id} answers 503 within the wait instead of waiting for them, and 200 once they end', async () => {
    const caminho = `/usuario/${decodeJwt(admin).sub}`;
    expect((await id.api.get(caminho, { token: admin })).status).toBe(200);
    const identity = banco('identity').config.database!;
    const lentas = [0, 1].map(() => lerPorTexto(banco('identity'), 'SELECT SLEEP(2)', []));
    const { res, ms } = await enquanto(lentas, async () => {
      await dormindo(identity, 2);
      const inicio = Date.now();
      return { res: await id.api.get(caminho, { token: admin, headers: { 'x-request-id': 'req-usuario-sem-conexao' } }), ms: Date.now() - inicio };
    });
    expect(ms).toBeLessThan(1500);
    expect(esperarProblema(res, 503)).toMatchObject({ code: 'indisponivel', request_id: 'req-usuario-sem-conexao' });
    expect((await id.api.get(caminho, { token: admin })).status).toBe(200);
  });
});
