import { Connection, createConnection } from 'mysql2/promise';
import { config } from '../../config';
import * as database from '../../lib/database';
import { encerrar } from '../../lib/lifecycle';
import { GravadorEmLotes, leituraPorIdEmLotes } from '../../lib/lotes';
import { portaLivre } from '../helpers/processo';

/** A writer that records each batch and answers when told to. */
function escritor() {
  const lotes: number[][] = [];
  const pendentes: (() => void)[] = [];
  const gravar = (lote: number[]) =>
    new Promise<string[]>((responder) => {
      lotes.push(lote);
      pendentes.push(() => responder(lote.map((n) => `ok ${n}`)));
    });
  const liberar = () => pendentes.splice(0).forEach((r) => r());
  return { lotes, gravar, liberar };
}

const proximaVolta = () => new Promise((r) => setImmediate(r));

describe('GravadorEmLotes', () => {
  it('writes requests that arrive in the same turn of the event loop as one batch, though another writer is free', async () => {
    const e = escritor();
    const g = new GravadorEmLotes(e.gravar, { maximo: 100, gravadores: 2 });
    const respostas = Promise.all([1, 2, 3].map((n) => g.guardar(n)));
    await proximaVolta();
    expect(e.lotes).toEqual([[1, 2, 3]]);
    e.liberar();
    await expect(respostas).resolves.toEqual(['ok 1', 'ok 2', 'ok 3']);
  });

  it('collects what arrives while its writers are busy into the next batch, within the cap', async () => {
    const e = escritor();
    const g = new GravadorEmLotes(e.gravar, { maximo: 2, gravadores: 1 });
    const primeira = g.guardar(1);
    await proximaVolta();
    const depois = [2, 3, 4].map((n) => g.guardar(n));
    await proximaVolta();
    expect(e.lotes).toEqual([[1]]);
    e.liberar();
    await primeira;
    await proximaVolta();
    expect(e.lotes).toEqual([[1], [2, 3]]);
    e.liberar();
    await proximaVolta();
    expect(e.lotes).toEqual([[1], [2, 3], [4]]);
    e.liberar();
    await expect(Promise.all(depois)).resolves.toEqual(['ok 2', 'ok 3', 'ok 4']);
  });

  it('cuts a batch by weight, and sends a request heavier than the cap alone', async () => {
    const e = escritor();
    const g = new GravadorEmLotes(e.gravar, { maximo: 100, gravadores: 1, peso: { de: (n: number) => n, maximo: 10 } });
    const respostas = Promise.all([4, 5, 2, 30, 1].map((n) => g.guardar(n)));
    for (let i = 0; i < 4; i++) {
      await proximaVolta();
      e.liberar();
    }
    await respostas;
    expect(e.lotes).toEqual([[4, 5], [2], [30], [1]]);
  });

  it('keeps a partition in one line of batches', async () => {
    const e = escritor();
    const g = new GravadorEmLotes(e.gravar, { maximo: 100, gravadores: 3, particao: (n: number) => String(n % 2) });
    const respostas = Promise.all([1, 2, 3, 4, 5].map((n) => g.guardar(n)));
    await proximaVolta();
    expect(e.lotes.map((l) => [...l].sort()).sort()).toEqual([
      [1, 3, 5],
      [2, 4],
    ]);
    e.liberar();
    await respostas;
  });

  it('after a failed batch, writes each request alone: only the bad one fails', async () => {
    const lotes: number[][] = [];
    const g = new GravadorEmLotes(
      async (lote: number[]) => {
        lotes.push(lote);
        if (lote.includes(2)) throw new Error('recusado');
        return lote.map((n) => n * 10);
      },
      { maximo: 100, gravadores: 1 },
    );
    const respostas = await Promise.allSettled([1, 2, 3].map((n) => g.guardar(n)));
    expect(lotes).toEqual([[1, 2, 3], [1], [2], [3]]);
    expect(respostas.map((r) => (r.status === 'fulfilled' ? r.value : (r.reason as Error).message))).toEqual([10, 'recusado', 30]);
  });

  it('after a failed batch, a partition whose request alone waited past the lock limit fails its others at once, not each after another wait; other partitions are written', async () => {
    const lotes: number[][] = [];
    // partition 'a' (odd numbers) behind a row another transaction holds: each statement waits, each fails
    const esperaEsgotada = () => Object.assign(new Error('Lock wait timeout exceeded; try restarting transaction'), { code: 'ER_LOCK_WAIT_TIMEOUT' });
    const g = new GravadorEmLotes(
      async (lote: number[]) => {
        lotes.push(lote);
        if (lote.some((n) => n % 2)) throw esperaEsgotada();
        return lote.map((n) => n * 10);
      },
      { maximo: 100, gravadores: 1, particao: (n: number) => (n % 2 ? 'a' : 'b') },
    );
    const [impares, pares] = await Promise.all([
      Promise.allSettled([1, 3, 5].map((n) => g.guardar(n))),
      Promise.allSettled([2, 4].map((n) => g.guardar(n))),
    ]);
    expect(impares.map((r) => (r.status === 'rejected' ? (r.reason as { code: string }).code : r.value))).toEqual(Array(3).fill('ER_LOCK_WAIT_TIMEOUT'));
    expect(pares.map((r) => (r.status === 'fulfilled' ? r.value : r.reason))).toEqual([20, 40]);
    // of the odd ones, the first alone was tried: not 3 and 5 after it
    expect(lotes.filter((l) => l.length === 1 && l[0] % 2)).toEqual([[1]]);
  });

  it("the batch's own error handed back by gravarUm is no request's lock wait: each request of the partition is still given its turn", async () => {
    const vistos: number[] = [];
    const g = new GravadorEmLotes(
      async () => {
        throw Object.assign(new Error('Lock wait timeout exceeded; try restarting transaction'), { code: 'ER_LOCK_WAIT_TIMEOUT' });
      },
      {
        maximo: 100,
        gravadores: 1,
        particao: () => 'a',
        gravarUm: async (n: number, erroDoLote: unknown) => {
          vistos.push(n);
          if (n === 1) throw erroDoLote;
          return n * 10;
        },
      },
    );
    const respostas = await Promise.allSettled([1, 2, 3].map((n) => g.guardar(n)));
    expect(vistos).toEqual([1, 2, 3]);
    expect(respostas.map((r) => (r.status === 'fulfilled' ? r.value : 'falhou'))).toEqual(['falhou', 20, 30]);
  });
});

describe('GravadorEmLotes when the database is out of reach', () => {
  it('a batch failing for want of a connection fails whole, at once: not retried one by one, each waiting for the database again', async () => {
    const porta = await portaLivre();
    let chamadas = 0;
    // a real connection to a port nobody listens on: mysql2's own error
    const gravar = async (lote: number[]) => {
      chamadas++;
      const c = await createConnection({ host: '127.0.0.1', port: porta, user: 'root' });
      await c.end();
      return lote.map(String);
    };
    const g = new GravadorEmLotes(gravar, { maximo: 100, gravadores: 1 });
    const resultados = await Promise.allSettled([1, 2, 3, 4].map((n) => g.guardar(n)));
    expect(resultados.map((r) => (r.status === 'rejected' ? (r.reason as { code?: string }).code : r.status))).toEqual(Array(4).fill('ECONNREFUSED'));
    expect(chamadas).toBe(1);
  });
});

describe('leituraPorIdEmLotes', () => {
  const nome = `${process.env.DB_PREFIX}lotes`.slice(0, 64);
  const base = () => ({ config: { database: nome } });
  let conexao: Connection;
  let leituras: jest.SpyInstance;

  beforeAll(async () => {
    conexao = await createConnection(database.servidorDaUrl(config().mysqlUrl));
    await conexao.query(`CREATE DATABASE \`${nome}\``);
    await conexao.query(`CREATE TABLE \`${nome}\`.pessoa (id VARCHAR(64) PRIMARY KEY, nome VARCHAR(50) NOT NULL)`);
    await conexao.query(`INSERT INTO \`${nome}\`.pessoa VALUES ('a1', 'Ana'), ('b2', 'Bia'), ('c3', 'Caio'), ('d4', 'Duda')`);
    leituras = jest.spyOn(database, 'lerLinhas');
  });
  afterAll(async () => {
    leituras.mockRestore();
    await conexao.query(`DROP DATABASE IF EXISTS \`${nome}\``);
    await conexao.end();
    await encerrar();
  });
  beforeEach(() => leituras.mockClear());

  it('reads what arrives in one turn in one statement, and answers each read with its own row: in any order, repeated, in capitals, or none', async () => {
    const ler = leituraPorIdEmLotes<{ id: string; nome: string }>(base, (marcas) => `SELECT id, nome FROM pessoa WHERE id IN (${marcas})`);
    const pedidos = ['d4', 'a1', 'C3', 'a1', 'zz', 'b2'];
    const linhas = await Promise.all(pedidos.map(ler));
    expect(linhas.map((l) => l?.nome ?? null)).toEqual(['Duda', 'Ana', 'Caio', 'Ana', null, 'Bia']);
    expect(leituras).toHaveBeenCalledTimes(1);
    // the list padded to a power of two: 6 reads, 8 values
    expect(leituras.mock.calls[0][2]).toHaveLength(8);
  });

  it('a batch that fails fails each of its reads with its error, read once, not again one by one', async () => {
    const ler = leituraPorIdEmLotes<{ id: string }>(base, (marcas) => `SELECT id FROM tabela_que_nao_existe WHERE id IN (${marcas})`);
    const resultados = await Promise.allSettled(['a1', 'b2', 'c3'].map(ler));
    expect(resultados.map((r) => r.status)).toEqual(['rejected', 'rejected', 'rejected']);
    for (const r of resultados) expect((r as PromiseRejectedResult).reason).toMatchObject({ code: 'ER_NO_SUCH_TABLE' });
    expect(leituras).toHaveBeenCalledTimes(1);
  });
});
