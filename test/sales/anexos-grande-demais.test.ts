import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import nock from 'nock';
import { copiarAnexo, varrerAnexos } from '../../api/sales/anexos';
import { AGORA_NO_BANCO, banco } from '../../lib/database';
import { Arquivo } from '../../models/files';
import { AnexoDaMensagem } from '../../models/sales';
import { fila } from '../../queues/fila';
import { filaSalesAnexo } from '../../queues/sales-anexo';
import { dormir, esperarAte } from '../helpers/espera';
import { anexosNesteArquivo, CHAT, ESPERA_ENTRE_TENTATIVAS_MS, eventoDeMensagem, idDoSuporte } from './apoio';

/**
 * SPEC 4.6 rule 7 retries a failed copy up to 5 more times; an attachment file storage refuses as
 * past its size limit (413) can never be stored, so its copy stops at the first refusal, marked
 * `parada` with `tentativas` still counting the one attempt made (DESIGN §7), saying why, instead
 * of downloading it five more times. File storage's limit is
 * 1 MiB here (FILES_TAMANHO_MAXIMO_MB), a real file storage behind it; the chat platform is nock.
 */

const LIMITE = 1024 * 1024;

const t = anexosNesteArquivo({ env: { FILES_TAMANHO_MAXIMO_MB: '1' } });

/**
 * The chat platform serving `tamanho` random bytes at `caminho`, 16 KiB every millisecond as over a real
 * link (a body at hand all at once reached file storage before its answer), with its length
 * announced or not; counts the downloads and the bytes read of them.
 */
function anexoNaPlataforma(caminho: string, tamanho: number, anunciado: boolean) {
  const bytes = randomBytes(tamanho);
  const contagem = { downloads: 0, lidos: 0 };
  nock(CHAT)
    .persist()
    .get(caminho)
    .reply(
      200,
      () => {
        contagem.downloads++;
        return Readable.from(
          (async function* () {
            for (let i = 0; i < tamanho; i += 16 * 1024) {
              await dormir(1);
              const pedaco = bytes.subarray(i, i + 16 * 1024);
              contagem.lidos += pedaco.length;
              yield pedaco;
            }
          })(),
        );
      },
      { 'content-type': 'video/mp4', ...(anunciado && { 'content-length': String(tamanho) }) },
    );
  return { bytes, contagem };
}

/** A message with one attachment at `caminho` of the chat platform; answers the attachment's record once its copy ended. */
async function copiaTerminada(caminho: string) {
  const r = await t.s.registrar(t.sistema, eventoDeMensagem({ conversa: idDoSuporte(), conteudo: 'segue o vídeo', anexos: [{ id: idDoSuporte(), data_url: `${CHAT}${caminho}`, file_type: 'video' }] }));
  return esperarAte(async () => {
    const a = await AnexoDaMensagem.findOne({ where: { conversa_id: r.conversa_id } });
    return a && (a.arquivo_id || a.parada) && a;
  }, 'the copy ended');
}

/**
 * No further attempt: the job failed for good, and after a few retry intervals nothing ran again;
 * neither the sweep nor a job of the copy run again (a crash's, a sweep's) takes it.
 */
async function semMaisTentativas(anexoId: string, contagem: { downloads: number }) {
  // its state first, then the job: one read while still running would show its attempts before the failure
  await esperarAte(async () => (await fila(filaSalesAnexo).getJobState(anexoId)) === 'failed', 'the copy job failed');
  expect((await fila(filaSalesAnexo).getJob(anexoId))!.attemptsMade).toBe(1);
  await dormir(ESPERA_ENTRE_TENTATIVAS_MS * 4);
  expect(contagem.downloads).toBe(1);
  // neither does the sweep take it again, however long it is left
  // (by hand: an update of the model that sets only atualizado_em writes nothing)
  await banco('sales').query(`UPDATE anexo_da_mensagem SET atualizado_em = ${AGORA_NO_BANCO} - INTERVAL 1 HOUR WHERE id = ?`, { replacements: [anexoId] });
  await varrerAnexos();
  expect(await (await fila(filaSalesAnexo).getJob(anexoId))?.getState()).toBe('failed');
  expect(await copiarAnexo(anexoId)).toEqual({ estado: 'esgotado' });
  expect(contagem.downloads).toBe(1);
  expect((await AnexoDaMensagem.findByPk(anexoId))!).toMatchObject({ tentativas: 1, parada: true });
}

test('an attachment whose download announces a length past the limit: refused from the headers, the copy stops at the first attempt, saying so', async () => {
  const tamanho = 4 * LIMITE;
  const { contagem } = anexoNaPlataforma('/rails/active_storage/grande/anunciado.mp4', tamanho, true);
  const anexo = await copiaTerminada('/rails/active_storage/grande/anunciado.mp4');
  expect({ arquivo_id: anexo.arquivo_id, tentativas: anexo.tentativas, parada: anexo.parada, adiada_desde: anexo.adiada_desde }).toEqual({
    arquivo_id: null,
    tentativas: 1,
    parada: true,
    adiada_desde: null,
  });
  expect(anexo.ultimo_erro).toBe(
    `the attachment (${tamanho} bytes) exceeds file storage's size limit; file storage answered 413 to the upload: O arquivo passa do limite de 1 MB.`,
  );
  // the upload declared the length, so file storage answered before taking the file: the download was let go
  expect(contagem.lidos).toBeLessThan(tamanho / 2);
  await semMaisTentativas(anexo.id, contagem);
  expect(await Arquivo.count({ where: { nome: 'anunciado.mp4' } })).toBe(0);
  // stopped without a file: its key is listed for clean-up, should an earlier upload have been stored
  expect(await banco('sales').query('SELECT chave FROM chave_a_apagar WHERE chave = ?', { replacements: [`anexo-${anexo.id}`], type: 'SELECT' })).toHaveLength(1);
  expect((await t.s.mensagens(anexo.conversa_id))[0].anexos[0]).toMatchObject({ arquivo_id: null, url: null, tentativas: 1 });
});

test('an attachment of unknown length found past the limit while streaming: the 413 is read though the upload was still sending, and the copy stops the same way', async () => {
  const { contagem } = anexoNaPlataforma('/rails/active_storage/grande/sem-tamanho.mp4', 2 * LIMITE, false);
  const anexo = await copiaTerminada('/rails/active_storage/grande/sem-tamanho.mp4');
  expect({ arquivo_id: anexo.arquivo_id, tentativas: anexo.tentativas, parada: anexo.parada }).toEqual({ arquivo_id: null, tentativas: 1, parada: true });
  // the size is what had passed when file storage refused: more than its limit
  const [, passados] = /^the attachment \(at least (\d+) bytes\) exceeds file storage's size limit; file storage answered 413 to the upload: O arquivo passa do limite de 1 MB\.$/.exec(anexo.ultimo_erro ?? '') ?? [];
  expect(Number(passados)).toBeGreaterThan(LIMITE);
  await semMaisTentativas(anexo.id, contagem);
});

test('refused as too large at its second attempt, after a failure of its download: tentativas keeps counting the two attempts made', async () => {
  const caminho = '/rails/active_storage/grande/segunda.mp4';
  nock(CHAT).get(caminho).reply(503);
  const { contagem } = anexoNaPlataforma(caminho, 2 * LIMITE, true);
  const anexo = await copiaTerminada(caminho);
  expect({ tentativas: anexo.tentativas, parada: anexo.parada, arquivo_id: anexo.arquivo_id }).toEqual({ tentativas: 2, parada: true, arquivo_id: null });
  expect(anexo.ultimo_erro).toContain("exceeds file storage's size limit");
  expect(contagem.downloads).toBe(1);
  expect((await t.s.mensagens(anexo.conversa_id))[0].anexos[0]).toMatchObject({ tentativas: 2 });
});

test('an attachment within the limit is still copied whole, its length declared to file storage', async () => {
  const { bytes } = anexoNaPlataforma('/rails/active_storage/normal/curto.mp4', LIMITE, true);
  const anexo = await copiaTerminada('/rails/active_storage/normal/curto.mp4');
  expect({ tentativas: anexo.tentativas, tamanho: Number(anexo.tamanho), ultimo_erro: anexo.ultimo_erro }).toEqual({ tentativas: 1, tamanho: LIMITE, ultimo_erro: null });
  const [m] = await t.s.mensagens(anexo.conversa_id);
  const baixado = await fetch(m.anexos[0].url);
  expect(Buffer.from(await baixado.arrayBuffer()).equals(bytes)).toBe(true);
});
