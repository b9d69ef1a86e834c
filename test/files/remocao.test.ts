import { QueryTypes } from 'sequelize';
import { armazenamento, Armazenamento, usarArmazenamento } from '../../api/files/armazenamento';
import { varrerBytesAApagar } from '../../api/files/arquivos';
import { processarFilesLimpeza } from '../../jobs/files-limpeza';
import { banco } from '../../lib/database';
import { agendarRepetiveis } from '../../lib/runner';
import { fila } from '../../queues/fila';
import { filaFilesLimpeza, INTERVALO_DA_LIMPEZA_DE_ARQUIVOS_MS } from '../../queues/files-limpeza';
import { esperarProblema } from '../helpers/http';
import { iniciarSuite, SuiteDeTeste } from '../helpers/suite';
import { arquivosNoDisco, caminhoNoDisco, filesDe } from './apoio';

/**
 * DELETE /arquivo/{id} (DESIGN §7) when something fails between the row and the bytes: the file is
 * either whole (listed and downloadable) or gone from every route, never a row whose bytes are lost.
 */

let suite: SuiteDeTeste;
let files: ReturnType<typeof filesDe>;
let app: { id: string; token: string };
let real: Armazenamento;

beforeAll(async () => {
  suite = await iniciarSuite(['identity', 'files'], { workers: false });
  files = filesDe(suite);
  app = await files.novoAplicativo();
  real = armazenamento();
});
afterEach(() => usarArmazenamento(real));
afterAll(() => suite.encerrar());

/** Storage that does what the real one does, then runs `depois` (a failure after the bytes are gone). */
function removerE(depois: () => Promise<void>): Armazenamento {
  return {
    gravar: (c, o) => real.gravar(c, o),
    ler: (c) => real.ler(c),
    remover: async (c) => {
      await real.remover(c);
      await depois();
    },
    preparar: () => real.preparar(),
    pronto: () => real.pronto(),
  };
}

/**
 * As if the process died right now: the database ends the connection of the files database that
 * holds an open transaction (only this test file's database), so whatever it had not committed is
 * rolled back.
 */
async function morrerAgora(): Promise<void> {
  const sequelize = banco('files');
  const abertas = await sequelize.query<{ id: number }>(
    `SELECT t.trx_mysql_thread_id AS id FROM information_schema.INNODB_TRX t
       JOIN information_schema.PROCESSLIST p ON p.ID = t.trx_mysql_thread_id
      WHERE p.DB = ? AND p.ID <> CONNECTION_ID()`,
    { replacements: [sequelize.config.database], type: QueryTypes.SELECT },
  );
  for (const { id } of abertas) await sequelize.query(`KILL CONNECTION ${Number(id)}`).catch(() => undefined);
}

describe('DELETE /arquivo/{id} and a failure between the row and the bytes', () => {
  test('a process dying while the bytes are removed never leaves a listed file whose download is gone', async () => {
    const enviado = (await files.enviar(app.token, 'janela.txt', 'bytes da janela')).body;
    usarArmazenamento(removerE(morrerAgora));
    await files.api.del(`/arquivo/${enviado.id}`, { token: app.token });
    usarArmazenamento(real);

    const lido = await files.api.get(`/arquivo/${enviado.id}`, { token: app.token });
    if (lido.status === 200) {
      // still listed: then it must still be whole
      const baixado = await files.baixar(lido.body.url);
      expect(baixado.status).toBe(200);
      expect(baixado.bytes.toString()).toBe('bytes da janela');
    } else {
      esperarProblema(lido, 404);
      const listados = (await files.api.get('/arquivo?tamanho=100', { token: app.token })).body.itens.map((a: { id: string }) => a.id);
      expect(listados).not.toContain(enviado.id);
    }
  });

  test('storage out of reach after the commit: 204, the file gone from every route, and the sweep removes its bytes later', async () => {
    const enviado = (await files.enviar(app.token, 'depois.txt', 'bytes a varrer')).body;
    usarArmazenamento({ ...removerE(async () => undefined), remover: async () => Promise.reject(new Error('armazenamento fora do ar')) });
    const res = await files.api.del(`/arquivo/${enviado.id}`, { token: app.token });
    usarArmazenamento(real);
    expect(res.status).toBe(204);
    esperarProblema(await files.api.get(`/arquivo/${enviado.id}`, { token: app.token }), 404);
    expect((await files.baixar(enviado.url)).status).toBe(404);
    // the bytes are still there, owed a removal
    expect(arquivosNoDisco()).toContain(caminhoNoDisco(enviado.id));

    // the sweep as its queue runs it
    expect((await processarFilesLimpeza()).removidos).toBeGreaterThanOrEqual(1);
    expect(arquivosNoDisco()).not.toContain(caminhoNoDisco(enviado.id));
    const [restantes] = await banco('files').query('SELECT arquivo_id FROM arquivo_a_apagar');
    expect(restantes).toEqual([]);
    // a second round finds nothing to do
    expect(await varrerBytesAApagar()).toBe(0);
  });

  test('the sweep is the files-limpeza queue\'s repeatable job, every 5 minutes (on the dashboard with every queue)', async () => {
    await agendarRepetiveis();
    const agendados = await fila(filaFilesLimpeza).getJobSchedulers();
    expect(agendados).toEqual([expect.objectContaining({ key: 'varrer', every: INTERVALO_DA_LIMPEZA_DE_ARQUIVOS_MS })]);
  });

  test('removals the storage keeps refusing do not hold up the ones behind them: the sweep reads past them, and they stay owed', async () => {
    const enviados = [];
    for (const nome of ['a.txt', 'b.txt', 'c.txt', 'd.txt']) enviados.push((await files.enviar(app.token, nome, nome)).body as { id: string });
    const recusados = new Set(enviados.slice(0, 3).map((e) => e.id));
    // every removal fails while the files are deleted: all four owed
    usarArmazenamento({ ...removerE(async () => undefined), remover: async () => Promise.reject(new Error('armazenamento fora do ar')) });
    for (const e of enviados) expect((await files.api.del(`/arquivo/${e.id}`, { token: app.token })).status).toBe(204);
    // then the storage refuses three of them for good; in id order, the one it takes may be last
    usarArmazenamento({ ...removerE(async () => undefined), remover: async (id) => (recusados.has(id) ? Promise.reject(new Error('recusado')) : real.remover(id)) });
    expect(await varrerBytesAApagar(2)).toBe(1);
    const devidos = (await banco('files').query('SELECT arquivo_id FROM arquivo_a_apagar', { type: QueryTypes.SELECT })) as { arquivo_id: string }[];
    expect(new Set(devidos.map((d) => d.arquivo_id))).toEqual(recusados);
    usarArmazenamento(real);
    expect(await varrerBytesAApagar()).toBe(3);
  });

  test('a delete that completes leaves nothing owed', async () => {
    const enviado = (await files.enviar(app.token, 'limpo.txt', 'x')).body;
    expect((await files.api.del(`/arquivo/${enviado.id}`, { token: app.token })).status).toBe(204);
    expect(arquivosNoDisco()).not.toContain(caminhoNoDisco(enviado.id));
    const [restantes] = await banco('files').query('SELECT arquivo_id FROM arquivo_a_apagar');
    expect(restantes).toEqual([]);
  });
});
