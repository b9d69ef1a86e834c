import net from 'node:net';
import { createConnection } from 'mysql2/promise';
import { existsSync } from 'node:fs';
import { QueryTypes } from 'sequelize';
import { config, ConfigError, resetConfig } from '../../config';
import * as database from '../../lib/database';
import { migrarTudo } from '../../lib/runner';
import {
  abrirBanco,
  apagarBanco,
  emTransacaoAgrupada,
  esperarBanco,
  escreverJuntos,
  lerDemorado,
  lerLinhas,
  lerPorTexto,
  novaConexao,
  RespostaDoComando,
  tempoEsgotado,
} from '../../lib/database';
import { encerrar } from '../../lib/lifecycle';
import { esperarAte } from '../helpers/espera';
import { portaLivre } from '../helpers/processo';

/**
 * escreverJuntos sends a whole transaction as one message: it must still be one transaction
 * (all or nothing), answer each statement's changed rows, and leave the connection clean for the
 * next caller. The other pools must keep refusing a second statement.
 */
describe('lib/database on a real database: escreverJuntos (one transaction in one round trip), emTransacaoAgrupada, sozinho, the pools', () => {
  const sequelize = { config: { database: '' } };

  beforeAll(async () => {
    const s = await abrirBanco('intranet', []);
    sequelize.config.database = s.config.database!;
    await s.query('CREATE TABLE nota (id INT PRIMARY KEY, texto VARCHAR(60) NOT NULL) ENGINE=InnoDB');
  });

  afterAll(async () => {
    await encerrar();
    await apagarBanco('intranet');
  });

  beforeEach(() => lerPorTexto(sequelize, 'DELETE FROM nota', []));

  const notas = () => lerLinhas<{ id: number; texto: string }>(sequelize, 'SELECT id, texto FROM nota ORDER BY id', []);

  test('every statement runs, with its own values, and answers its changed rows', async () => {
    const alteradas = await escreverJuntos(sequelize, [
      ['INSERT INTO nota (id, texto) VALUES ?', [[[1, 'um'], [2, "d'ois; DROP TABLE nota"], [3, 'três?']]]],
      ['UPDATE nota SET texto = ? WHERE id IN (?)', ['novo', [1, 3]]],
      ['DELETE FROM nota WHERE id = ?', [99]],
    ]);
    expect(alteradas).toEqual([3, 2, 0]);
    expect(await notas()).toEqual([
      { id: 1, texto: 'novo' },
      { id: 2, texto: "d'ois; DROP TABLE nota" },
      { id: 3, texto: 'novo' },
    ]);
  });

  test('a failing statement undoes the ones before it, and the connection serves the next caller', async () => {
    await escreverJuntos(sequelize, [['INSERT INTO nota (id, texto) VALUES ?', [[[1, 'um']]]]]);
    await expect(
      escreverJuntos(sequelize, [
        ['INSERT INTO nota (id, texto) VALUES ?', [[[2, 'dois']]]],
        ['INSERT INTO nota (id, texto) VALUES ?', [[[1, 'repetido']]]],
        ['INSERT INTO nota (id, texto) VALUES ?', [[[3, 'três']]]],
      ]),
    ).rejects.toMatchObject({ code: 'ER_DUP_ENTRY' });
    expect(await notas()).toEqual([{ id: 1, texto: 'um' }]);
    // at once, so every connection of the pool (5) serves, the one that failed among them: none may
    // come back inside a transaction
    await Promise.all(Array.from({ length: 6 }, (_, i) => escreverJuntos(sequelize, [['INSERT INTO nota (id, texto) VALUES ?', [[[10 + i, 'x']]]]])));
    expect((await notas()).map((n) => n.id)).toEqual([1, 10, 11, 12, 13, 14, 15]);
  });

  test('READ COMMITTED when asked: a later statement of the same transaction sees a row committed meanwhile', async () => {
    // each statement counts the rows; between the two counts another connection commits one
    const contarDuasVezes = (opcoes: { leituraConfirmada?: boolean }) =>
      escreverJuntos(
        sequelize,
        [
          ['INSERT INTO nota (id, texto) SELECT 100, COUNT(*) FROM nota', []],
          ['DO SLEEP(2)', []],
          ['INSERT INTO nota (id, texto) SELECT 101, COUNT(*) FROM nota', []],
        ],
        opcoes,
      );
    const comOutraEscrita = async (opcoes: { leituraConfirmada?: boolean }) => {
      await lerPorTexto(sequelize, 'DELETE FROM nota', []);
      const transacao = contarDuasVezes(opcoes);
      // the first count is done once the transaction sleeps between the two
      for (;;) {
        const [{ n }] = await lerPorTexto<{ n: number }>(sequelize, "SELECT COUNT(*) AS n FROM information_schema.PROCESSLIST WHERE INFO LIKE 'DO SLEEP(2)%'", []);
        if (Number(n) > 0) break;
        await new Promise((r) => setTimeout(r, 20));
      }
      await lerPorTexto(sequelize, "INSERT INTO nota (id, texto) VALUES (1, 'outra')", []);
      await transacao;
      return (await notas()).filter((n) => n.id >= 100).map((n) => n.texto);
    };
    // its own row, then its own row and the other's
    expect(await comOutraEscrita({ leituraConfirmada: true })).toEqual(['0', '2']);
    // the snapshot of the first read: its own row only (the other insert also waits for the commit,
    // on the locks REPEATABLE READ takes for INSERT ... SELECT)
    expect(await comOutraEscrita({})).toEqual(['0', '1']);
  });

  test('the other pools still refuse two statements in one message', async () => {
    await expect(lerPorTexto(sequelize, 'SELECT 1; SELECT 2', [])).rejects.toMatchObject({ code: 'ER_PARSE_ERROR' });
    await expect(lerDemorado(sequelize, 'SELECT 1; SELECT 2', [])).rejects.toMatchObject({ code: 'ER_PARSE_ERROR' });
  });

  test('a slow read given a time limit is stopped by the database itself, and read as a time-out', async () => {
    const inicio = Date.now();
    const erro = await lerDemorado(sequelize, 'SELECT SLEEP(3) AS s', [], 0.2).then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(tempoEsgotado(erro)).toBe(true);
    expect(Date.now() - inicio).toBeLessThan(2000);
    // without one it runs to its end
    expect(await lerDemorado(sequelize, 'SELECT SLEEP(0.3) AS s', [])).toEqual([{ s: 0 }]);
  });

  test('slow statements have a pool of their own: a burst of them does not keep a lookup by id waiting', async () => {
    const lentas = Array.from({ length: 12 }, () => lerDemorado(sequelize, 'SELECT SLEEP(3) AS s', []));
    await new Promise((r) => setTimeout(r, 100));
    const inicio = Date.now();
    expect(await lerLinhas(sequelize, 'SELECT ? AS n', [7])).toEqual([{ n: 7 }]);
    expect(await lerPorTexto(sequelize, 'SELECT 8 AS n', [])).toEqual([{ n: 8 }]);
    // not behind the slow ones (3 s)
    expect(Date.now() - inicio).toBeLessThan(2000);
    await Promise.all(lentas);
  });

  test('emTransacaoAgrupada: a read sees the writes waiting before it, and answers only its own rows', async () => {
    const respostas = await emTransacaoAgrupada(sequelize, async (t) => {
      const insercao = t.depois('INSERT INTO nota (id, texto) VALUES ?', [[[1, 'um'], [2, 'dois']]]);
      const lidas = await t.consultar<{ id: number }>('SELECT id FROM nota WHERE texto LIKE ? ORDER BY id', ['%']);
      const remocao = t.depois('DELETE FROM nota WHERE id = ?', [2]);
      return { insercao: await insercao, lidas, remocao };
    });
    expect(respostas.insercao).toMatchObject({ affectedRows: 2 });
    expect(respostas.lidas).toEqual([{ id: 1 }, { id: 2 }]);
    // sent with the commit
    expect(await respostas.remocao).toMatchObject({ affectedRows: 1 });
    expect(await notas()).toEqual([{ id: 1, texto: 'um' }]);
  });

  test('emTransacaoAgrupada: a failure after a message already ran undoes it too, and fails the statements waiting with it', async () => {
    let esperando: Promise<RespostaDoComando> | undefined;
    await expect(
      emTransacaoAgrupada(sequelize, async (t) => {
        void t.depois('INSERT INTO nota (id, texto) VALUES (?, ?)', [1, 'um']);
        await t.consultar('SELECT COUNT(*) AS n FROM nota', []);
        void t.depois('INSERT INTO nota (id, texto) VALUES (?, ?)', [1, 'repetido']);
        esperando = t.depois('INSERT INTO nota (id, texto) VALUES (?, ?)', [3, 'três']);
        await t.consultar('SELECT 1', []);
      }),
    ).rejects.toMatchObject({ code: 'ER_DUP_ENTRY' });
    await expect(esperando).rejects.toMatchObject({ code: 'ER_DUP_ENTRY' });
    expect(await notas()).toEqual([]);
  });

  test('emTransacaoAgrupada: an error thrown by the work itself rolls back what was sent', async () => {
    await expect(
      emTransacaoAgrupada(sequelize, async (t) => {
        await t.consultar('INSERT INTO nota (id, texto) VALUES (?, ?)', [1, 'um']);
        throw new Error('desistiu');
      }),
    ).rejects.toThrow('desistiu');
    expect(await notas()).toEqual([]);
  });

  test('emTransacaoAgrupada: a read sent alone answers its rows too, and a statement whose values do not match its placeholders is refused', async () => {
    const [primeira, segunda] = await emTransacaoAgrupada(sequelize, async (t) => {
      const a = await t.consultar<{ n: number }>('SELECT COUNT(*) AS n FROM nota', []);
      // nothing waits now: this message carries one statement
      const b = await t.consultar<{ um: number }>('SELECT 1 AS um;', []);
      return [a, b];
    });
    expect(primeira).toEqual([{ n: 0 }]);
    expect(segunda).toEqual([{ um: 1 }]);
    await expect(
      emTransacaoAgrupada(sequelize, async (t) => {
        void t.depois('INSERT INTO nota (id, texto) VALUES (?, ?)', [1, 'um']);
        void t.depois('INSERT INTO nota (id, texto) VALUES (?, ?)', [2]);
      }),
    ).rejects.toThrow('2 placeholders and 1 values');
    expect(await notas()).toEqual([]);
  });

  test('emTransacaoAgrupada: statements left waiting when the work fails get its error, not silence', async () => {
    let esperando: Promise<RespostaDoComando> | undefined;
    await expect(
      emTransacaoAgrupada(sequelize, async (t) => {
        esperando = t.depois('INSERT INTO nota (id, texto) VALUES (?, ?)', [1, 'um']);
        throw new Error('desistiu antes de enviar');
      }),
    ).rejects.toThrow('desistiu antes de enviar');
    await expect(esperando).rejects.toThrow('desistiu antes de enviar');
    expect(await notas()).toEqual([]);
  });

  test('sozinho: one holder at a time, and the next one right after a holder ends gets the lock', async () => {
    let segunda: string | null | undefined;
    const primeira = await database.sozinho('intranet', 'teste-trava', async () => {
      segunda = await database.sozinho('intranet', 'teste-trava', async () => 'rodou');
      return 'primeira';
    });
    expect([primeira, segunda]).toEqual(['primeira', null]);
    // one after another with no pause: each finds the lock free (the server frees a closed
    // connection's locks only some time after it goes)
    const seguidas: (number | null)[] = [];
    const livreLogoDepois: number[] = [];
    const trava = `${sequelize.config.database}_teste-trava`;
    for (let i = 0; i < 40; i++) {
      seguidas.push(await database.sozinho('intranet', 'teste-trava', async () => i));
      const [{ livre }] = await lerLinhas<{ livre: number }>(sequelize, 'SELECT IS_FREE_LOCK(?) AS livre', [trava]);
      livreLogoDepois.push(Number(livre));
    }
    expect(seguidas).toEqual([...Array(40).keys()]);
    expect(livreLogoDepois).toEqual(Array(40).fill(1));
  });

  test('sozinho: a wait for the lock that the server ends in error (its statement killed) fails, and is not taken for a lock held', async () => {
    const trava = `${sequelize.config.database}_teste-morta`;
    const dono = await novaConexao('intranet');
    try {
      await dono.query('SELECT GET_LOCK(?, 0)', [trava]);
      const espera = database.sozinho('intranet', 'teste-morta', async () => 'rodou', 20);
      espera.catch(() => undefined);
      const aEspera = async () => {
        const [linhas] = await dono.query('SELECT ID AS id FROM information_schema.PROCESSLIST WHERE INFO LIKE ?', [`SELECT GET_LOCK('${trava}', 20)%`]);
        return (linhas as { id: number }[])[0]?.id;
      };
      await dono.query(`KILL QUERY ${Number(await esperarAte(aEspera, 'the wait for the lock under way'))}`);
      const erro = await espera.catch((e: unknown) => e);
      expect(erro).toBeInstanceOf(Error);
      expect((erro as Error).message).toContain('the server stopped the wait');
      // a failure of the moment (a request answers 503), not a lock held
      expect(database.bancoIndisponivel(erro)).toBe(true);
    } finally {
      await dono.end();
    }
  });

  test('sozinho: a shutdown (its signal) ends the wait for a lock another holds at once, without running, and the lock stays with its holder', async () => {
    const trava = `${sequelize.config.database}_teste-encerramento`;
    const dono = await novaConexao('intranet');
    try {
      await dono.query('SELECT GET_LOCK(?, 0)', [trava]);
      const parada = new AbortController();
      let rodou = false;
      const inicio = Date.now();
      /** the waits for the lock the server still runs */
      const esperas = async () =>
        ((await dono.query('SELECT 1 FROM information_schema.PROCESSLIST WHERE INFO LIKE ?', [`SELECT GET_LOCK('${trava}', 30)%`]))[0] as unknown[]).length;
      const espera = database.sozinho('intranet', 'teste-encerramento', async () => (rodou = true), 30, parada.signal);
      await esperarAte(async () => (await esperas()) > 0, 'the wait for the lock under way');
      parada.abort();
      expect(await espera).toBeNull();
      expect(Date.now() - inicio).toBeLessThan(5_000);
      expect(rodou).toBe(false);
      const [[{ dele }]] = (await dono.query('SELECT IS_USED_LOCK(?) = CONNECTION_ID() AS dele', [trava])) as unknown as [[{ dele: number }]];
      expect(Number(dele)).toBe(1);
      // the waiter's connection is gone from the server, not left waiting out its 30 seconds
      await esperarAte(async () => (await esperas()) === 0, 'the wait gone from the server');
      // already stopped: not even asked
      expect(await database.sozinho('intranet', 'teste-encerramento', async () => (rodou = true), 30, parada.signal)).toBeNull();
      expect(rodou).toBe(false);
    } finally {
      await dono.end();
    }
  });

  test('MYSQL_URL with socketPath connects through the Unix socket of a server on this machine', async () => {
    const [{ socket }] = await lerLinhas<{ socket: string }>(sequelize, 'SELECT @@socket AS socket', []);
    if (!socket || !existsSync(socket)) {
      console.warn(`no Unix socket of the server on this machine (${socket}): the socketPath test checks nothing`);
      return;
    }
    const original = config().mysqlUrl;
    const usar = (socketPath: string | null) => {
      const u = new URL(original);
      if (socketPath) u.searchParams.set('socketPath', socketPath);
      else u.searchParams.delete('socketPath');
      process.env.MYSQL_URL = u.toString();
      resetConfig();
    };
    const ORIGEM = 'SELECT HOST AS origem FROM information_schema.PROCESSLIST WHERE ID = CONNECTION_ID()';
    const origem = async () => {
      const conexao = await novaConexao('intranet');
      try {
        const [[linha]] = (await conexao.query(ORIGEM)) as any;
        return linha.origem as string;
      } finally {
        await conexao.end();
      }
    };
    try {
      usar(null);
      expect(await origem()).toMatch(/:\d+$/); // TCP: address and port
      usar(socket);
      expect(await origem()).toBe('localhost'); // the socket has no port
      // and the models' connections (Sequelize) go the same way
      const modelos = await abrirBanco('tracing', []);
      const [linha] = await modelos.query(ORIGEM, { type: QueryTypes.SELECT });
      expect(linha).toEqual({ origem: 'localhost' });
    } finally {
      process.env.MYSQL_URL = original;
      resetConfig();
      await apagarBanco('tracing');
    }
  });
});

/** Values are escaped with backslashes: a server that reads them otherwise is refused before any use. */
describe('conferirModoSql', () => {
  test("a connection whose sql_mode holds NO_BACKSLASH_ESCAPES is refused with what to change; the server's usual modes pass", async () => {
    const conexao = await createConnection(database.servidorDaUrl(config().mysqlUrl));
    try {
      await expect(database.conferirModoSql(conexao)).resolves.toBeUndefined();
      await conexao.query("SET SESSION sql_mode = CONCAT(@@SESSION.sql_mode, ',NO_BACKSLASH_ESCAPES')");
      await expect(database.conferirModoSql(conexao)).rejects.toThrow(expect.objectContaining({ name: 'Error', message: expect.stringContaining('NO_BACKSLASH_ESCAPES') }));
      await expect(database.conferirModoSql(conexao)).rejects.toBeInstanceOf(ConfigError);
      // what the refusal prevents: the escaped quote no longer keeps the value inside its string
      const lido = await conexao.query("SELECT CONCAT('a', ?) AS texto", ["' , 'b"]).then(([linhas]) => (linhas as { texto: string }[])[0].texto, () => 'SQL quebrado');
      expect(lido).toBe('SQL quebrado');
    } finally {
      await conexao.end();
    }
  });
});

/** At start a server out of reach is waited for a bounded time; a refused login is not. */
describe('esperarBanco', () => {
  const original = config().mysqlUrl;
  const usar = (url: string) => {
    process.env.MYSQL_URL = url;
    resetConfig();
  };
  afterEach(() => usar(original));

  test('a server that comes up within the wait is waited for', async () => {
    const porta = await portaLivre();
    const { hostname, port } = new URL(original);
    usar(`mysql://root@127.0.0.1:${porta}`);
    // the server "restarts": its port answers 800 ms from now, through a proxy to the real one
    const proxy = net.createServer((c) => {
      const s = net.connect(Number(port || 3306), hostname);
      c.pipe(s).pipe(c);
      c.on('error', () => s.destroy());
      s.on('error', () => c.destroy());
    });
    const abre = setTimeout(() => proxy.listen(porta, '127.0.0.1'), 800);
    try {
      const inicio = Date.now();
      await esperarBanco(10_000);
      expect(Date.now() - inicio).toBeGreaterThanOrEqual(700);
    } finally {
      clearTimeout(abre);
      await new Promise((r) => proxy.close(r));
    }
  });

  test('one still out of reach at the end of the wait fails with the connection\'s error', async () => {
    usar(`mysql://root@127.0.0.1:${await portaLivre()}`);
    const inicio = Date.now();
    await expect(esperarBanco(600)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    expect(Date.now() - inicio).toBeGreaterThanOrEqual(600);
  });

  test('`suite migrate` waits for the server as a start does, before opening any service', async () => {
    const espera = jest.spyOn(database, 'esperarBanco').mockRejectedValueOnce(Object.assign(new Error('servidor ainda subindo'), { code: 'ECONNREFUSED' }));
    const abrir = jest.spyOn(database, 'abrirBanco');
    try {
      await expect(migrarTudo()).rejects.toThrow('servidor ainda subindo');
      expect({ esperas: espera.mock.calls.length, aberturas: abrir.mock.calls.length }).toEqual({ esperas: 1, aberturas: 0 });
    } finally {
      espera.mockRestore();
      abrir.mockRestore();
    }
  });

  test('a refused login stops at once', async () => {
    // a user that exists, with a wrong password: for one that does not, MariaDB answers with an
    // authentication plugin drawn at random (so as not to tell who exists), sometimes one the
    // client lacks, and the refusal then comes back under another code
    const usuario = `recusado_${process.pid}`;
    const admin = await createConnection(database.servidorDaUrl(original));
    try {
      await admin.query(`CREATE USER IF NOT EXISTS '${usuario}'@'%' IDENTIFIED BY 'certa'`);
      const u = new URL(original);
      u.username = usuario;
      u.password = 'errada';
      usar(u.toString());
      const inicio = Date.now();
      await expect(esperarBanco(10_000)).rejects.toMatchObject({ code: expect.stringMatching(/^ER_ACCESS_DENIED/) });
      expect(Date.now() - inicio).toBeLessThan(2000);
    } finally {
      await admin.query(`DROP USER IF EXISTS '${usuario}'@'%'`);
      await admin.end();
    }
  });
});
