import nock from 'nock';
import { retomarCopiasEsgotadas } from '../../api/sales/anexos';
import { config } from '../../config';
import { AnexoDaMensagem } from '../../models/sales';
import * as filas from '../../queues/fila';
import { filaSalesAnexo, TENTATIVAS_DE_COPIA } from '../../queues/sales-anexo';
import { esperarAte } from '../helpers/espera';
import { ateOFim, comandoDaSuite } from '../helpers/processo';
import { anexosNesteArquivo, CHAT, eventoDeMensagem, idDoSuporte } from './apoio';

/**
 * `suite retry-attachment-copies [--conversa <id>]` (README, docs/sales.md): copies stopped after
 * SPEC 4.6 rule 7's attempts get a fresh set and are enqueued at once, so an operator retries them
 * once the cause is gone without editing the database; copies made or still trying are left alone.
 */

const t = anexosNesteArquivo();

/** `suite retry-attachment-copies …` as an operator runs it, on this file's databases and queues. */
function comando(...args: string[]) {
  return comandoCom(process.env, ...args);
}

function comandoCom(env: NodeJS.ProcessEnv, ...args: string[]) {
  return ateOFim(comandoDaSuite(['retry-attachment-copies', ...args], env));
}

/** A message with one attachment at `caminho` of the chat platform, in a conversation of its own; answers the attachment. */
async function anexoEm(caminho: string) {
  const r = await t.s.registrar(t.sistema, eventoDeMensagem({ conversa: idDoSuporte(), conteudo: 'segue', anexos: [{ id: idDoSuporte(), data_url: `${CHAT}${caminho}`, file_type: 'file' }] }));
  return (await AnexoDaMensagem.findOne({ where: { conversa_id: r.conversa_id } }))!;
}

const estado = async (id: string) => {
  const a = (await AnexoDaMensagem.findByPk(id))!;
  return { tentativas: a.tentativas, arquivo_id: a.arquivo_id };
};

/** An attachment the chat platform answered 404 to six times: its copy stopped, its job failed. */
async function anexoEsgotado(caminho: string) {
  nock(CHAT).get(caminho).times(TENTATIVAS_DE_COPIA).reply(404);
  const anexo = await anexoEm(caminho);
  await esperarAte(async () => (await filas.fila(filaSalesAnexo).getJobState(anexo.id)) === 'failed', 'the copy stopped after its attempts');
  expect(await estado(anexo.id)).toEqual({ tentativas: TENTATIVAS_DE_COPIA, arquivo_id: null });
  return anexo;
}

/** The attachment served whole from now on; answers its copy once made. */
function servir(caminho: string) {
  nock(CHAT).get(caminho).reply(200, Buffer.from(`%PDF ${caminho}`), { 'content-type': 'application/pdf' });
}
const copiado = (id: string) => esperarAte(async () => (await AnexoDaMensagem.findByPk(id))?.arquivo_id, 'the copy made', 5000);

test('gives the copies stopped after their attempts a fresh set and enqueues them at once, of one conversation or all; run again it changes nothing', async () => {
  const a = await anexoEsgotado('/rails/active_storage/retomada/a.pdf');
  const b = await anexoEsgotado('/rails/active_storage/retomada/b.pdf');
  servir('/rails/active_storage/retomada/c.pdf');
  const c = await anexoEm('/rails/active_storage/retomada/c.pdf');
  const copiaDeC = await copiado(c.id);
  // retries far apart from now on: what the command enqueues must run at once, not after a retry's wait
  const antes = config().sales.anexoRetryMs;
  config().sales.anexoRetryMs = 10 * 60_000;
  try {
    servir('/rails/active_storage/retomada/a.pdf');
    expect(await comando('--conversa', a.conversa_id)).toEqual({
      codigo: 0,
      saida: `${JSON.stringify({ conversa_id: a.conversa_id, reenfileiradas: 1 })}\n`,
      erros: 'retry-attachment-copies: 1 copy given new attempts and enqueued\n',
    });
    const copiaDeA = await copiado(a.id);
    expect(await estado(a.id)).toEqual({ tentativas: 1, arquivo_id: copiaDeA });
    expect((await AnexoDaMensagem.findByPk(a.id))!.ultimo_erro).toBeNull();
    // the other conversation's copy was not touched
    expect(await estado(b.id)).toEqual({ tentativas: TENTATIVAS_DE_COPIA, arquivo_id: null });

    // run again: nothing left to retry there; its log lines, however many, go to stderr, so the
    // result alone is on stdout
    const again = await comandoCom({ ...process.env, LOG_LEVEL: 'info' }, '--conversa', a.conversa_id);
    expect(again).toMatchObject({ codigo: 0, saida: `${JSON.stringify({ conversa_id: a.conversa_id, reenfileiradas: 0 })}\n` });
    expect(again.erros).toContain('"msg":"cópias esgotadas receberam novas tentativas"');

    // every conversation: the one still stopped, never the copies made
    servir('/rails/active_storage/retomada/b.pdf');
    expect(await comando()).toMatchObject({ codigo: 0, saida: `${JSON.stringify({ conversa_id: null, reenfileiradas: 1 })}\n` });
    await copiado(b.id);
    expect(await estado(b.id)).toMatchObject({ tentativas: 1 });
    expect(await estado(a.id)).toEqual({ tentativas: 1, arquivo_id: copiaDeA });
    expect(await estado(c.id)).toEqual({ tentativas: 1, arquivo_id: copiaDeC });
  } finally {
    config().sales.anexoRetryMs = antes;
  }
}, 90_000);

test('a copy stopped with a retry of the queue still delayed runs at once; one still trying keeps its count', async () => {
  const q = filas.fila(filaSalesAnexo);
  await q.pause();
  let parado, tentando;
  try {
    parado = await anexoEm('/rails/active_storage/retomada/adiado.pdf');
    tentando = await anexoEm('/rails/active_storage/retomada/tentando.pdf');
    await q.remove(parado.id);
    await q.remove(tentando.id);
  } finally {
    await q.resume();
  }
  // its attempts counted by runs that crashed, and BullMQ's next retry due in ten minutes
  await AnexoDaMensagem.update({ tentativas: TENTATIVAS_DE_COPIA }, { where: { id: parado.id } });
  await AnexoDaMensagem.update({ tentativas: 3 }, { where: { id: tentando.id } });
  await q.add('copiar', { anexo_id: parado.id }, { jobId: parado.id, delay: 10 * 60_000 });
  servir('/rails/active_storage/retomada/adiado.pdf');

  expect(await retomarCopiasEsgotadas(parado.conversa_id)).toBe(1);
  await copiado(parado.id);
  expect(await estado(parado.id)).toMatchObject({ tentativas: 1 });
  expect(await retomarCopiasEsgotadas(tentando.conversa_id)).toBe(0);
  expect(await estado(tentando.id)).toEqual({ tentativas: 3, arquivo_id: null });
});

test('a copy on its last attempt (counted as it starts) is left while its job runs, and re-armed once the attempt has failed', async () => {
  const q = filas.fila(filaSalesAnexo);
  const caminho = '/rails/active_storage/retomada/ultima.pdf';
  await q.pause();
  let anexo;
  try {
    anexo = await anexoEm(caminho);
    await q.remove(anexo.id);
  } finally {
    await q.resume();
  }
  await AnexoDaMensagem.update({ tentativas: TENTATIVAS_DE_COPIA - 1 }, { where: { id: anexo.id } });
  // the platform answers the last attempt's download (404) only once the test lets it
  let responder!: () => void;
  const portao = new Promise<void>((r) => (responder = r));
  nock(CHAT)
    .get(caminho)
    .reply((_uri, _corpo, cb) => void portao.then(() => cb(null, [404, 'não encontrado'])));
  await q.add('copiar', { anexo_id: anexo.id }, { jobId: anexo.id });
  await esperarAte(async () => (await estado(anexo.id)).tentativas === TENTATIVAS_DE_COPIA && (await q.getJobState(anexo.id)) === 'active', 'the last attempt under way');
  expect(await retomarCopiasEsgotadas(anexo.conversa_id)).toBe(0);
  expect(await estado(anexo.id)).toEqual({ tentativas: TENTATIVAS_DE_COPIA, arquivo_id: null });
  responder();
  await esperarAte(async () => (await q.getJobState(anexo.id)) !== 'active', 'the last attempt failed');
  servir(caminho);
  expect(await retomarCopiasEsgotadas(anexo.conversa_id)).toBe(1);
  await copiado(anexo.id);
  expect(await estado(anexo.id)).toMatchObject({ tentativas: 1 });
});

test('a copy stopped as too large for file storage (parada, one attempt counted) is re-armed once the limit is raised: the mark cleared, a fresh count, copied', async () => {
  const caminho = '/rails/active_storage/retomada/grande.mp4';
  const video = () => nock(CHAT).get(caminho).reply(200, Buffer.alloc(4096), { 'content-type': 'video/mp4', 'content-length': '4096' });
  const limite = config().files.tamanhoMaximoBytes;
  config().files.tamanhoMaximoBytes = 1024;
  let anexo;
  try {
    video();
    anexo = await anexoEm(caminho);
    const parado = anexo.id;
    await esperarAte(async () => (await AnexoDaMensagem.findByPk(parado))!.parada, 'the copy stopped as too large');
  } finally {
    config().files.tamanhoMaximoBytes = limite;
  }
  expect(await estado(anexo.id)).toEqual({ tentativas: 1, arquivo_id: null });
  video();
  expect(await retomarCopiasEsgotadas(anexo.conversa_id)).toBe(1);
  const copia = await copiado(anexo.id);
  expect(await AnexoDaMensagem.findByPk(anexo.id)).toMatchObject({ arquivo_id: copia, tentativas: 1, parada: false, ultimo_erro: null });
});

test('a conversation that does not exist, or arguments it does not take, change nothing and exit non-zero', async () => {
  const esgotado = await anexoEsgotado('/rails/active_storage/retomada/recusa.pdf');
  const inexistente = '00000000-0000-7000-8000-000000000000';
  expect(await comando('--conversa', inexistente)).toEqual({
    codigo: 1,
    saida: '',
    erros: `retry-attachment-copies refused: conversation ${inexistente} not found (or deleted); nothing was changed\n`,
  });
  // a typo is no "every conversation"
  const typo = await comando('--conversas', esgotado.conversa_id);
  expect(typo).toMatchObject({ codigo: 1, saida: '' });
  expect(typo.erros).toContain('retry-attachment-copies [--conversa <id>]');
  expect(await estado(esgotado.id)).toEqual({ tentativas: TENTATIVAS_DE_COPIA, arquivo_id: null });
}, 60_000);

test('each stopped copy is retried once a run, page after page, even one that stops again at once (file storage still refusing it as too large)', async () => {
  const limite = config().files.tamanhoMaximoBytes;
  config().files.tamanhoMaximoBytes = 1024;
  try {
    let downloads = 0;
    nock(CHAT)
      .persist()
      .get(/\/rails\/active_storage\/paginas\//)
      .reply(200, () => (downloads++, Buffer.alloc(4096)), { 'content-type': 'video/mp4', 'content-length': '4096' });
    const caminhos = [1, 2, 3].map((i) => `/rails/active_storage/paginas/video-${i}.mp4`);
    const r = await t.s.registrar(
      t.sistema,
      eventoDeMensagem({ conversa: idDoSuporte(), conteudo: 'três vídeos', anexos: caminhos.map((c) => ({ id: idDoSuporte(), data_url: `${CHAT}${c}`, file_type: 'video' })) }),
    );
    const todosParados = () =>
      esperarAte(async () => {
        const anexos = await AnexoDaMensagem.findAll({ where: { conversa_id: r.conversa_id } });
        return anexos.length === 3 && anexos.every((a) => a.parada) && anexos;
      }, 'the three copies stopped');
    const ids = new Set((await todosParados()).map((a) => a.id));
    expect(downloads).toBe(3);

    // one copy a page, and each page's copy run and stopped again before the next page is read:
    // without the cursor past the last page, the next page takes the same copy again (refused
    // here, or the run would never end). Left to the worker's pace, whether the copy had stopped
    // again before the next page was read was chance, and a run without the cursor could pass
    const enfileirar = filas.reenfileirar;
    const retomadas: string[] = [];
    const espiao = jest.spyOn(filas, 'reenfileirar').mockImplementation(async (...args: Parameters<typeof filas.reenfileirar>) => {
      const daqui = args[1].map((j) => j.opts.jobId).filter((id) => ids.has(id));
      const repetida = daqui.find((id) => retomadas.includes(id));
      if (repetida) throw new Error(`copy ${repetida} retried twice in one run`);
      retomadas.push(...daqui);
      const resultado = await enfileirar(...args);
      for (const id of daqui) {
        await esperarAte(async () => (await AnexoDaMensagem.findByPk(id))!.parada, 'the copy stopped again before the next page');
      }
      return resultado;
    });
    try {
      expect(await retomarCopiasEsgotadas(r.conversa_id, 1)).toBe(3);
    } finally {
      espiao.mockRestore();
    }
    expect(retomadas.sort()).toEqual([...ids].sort());
    expect(downloads).toBe(6);
    for (const a of await todosParados()) {
      expect(a.ultimo_erro).toContain("exceeds file storage's size limit");
      // a fresh count: the one attempt of this run
      expect(a.tentativas).toBe(1);
    }
  } finally {
    config().files.tamanhoMaximoBytes = limite;
  }
});
