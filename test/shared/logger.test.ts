import { Writable } from 'node:stream';
import pino from 'pino';
import { QueryTypes } from 'sequelize';
import { abrirBanco, apagarBanco, lerPorTexto } from '../../lib/database';
import { encerrar } from '../../lib/lifecycle';
import { opcoesDoRegistro } from '../../lib/logger';
import { novaConexaoRedis } from '../../lib/redis';

/**
 * What never reaches a log line: a failed statement's text and values travel on the database
 * error (Sequelize's and mysql2's alike), and the error is what a handler logs.
 */

let linhas: string[] = [];
// the tests' level is silent: this logger writes whatever it is given
const registro = pino(
  { ...opcoesDoRegistro(), level: 'info' },
  new Writable({
    write(pedaco, _codificacao, pronto) {
      linhas.push(String(pedaco));
      pronto();
    },
  }),
);

beforeAll(() => abrirBanco('intranet', []));
afterAll(async () => {
  await encerrar();
  await apagarBanco('intranet');
});
beforeEach(() => (linhas = []));

const TELEFONE = '5511987654321';

async function erroDe(consulta: () => Promise<unknown>): Promise<Error> {
  try {
    await consulta();
  } catch (err) {
    return err as Error;
  }
  throw new Error('the statement did not fail');
}

test("a Sequelize query's error is logged with its code and message, without the statement or its values", async () => {
  const s = await abrirBanco('intranet', []);
  const err = await erroDe(() => s.query('INSERT INTO tabela_que_nao_existe (telefone) VALUES (?)', { replacements: [TELEFONE], type: QueryTypes.INSERT }));
  expect(JSON.stringify(err, Object.getOwnPropertyNames(err))).toContain(TELEFONE);
  registro.error({ err }, 'falhou');
  const [linha] = linhas.map((l) => JSON.parse(l));
  expect(linha.err.message).toMatch(/tabela_que_nao_existe/);
  expect(linha.err.original.code).toBe('ER_NO_SUCH_TABLE');
  expect(linhas.join('')).not.toContain(TELEFONE);
});

test("a mysql2 statement's error (the hot paths' plain statements) is logged without the statement", async () => {
  const s = await abrirBanco('intranet', []);
  const err = await erroDe(() => lerPorTexto(s, 'SELECT telefone FROM outra_que_nao_existe WHERE telefone = ?', [TELEFONE]));
  registro.error({ err }, 'falhou');
  expect(JSON.parse(linhas[0]).err.code).toBe('ER_NO_SUCH_TABLE');
  expect(linhas.join('')).not.toContain(TELEFONE);
});

test("a Redis command's error is logged without the command's arguments (AUTH's is the password)", async () => {
  const r = novaConexaoRedis('worker', 'teste-do-registro');
  try {
    const segredo = `segredo-${process.pid}`;
    // a real error reply: ioredis puts the failed command, its arguments included, on the error
    const err = await erroDe(() => r.call('hset', segredo));
    expect((err as Error & { command: unknown }).command).toEqual({ name: 'hset', args: [segredo] });
    registro.error({ err }, 'falhou');
    const [linha] = linhas.map((l) => JSON.parse(l));
    expect(linha.err.message).toMatch(/wrong number of arguments/);
    expect(linha.err.command.name).toBe('hset');
    expect(linhas.join('')).not.toContain(segredo);
  } finally {
    r.disconnect();
  }
});
