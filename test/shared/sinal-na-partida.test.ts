import { NOMES_DOS_SERVICOS } from '../../config/services';
import { abrirBanco, novaConexao, travaDaMigracao } from '../../lib/database';
import { encerrar } from '../../lib/lifecycle';
import { esperarOutraConexao } from '../helpers/espera';
import { ateOFim, comandoDaSuite } from '../helpers/processo';
import { limparDados } from '../helpers/suite';

/**
 * A signal during a start (a deploy stopping a replica that waits for another's migration) stops
 * the start, which is no failure: no `fatal` line for an operator's alert, and the exit a signal's
 * close gives (0 for a service; non-zero for a command, which did not do its work).
 */

const niveis = (saida: string) =>
  saida
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as { level: number; msg: string });

beforeAll(() => abrirBanco('intranet', []));
afterAll(async () => {
  await encerrar();
  // `migrate` made every service's database before it came to intranet's
  await limparDados(NOMES_DOS_SERVICOS);
});

test.each([
  ['api intranet', 0],
  ['migrate', 1],
])('SIGTERM while `suite %s` waits for the migration lock: no fatal line, exit %d', async (comando, codigo) => {
  const outro = await novaConexao('intranet');
  try {
    // another process migrating intranet, for as long as it takes
    await outro.query('SELECT GET_LOCK(?, 0)', [travaDaMigracao('intranet')]);
    const filho = comandoDaSuite(comando.split(' '), { ...process.env, LOG_LEVEL: 'info' });
    const fim = ateOFim(filho);
    await esperarOutraConexao(outro, 'the start waiting for the migration lock', ['SELECT GET_LOCK%'], 1, 30_000);
    filho.kill('SIGTERM');
    const { codigo: saida, saida: stdout, erros } = await fim;
    const linhas = niveis(stdout + erros);
    expect(linhas.filter((l) => l.level >= 60)).toEqual([]);
    expect(linhas.map((l) => l.msg)).toContain('início interrompido pelo sinal');
    expect(saida).toBe(codigo);
  } finally {
    await outro.end();
  }
}, 60_000);
