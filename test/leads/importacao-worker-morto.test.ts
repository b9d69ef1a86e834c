import { QueryTypes } from 'sequelize';
import { banco } from '../../lib/database';
import { importarCnpjPelaFila } from '../../lib/runner';
import { enfileirarImportacao } from '../../queues/leads-importacao';
import { esperarAte, esperarOutraConexao } from '../helpers/espera';
import { importacaoEmFilhosNesteArquivo, leituraPresa, novoCnpj } from './apoio';

/**
 * `suite import-cnpj <dir>` waits for its job; the job is run by `suite worker leads-importacao` in
 * another process, which is killed (SIGKILL, as by the OOM killer) mid-import and not restarted.
 * Only a worker's stalled check notices a dead worker's job, so with no worker left the command
 * must take the queue over itself, or it waits for ever. The processes share this file's
 * databases and queue prefix (inherited env), with a 2-second lock (LEADS_IMPORTACAO_LOCK_MS) so
 * that the dead worker's lock lapses within seconds (30 s by default).
 */

const t = importacaoEmFilhosNesteArquivo();

const sql = async <T>(texto: string, parametros: unknown[] = []) =>
  (await banco('leads').query(texto, { replacements: parametros, type: QueryTypes.SELECT })) as T[];

const tabelasDeTrabalho = async () =>
  (
    await sql<{ t: string }>(
      `SELECT table_name AS t FROM information_schema.tables WHERE table_schema = DATABASE() AND (table_name LIKE '%\\_nova' OR table_name LIKE '%\\_antiga')`,
    )
  ).map((r) => r.t);

const nomeFantasia = async (cnpj: string) => {
  const res = await t.api().get(`/api/cnpj/${cnpj}`);
  expect({ cnpj, status: res.status }).toEqual({ cnpj, status: 200 });
  return res.body.nome_fantasia;
};

test('the worker running the import is killed and none is left: `import-cnpj` takes the queue over and fails plainly, the live data untouched; run again, it imports', async () => {
  // the import is held at its swap, the month loaded in its work tables, by a read of the live table
  const { cnpj, worker, dir, leitor, fim, contagem } = await t.presaNaTroca('MES 1', 'MES 2');
  try {
    worker.kill('SIGKILL');
    await new Promise((r) => (worker.exitCode !== null || worker.signalCode !== null ? r(null) : worker.once('exit', r)));
    const morte = Date.now();
    const erro = await fim;
    // about 4 s measured: the lock lapses (at most 2 s), one stalled check marks the job, the next moves it
    expect(Date.now() - morte).toBeLessThan(15_000);
    expect(erro.message).toMatch(/^the worker running the import stopped before it ended/);
    expect(contagem.assumidas).toBe(1);

    // the dead worker's swap never happened: last month is live, this one's copies are left behind
    expect(await nomeFantasia(cnpj)).toBe('MES 1');
    expect(await tabelasDeTrabalho()).toContain('estabelecimento_nova');
    // its statement gives up its wait (2 s), and the server closes its connection and lock
    const swaps = () => sql('SELECT 1 FROM information_schema.PROCESSLIST WHERE DB = DATABASE() AND INFO LIKE ?', ['RENAME TABLE%']);
    await esperarAte(async () => !(await swaps()).length, 'the dead swap gone');
  } finally {
    await leitor.end();
  }

  // the operator runs it again (the worker the first wait started runs it): the leftovers go
  const resultado = (await importarCnpjPelaFila(dir, () => undefined)) as { linhas: Record<string, number> };
  expect(resultado.linhas.estabelecimento).toBe(1);
  expect(await nomeFantasia(cnpj)).toBe('MES 2');
  expect(await tabelasDeTrabalho()).toEqual([]);
  // the killed run's record, left under way, was closed by the next
  const situacoes = await sql<{ situacao: string }>('SELECT situacao FROM importacao WHERE diretorio = ? ORDER BY situacao', [dir]);
  expect(situacoes.map((s) => s.situacao)).toEqual(['concluida', 'interrompida']);
}, 90_000);

test("the worker `import-cnpj` runs for itself takes no job after its own: another import-cnpj's, waiting, is not taken up to be cut by this command's exit", async () => {
  const cnpj = novoCnpj();
  // this command's import held at its swap while another command's job comes to wait behind it
  const leitor = await leituraPresa();
  let outro: Awaited<ReturnType<typeof enfileirarImportacao>> | undefined;
  try {
    const esta = importarCnpjPelaFila(await t.mes(cnpj, 'ESTE'), () => undefined);
    await esperarOutraConexao(leitor, 'the swap waiting', ['RENAME TABLE%']);
    outro = await enfileirarImportacao(await t.mes(cnpj, 'OUTRO'));
    await leitor.query('UNLOCK TABLES');
    expect((await esta) as { linhas: Record<string, number> }).toMatchObject({ linhas: { estabelecimento: 1 } });
    await new Promise((r) => setTimeout(r, 500));
    expect(await outro.getState()).toBe('waiting');
    expect(await nomeFantasia(cnpj)).toBe('ESTE');
  } finally {
    await leitor.end();
    await outro?.remove();
  }
}, 60_000);
