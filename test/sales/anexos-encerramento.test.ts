import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import nock from 'nock';
import { copiarAnexo, cortadaPor } from '../../api/sales/anexos';
import { config } from '../../config';
import { processarSalesAnexo } from '../../jobs/sales-anexo';
import { Arquivo } from '../../models/files';
import { AnexoDaMensagem } from '../../models/sales';
import { fecharWorker, fila, iniciarWorker } from '../../queues/fila';
import { filaSalesAnexo } from '../../queues/sales-anexo';
import { dormir, esperarAte } from '../helpers/espera';
import { anexosNesteArquivo, CHAT, eventoDeMensagem, idDoSuporte } from './apoio';

/**
 * SPEC 4.6 rule 7 (a failed copy is retried up to 5 more times) against the worker's shutdown
 * (STYLE §7: SIGTERM closes the workers): a copy under way is stopped by the abort signal at once,
 * download and upload alike, and the attempt it cut is no failure, so it is not spent. No worker
 * runs here unless a test starts one: the copies are called directly, or by the test's own worker.
 */

const t = anexosNesteArquivo({ workers: false });

/** A message with one attachment at `caminho` of the chat platform; answers the attachment's record. */
async function anexoEm(caminho: string, nome: string) {
  const r = await t.s.registrar(
    t.sistema,
    eventoDeMensagem({ conversa: idDoSuporte(), conteudo: 'segue', anexos: [{ id: idDoSuporte(), data_url: `${CHAT}${caminho}/${nome}`, file_type: 'file' }] }),
  );
  return (await AnexoDaMensagem.findOne({ where: { conversa_id: r.conversa_id } }))!;
}

/** The same attachment, called directly: its queued job is taken out so that no later worker runs it. */
async function anexoForaDaFila(caminho: string, nome: string) {
  const anexo = await anexoEm(caminho, nome);
  await fila(filaSalesAnexo).remove(anexo.id);
  return anexo;
}

/** A local server standing in for a party that takes a request and never answers; answers its origin. */
async function escutar(servidor: http.Server): Promise<string> {
  await new Promise<void>((r) => servidor.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(servidor.address() as AddressInfo).port}`;
}
const fechar = (servidor: http.Server) => {
  servidor.closeAllConnections();
  servidor.close();
};

/** What the copy answered, or `ainda copiando` when it had not ended within `ms`. */
const dentroDe = <T>(p: Promise<T>, ms: number) => Promise.race([p, dormir(ms).then(() => 'ainda copiando' as const)]);

describe('the abort signal stops a copy under way, and its attempt is given back', () => {
  it('only the abort itself counts as cut by the shutdown: a failure of the copy\'s own that comes as it begins keeps its attempt spent', () => {
    const parado = new AbortController();
    parado.abort();
    const comMotivo = new AbortController();
    const motivo = new Error('encerrando');
    comMotivo.abort(motivo);
    const abortado = Object.assign(new Error('The operation was aborted'), { name: 'AbortError' });
    // fetch rejects with the signal's reason; node's streams with an AbortError (its cause the reason)
    expect(cortadaPor(comMotivo.signal, motivo)).toBe(true);
    expect(cortadaPor(comMotivo.signal, Object.assign(new Error('terminated'), { cause: motivo }))).toBe(true);
    expect(cortadaPor(parado.signal, abortado)).toBe(true);
    // the copy's own failures, even once the signal is set: an answer, a connection, its own time-out
    expect(cortadaPor(parado.signal, new Error('the chat platform answered 500'))).toBe(false);
    expect(cortadaPor(parado.signal, Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }))).toBe(false);
    expect(cortadaPor(parado.signal, Object.assign(new Error('The operation was aborted due to timeout'), { name: 'TimeoutError' }))).toBe(false);
    // and nothing while the signal is not set
    expect(cortadaPor(new AbortController().signal, abortado)).toBe(false);
  });

  it('while the chat platform has not answered the download yet', async () => {
    // a chat platform that takes the request and never answers
    let pedido!: () => void;
    const pedidoRecebido = new Promise<void>((r) => (pedido = r));
    const mudo = http.createServer(() => pedido());
    const origem = await escutar(mudo);
    const proprio = await t.s.criarSistema('suporte', { url: origem, conta_id: 1 });
    try {
      const r = await t.s.registrar(
        proprio,
        eventoDeMensagem({ conversa: idDoSuporte(), anexos: [{ id: idDoSuporte(), data_url: `${origem}/rails/active_storage/parado.pdf`, file_type: 'file' }] }),
      );
      const anexo = (await AnexoDaMensagem.findOne({ where: { conversa_id: r.conversa_id } }))!;
      await fila(filaSalesAnexo).remove(anexo.id);
      const encerramento = new AbortController();
      const copia = copiarAnexo(anexo.id, undefined, encerramento.signal);
      await pedidoRecebido;
      expect((await AnexoDaMensagem.findByPk(anexo.id))!.tentativas).toBe(1);

      encerramento.abort(new Error('encerramento do processo'));
      expect(await dentroDe(copia, 1000)).toEqual({ estado: 'interrompido' });
      // no failure recorded: the attempt is back, the last error untouched
      expect(await AnexoDaMensagem.findByPk(anexo.id)).toMatchObject({ tentativas: 0, arquivo_id: null, ultimo_erro: null });

      // a copy asked to stop before it starts downloads nothing and counts nothing
      let outros = 0;
      mudo.on('request', () => outros++);
      expect(await copiarAnexo(anexo.id, undefined, encerramento.signal)).toEqual({ estado: 'interrompido' });
      await dormir(100);
      expect(outros).toBe(0);
      expect((await AnexoDaMensagem.findByPk(anexo.id))!.tentativas).toBe(0);
    } finally {
      fechar(mudo);
    }
  });

  it('while file storage has not answered the upload yet', async () => {
    const nome = `envio-${randomBytes(4).toString('hex')}.bin`;
    nock(CHAT).get(`/rails/active_storage/envio/${nome}`).reply(200, randomBytes(1024), { 'content-type': 'application/octet-stream' });
    const anexo = await anexoForaDaFila('/rails/active_storage/envio', nome);
    // file storage taking the upload and never answering
    let recebido!: () => void;
    const envioRecebido = new Promise<void>((r) => (recebido = r));
    const mudo = http.createServer((req) => {
      req.resume();
      recebido();
    });
    const urlDoFiles = config().servicos.files.url;
    config().servicos.files.url = await escutar(mudo);
    try {
      const encerramento = new AbortController();
      const copia = copiarAnexo(anexo.id, undefined, encerramento.signal);
      await envioRecebido;
      encerramento.abort(new Error('encerramento do processo'));
      expect(await dentroDe(copia, 1000)).toEqual({ estado: 'interrompido' });
    } finally {
      config().servicos.files.url = urlDoFiles;
      fechar(mudo);
    }
    expect(await AnexoDaMensagem.findByPk(anexo.id)).toMatchObject({ tentativas: 0, arquivo_id: null, ultimo_erro: null });
  });
});

describe("the worker's shutdown during a long copy", () => {
  it('stops it, puts the job back without spending an attempt (the queue\'s nor the database\'s), and the next worker copies it as its first attempt', async () => {
    const nome = `video-${randomBytes(4).toString('hex')}.mp4`;
    const pedacos = Array.from({ length: 20 }, () => randomBytes(16_384));
    const total = pedacos.reduce((n, p) => n + p.length, 0);
    // ten seconds of download, far past the shutdown's grace period (2 s in tests); nock does not
    // stop feeding a stream whose request was aborted, so the test stops it
    let cortado = false;
    const lento = () =>
      Readable.from(
        (async function* () {
          for (const p of pedacos) {
            await dormir(500);
            if (cortado) return;
            yield p;
          }
        })(),
      );
    nock(CHAT).get(`/rails/active_storage/video/${nome}`).reply(200, lento, { 'content-type': 'video/mp4', 'content-length': String(total) });
    const worker = iniciarWorker(filaSalesAnexo, processarSalesAnexo);
    const anexo = await anexoEm('/rails/active_storage/video', nome);
    await esperarAte(async () => ((await fila(filaSalesAnexo).getJob(anexo.id))?.progress as { bytes?: number } | undefined)?.bytes, 'the copy under way');

    await fecharWorker(worker);
    cortado = true;
    const job = (await fila(filaSalesAnexo).getJob(anexo.id))!;
    expect(['delayed', 'waiting']).toContain(await job.getState());
    expect(job.attemptsMade).toBe(0);
    expect(await AnexoDaMensagem.findByPk(anexo.id)).toMatchObject({ tentativas: 0, arquivo_id: null, ultimo_erro: null });
    // nothing of the cut copy stays in file storage
    await esperarAte(async () => (await Arquivo.count({ where: { nome } })) === 0, 'no copy left in file storage');

    nock(CHAT).get(`/rails/active_storage/video/${nome}`).reply(200, Buffer.concat(pedacos), { 'content-type': 'video/mp4' });
    const proximo = iniciarWorker(filaSalesAnexo, processarSalesAnexo);
    try {
      const copiado = await esperarAte(async () => {
        const a = await AnexoDaMensagem.findByPk(anexo.id);
        return a?.arquivo_id && a;
      }, 'the copy by the next worker');
      expect({ tentativas: copiado.tentativas, tamanho: Number(copiado.tamanho) }).toEqual({ tentativas: 1, tamanho: total });
      expect(await Arquivo.count({ where: { nome } })).toBe(1);
    } finally {
      await fecharWorker(proximo);
    }
  });
});
