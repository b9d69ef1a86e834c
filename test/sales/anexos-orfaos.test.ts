import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import nock from 'nock';
import { QueryTypes } from 'sequelize';
import { apagarCopiasPendentes, copiarAnexo, retomarCopiasEsgotadas } from '../../api/sales/anexos';
import { guardarArquivo, tokenDaSales } from '../../api/sales/arquivos';
import { config } from '../../config';
import { banco } from '../../lib/database';
import { Arquivo } from '../../models/files';
import { AnexoDaMensagem } from '../../models/sales';
import { fila } from '../../queues/fila';
import { filaSalesAnexo, TENTATIVAS_DE_COPIA } from '../../queues/sales-anexo';
import { esperarAte } from '../helpers/espera';
import { anexosNesteArquivo, CHAT, comRespostaDoEnvioPerdida, eventoDeMensagem, idDoSuporte } from './apoio';

/**
 * A copy file storage stored but whose answer was lost (a time-out, a connection cut) is known to
 * sales by its Idempotency-Key alone (`anexo-<id>`). When no attempt will come to claim it (the
 * attachment deleted with its conversation or message, or its copy given up), its key is listed
 * (chave_a_apagar) and the removal finds the file by the key and removes it, so no copy of the
 * contact's files stays in file storage referenced by nothing. File storage is the real service;
 * the chat platform is nock.
 */

const t = anexosNesteArquivo();

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const guardados = (bytes: Buffer) => Arquivo.count({ where: { sha256: sha256(bytes) } });
const chavesListadas = async () =>
  (await banco('sales').query<{ chave: string }>('SELECT chave FROM chave_a_apagar', { type: QueryTypes.SELECT })).map((l) => l.chave);
/** The key's line `intervalo` older, on the database's clock. */
const envelhecerChave = (anexoId: string, intervalo: string) =>
  banco('sales').query(`UPDATE chave_a_apagar SET criado_em = criado_em - INTERVAL ${intervalo} WHERE chave = ?`, { replacements: [`anexo-${anexoId}`] });

/** A message with one attachment at `caminho` of the chat platform, in a conversation of its own; answers its event and the attachment. */
async function anexoEm(caminho: string) {
  const criada = eventoDeMensagem({ conversa: idDoSuporte(), conteudo: 'segue', anexos: [{ id: idDoSuporte(), data_url: `${CHAT}${caminho}`, file_type: 'file' }] });
  const r = await t.s.registrar(t.sistema, criada);
  return { criada, anexo: (await AnexoDaMensagem.findOne({ where: { conversa_id: r.conversa_id } }))! };
}

/** The same, its job taken out of the queue before a worker runs it: the test copies it, or leaves it. */
async function anexoForaDaFila(caminho: string) {
  const q = fila(filaSalesAnexo);
  await q.pause();
  try {
    const criado = await anexoEm(caminho);
    await q.remove(criado.anexo.id);
    return criado.anexo;
  } finally {
    await q.resume();
  }
}

/** A message whose attachment's first attempt was stored by file storage and its answer lost; its retry far off. */
async function primeiraRespostaPerdida(caminho: string, bytes: Buffer) {
  nock(CHAT).get(caminho).reply(200, bytes, { 'content-type': 'application/pdf' });
  const criado = await comRespostaPerdida(async () => {
    const c = await anexoEm(caminho);
    await esperarAte(async () => (await AnexoDaMensagem.findByPk(c.anexo.id))?.ultimo_erro, 'the first attempt failed, its answer lost');
    return c;
  });
  expect(await AnexoDaMensagem.findByPk(criado.anexo.id)).toMatchObject({ tentativas: 1, arquivo_id: null });
  expect(await guardados(bytes)).toBe(1);
  // attempts are left: the next one will claim it, so its key is not listed
  expect(await chavesListadas()).not.toContain(`anexo-${criado.anexo.id}`);
  return criado;
}

/** While `agir` runs, the answer to the first upload is lost (comRespostaDoEnvioPerdida). */
const comRespostaPerdida = <T>(agir: () => Promise<T>) => comRespostaDoEnvioPerdida(t.suite.url.files, agir);

/** File storage holding `bytes` under the attachment's key, its answer never recorded (as after a lost answer). */
async function copiaSemResposta(anexoId: string, bytes: Buffer) {
  await guardarArquivo('perdido.pdf', 'application/pdf', Readable.from(bytes), { prazoMs: 10_000, chave: `anexo-${anexoId}`, token: await tokenDaSales() });
  expect(await guardados(bytes)).toBe(1);
}

/** Retries far apart while `agir` runs: nothing retries the copy within a test. */
async function semNovaTentativa<T>(agir: () => Promise<T>): Promise<T> {
  const antes = config().sales.anexoRetryMs;
  config().sales.anexoRetryMs = 10 * 60_000;
  try {
    return await agir();
  } finally {
    config().sales.anexoRetryMs = antes;
  }
}

test('an upload stored whose answer was lost, its conversation deleted before the next attempt: the removal finds the copy by its key and removes it', async () => {
  const bytes = randomBytes(5000);
  await semNovaTentativa(async () => {
    const { anexo } = await primeiraRespostaPerdida('/rails/active_storage/orfao/conversa.pdf', bytes);
    expect((await t.s.api.del(`/conversa/${anexo.conversa_id}`, { token: await t.s.admin() })).status).toBe(204);
    expect(await chavesListadas()).toContain(`anexo-${anexo.id}`);
    await esperarAte(async () => (await guardados(bytes)) === 0, 'the copy found by its key removed');
    // its retry, when it comes, finds the attachment gone
    expect(await copiarAnexo(anexo.id)).toEqual({ estado: 'inexistente' });
    await fila(filaSalesAnexo).remove(anexo.id);
  });
});

test('the same when the message is deleted in the chat platform before the next attempt', async () => {
  const bytes = randomBytes(5000);
  await semNovaTentativa(async () => {
    const { criada, anexo } = await primeiraRespostaPerdida('/rails/active_storage/orfao/mensagem.pdf', bytes);
    // what Chatwoot sends when a message is deleted: its notice, deleted: true, no attachments
    const apagada = { ...criada, event: 'message_updated', content: 'This message was deleted', content_attributes: { deleted: true }, attachments: [] };
    expect(await t.s.registrar(t.sistema, apagada)).toMatchObject({ conversa_id: anexo.conversa_id });
    expect(await AnexoDaMensagem.findByPk(anexo.id)).toBeNull();
    await esperarAte(async () => (await guardados(bytes)) === 0, 'the copy found by its key removed');
    await fila(filaSalesAnexo).remove(anexo.id);
  });
});

test('the last attempt stored with its answer lost: the copy given up, its key listed and its copy removed; re-armed, the copy made then is kept', async () => {
  const bytes = randomBytes(5000);
  nock(CHAT).get('/rails/active_storage/orfao/ultima.pdf').times(2).reply(200, bytes, { 'content-type': 'application/pdf' });
  const anexo = await anexoForaDaFila('/rails/active_storage/orfao/ultima.pdf');
  await AnexoDaMensagem.update({ tentativas: TENTATIVAS_DE_COPIA - 1 }, { where: { id: anexo.id } });
  await comRespostaPerdida(() => expect(copiarAnexo(anexo.id)).rejects.toThrow());
  expect(await AnexoDaMensagem.findByPk(anexo.id)).toMatchObject({ tentativas: TENTATIVAS_DE_COPIA, arquivo_id: null });
  expect(await chavesListadas()).toContain(`anexo-${anexo.id}`);
  // (the removal the copy enqueued may have met the relay closing: run here, not left to its retry)
  await apagarCopiasPendentes();
  expect(await guardados(bytes)).toBe(0);

  // the operator retries it: its key is no longer listed (its attempts will claim what they
  // upload), and the copy made then is recorded and kept
  expect(await retomarCopiasEsgotadas(anexo.conversa_id)).toBe(1);
  expect(await chavesListadas()).not.toContain(`anexo-${anexo.id}`);
  const copia = await esperarAte(async () => (await AnexoDaMensagem.findByPk(anexo.id))?.arquivo_id, 'the copy made again');
  await apagarCopiasPendentes();
  expect(await Arquivo.findByPk(copia)).not.toBeNull();
  expect(await banco('sales').query('SELECT arquivo_id FROM arquivo_a_apagar WHERE arquivo_id = ?', { replacements: [copia], type: QueryTypes.SELECT })).toEqual([]);
});

test('an attachment deleted while the operator retries its stopped copy keeps its key listed, for the removal of the copy its lost answer left', async () => {
  const anexo = await anexoForaDaFila('/rails/active_storage/orfao/retomada-apagada.pdf');
  // stopped, its last attempt's answer lost: the key listed
  await AnexoDaMensagem.update({ tentativas: TENTATIVAS_DE_COPIA }, { where: { id: anexo.id } });
  await banco('sales').query('INSERT INTO chave_a_apagar (chave, criado_em) VALUES (?, UTC_TIMESTAMP(3))', { replacements: [`anexo-${anexo.id}`] });
  const sales = banco('sales');
  const original = sales.query.bind(sales);
  // as its message is deleted between the retry's re-arming and its clean-up of keys: the row goes,
  // and the deletion lists the key again (INSERT IGNORE: it is there)
  const espiao = jest.spyOn(sales, 'query').mockImplementation((async (sql: unknown, ...resto: unknown[]) => {
    if (typeof sql === 'string' && /DELETE k FROM chave_a_apagar|DELETE FROM chave_a_apagar WHERE chave IN/.test(sql)) {
      await original('DELETE FROM anexo_da_mensagem WHERE id = ?', { replacements: [anexo.id] });
      await original('INSERT IGNORE INTO chave_a_apagar (chave, criado_em) VALUES (?, UTC_TIMESTAMP(3))', { replacements: [`anexo-${anexo.id}`] });
    }
    return (original as (...a: unknown[]) => unknown)(sql, ...resto);
  }) as never);
  try {
    expect(await retomarCopiasEsgotadas(anexo.conversa_id)).toBe(1);
    expect(await chavesListadas()).toContain(`anexo-${anexo.id}`);
  } finally {
    espiao.mockRestore();
    await fila(filaSalesAnexo).remove(anexo.id);
  }
});

test('a worker that died on the last attempt after file storage stored it: the job run again finds the copy spent and lists its key, and the copy is removed', async () => {
  const bytes = randomBytes(5000);
  const anexo = await anexoForaDaFila('/rails/active_storage/orfao/morto.pdf');
  await copiaSemResposta(anexo.id, bytes);
  // the sixth attempt counted, then the process gone
  await AnexoDaMensagem.update({ tentativas: TENTATIVAS_DE_COPIA }, { where: { id: anexo.id } });
  const baixado = nock(CHAT).get('/rails/active_storage/orfao/morto.pdf').reply(200, bytes, { 'content-type': 'application/pdf' });
  expect(await copiarAnexo(anexo.id)).toEqual({ estado: 'esgotado' });
  expect(baixado.isDone()).toBe(false);
  expect(await chavesListadas()).toContain(`anexo-${anexo.id}`);
  await esperarAte(async () => (await guardados(bytes)) === 0, 'the copy found by its key removed');
});

test('a key whose file is not found yet stays listed for as long as an upload of it may still be storing, and a later run removes a file stored meanwhile; file storage out of reach leaves it listed', async () => {
  const bytes = randomBytes(5000);
  // a conversation deleted while its attachment's copy was under way: nothing stored yet
  const anexo = await anexoForaDaFila('/rails/active_storage/orfao/em-curso.pdf');
  expect((await t.s.api.del(`/conversa/${anexo.conversa_id}`, { token: await t.s.admin() })).status).toBe(204);
  const chave = `anexo-${anexo.id}`;
  expect(await chavesListadas()).toContain(chave);
  await apagarCopiasPendentes();
  expect(await chavesListadas()).toContain(chave);

  // the upload under way ends, stored, its answer lost
  await copiaSemResposta(anexo.id, bytes);
  const urlDoFiles = config().servicos.files.url;
  const fechado = http.createServer();
  await new Promise<void>((r) => fechado.listen(0, '127.0.0.1', r));
  config().servicos.files.url = `http://127.0.0.1:${(fechado.address() as AddressInfo).port}`;
  await new Promise((r) => fechado.close(r));
  try {
    await expect(apagarCopiasPendentes()).rejects.toThrow('file storage could not be asked for the files of the listed keys (still listed)');
  } finally {
    config().servicos.files.url = urlDoFiles;
  }
  expect(await chavesListadas()).toContain(chave);
  expect(await guardados(bytes)).toBe(1);

  await apagarCopiasPendentes();
  expect(await guardados(bytes)).toBe(0);
  // nine minutes on, still looked up; past ten, it goes
  await envelhecerChave(anexo.id, '9 MINUTE');
  await apagarCopiasPendentes();
  expect(await chavesListadas()).toContain(chave);
  await envelhecerChave(anexo.id, '2 MINUTE');
  await apagarCopiasPendentes();
  expect(await chavesListadas()).not.toContain(chave);
});
