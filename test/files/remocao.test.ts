import { Job } from 'bullmq';
import { QueryTypes } from 'sequelize';
import { armazenamento, Armazenamento, usarArmazenamento, vencimentoDoEnvioMs } from '../../api/files/armazenamento';
import { varrerBytesAApagar } from '../../api/files/arquivos';
import { processarFilesLimpeza } from '../../jobs/files-limpeza';
import { config } from '../../config';
import { banco } from '../../lib/database';
import { agendarRepetiveis } from '../../lib/runner';
import { fila } from '../../queues/fila';
import { filaFilesLimpeza, INTERVALO_DA_LIMPEZA_DE_ARQUIVOS_MS } from '../../queues/files-limpeza';
import { esperarProblema } from '../helpers/http';
import { Registro } from '../helpers/registros';
import { comRelogioAdiantado } from '../helpers/relogio';
import { iniciarSuite, SuiteDeTeste } from '../helpers/suite';
import { Arquivo } from '../../models/files';
import { arquivosNoDisco, bytesAleatorios, caminhoNoDisco, filesDe } from './apoio';

/** What the files component logs as an error. */
const mockErrosDoFiles: Registro[] = [];
jest.mock('../../lib/logger', () => jest.requireActual('../helpers/registros').loggerQueRegistra('files', ['error'], () => mockErrosDoFiles));

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
    marca: () => real.marca(),
    marcar: (m) => real.marcar(m),
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

    // the sweep as its queue runs it, its count on the dashboard; asked to stop first, it removes nothing
    const progresso: object[] = [];
    const job = { updateProgress: async (p: object) => void progresso.push(p) } as unknown as Job;
    expect(await processarFilesLimpeza(job, undefined, AbortSignal.abort())).toEqual({ removidos: 0 });
    expect(arquivosNoDisco()).toContain(caminhoNoDisco(enviado.id));
    const { removidos } = await processarFilesLimpeza(job);
    expect(removidos).toBeGreaterThanOrEqual(1);
    expect(progresso.at(-1)).toEqual({ lidos: expect.any(Number), removidos });
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

/** The lines of arquivo_a_apagar, with how long after its writing each one is due (ms). */
async function devidos(): Promise<{ arquivo_id: string; prazo: number }[]> {
  const linhas = await banco('files').query<{ arquivo_id: string; criado_em: Date; remover_apos: Date }>(
    'SELECT arquivo_id, criado_em, remover_apos FROM arquivo_a_apagar ORDER BY arquivo_id',
    { type: QueryTypes.SELECT },
  );
  return linhas.map((l) => ({ arquivo_id: l.arquivo_id, prazo: new Date(l.remover_apos).getTime() - new Date(l.criado_em).getTime() }));
}

/** The sweep as it would run `ms` from now: the owed lines are made that much older for it, then put back. */
async function varrerDaquiA(ms: number): Promise<number> {
  const mover = (sentido: '-' | '+') =>
    banco('files').query(
      `UPDATE arquivo_a_apagar SET criado_em = criado_em ${sentido} INTERVAL ? MICROSECOND, remover_apos = remover_apos ${sentido} INTERVAL ? MICROSECOND`,
      { replacements: [ms * 1000, ms * 1000] },
    );
  await mover('-');
  try {
    return await varrerBytesAApagar();
  } finally {
    await mover('+');
  }
}

/** Waits until `pronto()` holds (a few seconds at most). */
async function ate(pronto: () => boolean): Promise<void> {
  for (let i = 0; i < 100 && !pronto(); i++) await new Promise((r) => setTimeout(r, 50));
  expect(pronto()).toBe(true);
}

/**
 * Storage that writes the bytes and then holds the upload there, between the bytes and the row,
 * until `soltar` (with an error: the process stopped there; without: it goes on to its row).
 */
function pararDepoisDeGravar() {
  const gravados: string[] = [];
  let soltar!: (erro?: Error) => void;
  const solto = new Promise<Error | undefined>((r) => (soltar = r));
  usarArmazenamento({
    ...removerE(async () => undefined),
    gravar: async (c, o) => {
      await real.gravar(c, o);
      gravados.push(c);
      const erro = await solto;
      if (erro) throw erro;
    },
  });
  return { gravados, soltar };
}

describe('POST /arquivo and a stop between the bytes and the row: the bytes are owed from before they are written', () => {
  beforeEach(() => banco('files').query('DELETE FROM arquivo_a_apagar'));

  test('a stop between the bytes and the row leaves them owed: the sweep leaves them while the upload could still finish, and removes them after', async () => {
    const parada = pararDepoisDeGravar();
    const envio = files.enviar(app.token, 'interrompido.bin', bytesAleatorios(2000));
    await ate(() => parada.gravados.length === 1);
    const [id] = parada.gravados;
    expect(arquivosNoDisco()).toContain(caminhoNoDisco(id));
    expect(await Arquivo.findByPk(id)).toBeNull();
    // owed, due once the upload can no longer finish (FILES_PRAZO_DO_ENVIO_S and room to end)
    expect(await devidos()).toEqual([{ arquivo_id: id, prazo: vencimentoDoEnvioMs() }]);
    expect(vencimentoDoEnvioMs()).toBeGreaterThan(config().files.prazoDoEnvioMs);

    // the sweep now, or just before the deadline, leaves the upload in progress alone
    expect(await varrerBytesAApagar()).toBe(0);
    expect(await varrerDaquiA(vencimentoDoEnvioMs() - 60_000)).toBe(0);
    expect(arquivosNoDisco()).toContain(caminhoNoDisco(id));

    // the process stopped there for good (nothing of it runs again: its cleanup too is refused)
    usarArmazenamento({ ...removerE(async () => undefined), remover: async () => Promise.reject(new Error('armazenamento fora do ar')) });
    parada.soltar(new Error('o processo parou aqui'));
    expect((await envio).status).toBe(500);
    usarArmazenamento(real);
    expect(arquivosNoDisco()).toContain(caminhoNoDisco(id));
    expect((await devidos()).map((d) => d.arquivo_id)).toEqual([id]);

    // past the deadline, the sweep as its queue runs it
    expect(await varrerDaquiA(vencimentoDoEnvioMs() + 1000)).toBe(1);
    expect(arquivosNoDisco()).not.toContain(caminhoNoDisco(id));
    expect(await devidos()).toEqual([]);
  });

  test('a refused upload whose bytes cannot be removed (a repeat, storage out of reach) leaves them owed, and the sweep removes them after the deadline', async () => {
    const bytes = bytesAleatorios(300);
    const chave = { headers: { 'idempotency-key': `repetido-${Date.now()}` } };
    const primeiro = (await files.enviar(app.token, 'repetido.bin', bytes, chave)).body;
    const antes = arquivosNoDisco();
    usarArmazenamento({ ...removerE(async () => undefined), remover: async () => Promise.reject(new Error('armazenamento fora do ar')) });
    const repetido = await files.enviar(app.token, 'repetido.bin', bytes, chave);
    usarArmazenamento(real);
    expect(repetido.status).toBe(201);
    expect(repetido.body.id).toBe(primeiro.id);
    const sobra = arquivosNoDisco().filter((a) => !antes.includes(a));
    expect(sobra).toHaveLength(1);
    const [devido] = await devidos();
    expect(sobra[0]).toBe(caminhoNoDisco(devido.arquivo_id));

    expect(await varrerBytesAApagar()).toBe(0);
    expect(await varrerDaquiA(vencimentoDoEnvioMs() + 1000)).toBe(1);
    expect(arquivosNoDisco()).toEqual(antes);
    expect(await devidos()).toEqual([]);
  });

  test('an upload slow to arrive is stored whole while the sweep runs, and a stored upload leaves nothing owed', async () => {
    const pedacos = Array.from({ length: 4 }, () => bytesAleatorios(1024));
    const envio = files.enviarEmPedacos(app.token, 'lento.bin', pedacos, 'application/octet-stream', 250);
    await ate(() => arquivosNoDisco().some((a) => a.startsWith('parciais')));
    expect(await devidos()).toHaveLength(1);
    expect(await varrerBytesAApagar()).toBe(0);
    const res = await envio;
    expect(res.status).toBe(201);
    expect((await files.baixar(res.body.url)).bytes.equals(Buffer.concat(pedacos))).toBe(true);
    expect(await devidos()).toEqual([]);
  });

  test('an upload that outlives its deadline finds its bytes taken by the sweep: it fails, and leaves no row and no bytes', async () => {
    const parada = pararDepoisDeGravar();
    const envio = files.enviar(app.token, 'atrasado.bin', bytesAleatorios(500));
    await ate(() => parada.gravados.length === 1);
    const [id] = parada.gravados;
    expect(await varrerDaquiA(vencimentoDoEnvioMs() + 1000)).toBe(1);
    parada.soltar();
    expect((await envio).status).toBe(500);
    usarArmazenamento(real);
    expect(await Arquivo.findByPk(id)).toBeNull();
    expect(arquivosNoDisco()).not.toContain(caminhoNoDisco(id));
    expect(await devidos()).toEqual([]);
  });

  test('an upload that outlived its deadline, while it removes what the sweep left, holds up no delete nor other upload', async () => {
    const antigo = (await files.enviar(app.token, 'antigo.txt', 'antigo')).body;
    const parada = pararDepoisDeGravar();
    const envio = files.enviar(app.token, 'atrasado.bin', bytesAleatorios(500));
    await ate(() => parada.gravados.length === 1);
    const [atrasado] = parada.gravados;
    expect(await varrerDaquiA(vencimentoDoEnvioMs() + 1000)).toBe(1);
    // the sweep ran a while before the upload reaches its row: the lines deleted so far are long gone
    // from the index (the server's purge; here the table rebuilt, which keeps no deleted line either)
    await banco('files').query('ALTER TABLE arquivo_a_apagar FORCE');
    // the late upload's removal of its bytes hangs (a slow store)
    let soltarRemocao!: () => void;
    const remocaoSolta = new Promise<void>((r) => (soltarRemocao = r));
    let removendo = false;
    usarArmazenamento({
      ...removerE(async () => undefined),
      remover: async (c) => {
        if (c === atrasado) {
          removendo = true;
          await remocaoSolta;
        }
        await real.remover(c);
      },
    });
    parada.soltar();
    await ate(() => removendo);
    // meanwhile a file is deleted and another one uploaded: neither waits for that removal
    const aTempo = <T>(p: Promise<T>) => Promise.race([p, new Promise<null>((r) => setTimeout(() => r(null), 3000))]);
    const apagado = files.api.del(`/arquivo/${antigo.id}`, { token: app.token });
    const outro = files.enviar(app.token, 'outro.bin', bytesAleatorios(200));
    const [apagadoATempo, outroATempo] = await Promise.all([aTempo(apagado), aTempo(outro)]);
    soltarRemocao();
    expect(apagadoATempo?.status).toBe(204);
    expect(outroATempo?.status).toBe(201);
    expect((await envio).status).toBe(500);
    usarArmazenamento(real);
    expect(arquivosNoDisco()).not.toContain(caminhoNoDisco(atrasado));
    expect(await devidos()).toEqual([]);
  });

  test('a deleted file\'s bytes are still due at once', async () => {
    const enviado = (await files.enviar(app.token, 'apagado.txt', 'apagado')).body;
    usarArmazenamento({ ...removerE(async () => undefined), remover: async () => Promise.reject(new Error('armazenamento fora do ar')) });
    expect((await files.api.del(`/arquivo/${enviado.id}`, { token: app.token })).status).toBe(204);
    usarArmazenamento(real);
    expect(await devidos()).toEqual([{ arquivo_id: enviado.id, prazo: 0 }]);
    expect(await varrerBytesAApagar()).toBe(1);
    expect(arquivosNoDisco()).not.toContain(caminhoNoDisco(enviado.id));
  });
});

describe('processes whose clocks disagree: what is owed is due by the database\'s clock', () => {
  beforeEach(() => banco('files').query('DELETE FROM arquivo_a_apagar'));

  test('a file deleted by a process whose clock runs five minutes ahead, its bytes left behind, is swept at once', async () => {
    const enviado = (await files.enviar(app.token, 'adiantado.txt', 'adiantado')).body;
    usarArmazenamento({ ...removerE(async () => undefined), remover: async () => Promise.reject(new Error('armazenamento fora do ar')) });
    const res = await comRelogioAdiantado(5 * 60_000, () => files.api.del(`/arquivo/${enviado.id}`, { token: app.token }));
    usarArmazenamento(real);
    expect(res.status).toBe(204);
    expect(await varrerBytesAApagar()).toBe(1);
    expect(arquivosNoDisco()).not.toContain(caminhoNoDisco(enviado.id));
  });

  test('an upload in progress on a process whose clock runs behind by more than its deadline keeps its bytes from the sweep', async () => {
    const parada = pararDepoisDeGravar();
    const atraso = -(vencimentoDoEnvioMs() + 60_000);
    // the upload starts, and writes down its bytes as owed, on that process; it stops after the bytes
    const { envio } = await comRelogioAdiantado(atraso, async () => {
      const emCurso = files.enviar(app.token, 'atrasado.bin', bytesAleatorios(300));
      await ate(() => parada.gravados.length === 1);
      return { envio: emCurso };
    });
    const [id] = parada.gravados;
    expect(await varrerBytesAApagar()).toBe(0);
    expect(arquivosNoDisco()).toContain(caminhoNoDisco(id));
    parada.soltar();
    expect((await envio).status).toBe(201);
    usarArmazenamento(real);
    expect(await devidos()).toEqual([]);
  });
});

describe('a download racing a delete', () => {
  const semBytes = () => mockErrosDoFiles.filter((r) => r.args.includes('arquivo sem bytes no armazenamento'));
  beforeEach(() => (mockErrosDoFiles.length = 0));

  test('a download that read the row just before the delete committed answers a plain 404, with no error logged', async () => {
    const enviado = (await files.enviar(app.token, 'corrida.txt', 'bytes da corrida')).body;
    // the delete commits and removes the bytes between the download's read of the row and of the bytes
    usarArmazenamento({
      ...removerE(async () => undefined),
      ler: async (c) => {
        expect((await files.api.del(`/arquivo/${c}`, { token: app.token })).status).toBe(204);
        return real.ler(c);
      },
    });
    const baixado = await files.baixar(enviado.url);
    usarArmazenamento(real);
    esperarProblema(baixado, 404);
    expect(semBytes()).toEqual([]);
  });

  test('a row still there whose bytes are gone is a 404 too, and logged as the fault it is', async () => {
    const enviado = (await files.enviar(app.token, 'perdido.txt', 'bytes perdidos')).body;
    await real.remover(enviado.id);
    esperarProblema(await files.baixar(enviado.url), 404);
    expect(semBytes()).toHaveLength(1);
  });
});
