import { randomBytes } from 'node:crypto';
import nock from 'nock';
import { apagarCopiasPendentes, copiarAnexo, esperaAntesDaCopia, REMOCAO } from '../../api/sales/anexos';
import * as arquivos from '../../api/sales/arquivos';
import { Worker } from 'bullmq';
import { config } from '../../config';
import { banco, novaConexao } from '../../lib/database';
import { novaConexaoRedis } from '../../lib/redis';
import { esperarAte, esperarOutraConexao } from '../helpers/espera';
import { portaLivre } from '../helpers/processo';
import { Arquivo } from '../../models/files';
import { AnexoDaMensagem } from '../../models/sales';
import { fila } from '../../queues/fila';
import { filaSalesAnexo, TENTATIVAS_DE_COPIA } from '../../queues/sales-anexo';
import { anexosNesteArquivo, CHAT, eventoDeMensagem, idDoSuporte, recusarRegistroDaCopia } from './apoio';

/**
 * A copy whose recording failed goes to the removal list (arquivo_a_apagar); the retry, with the
 * same Idempotency-Key, is answered that very copy by file storage and records it. It must then
 * leave the removal list, or the removal deletes the file the attachment points to.
 */

const t = anexosNesteArquivo({ workers: false });

/** A message with one attachment at `pasta/nome` on the chat platform, its copy job taken out (the test copies it). */
async function anexoSemJob(pasta: string, nome: string, bytes: string, vezes = 1, antesDeResponder: Promise<unknown> = Promise.resolve()) {
  const r = await t.s.registrar(
    t.sistema,
    eventoDeMensagem({ conversa: idDoSuporte(), conteudo: 'segue', anexos: [{ id: idDoSuporte(), data_url: `${CHAT}/rails/active_storage/${pasta}/${nome}`, file_type: 'file' }] }),
  );
  const anexo = (await AnexoDaMensagem.findOne({ where: { conversa_id: r.conversa_id } }))!;
  await fila(filaSalesAnexo).remove(anexo.id);
  nock(CHAT)
    .get(`/rails/active_storage/${pasta}/${nome}`)
    .times(vezes)
    .reply(async () => {
      await antesDeResponder;
      return [200, Buffer.from(bytes), { 'content-type': 'application/pdf' }];
    });
  return anexo;
}

/** A first attempt whose copy file storage keeps and whose recording fails: the copy goes to arquivo_a_apagar. */
async function primeiraCopiaSemRegistro(anexoId: string, pasta: string): Promise<void> {
  const voltarARegistrar = await recusarRegistroDaCopia(banco('sales'), `/${pasta}/`);
  try {
    await expect(copiarAnexo(anexoId)).rejects.toThrow(/falha simulada/);
  } finally {
    await voltarARegistrar();
  }
}

/** The copies on the removal list, oldest listed first. */
const listadas = async () =>
  ((await banco('sales').query('SELECT arquivo_id FROM arquivo_a_apagar ORDER BY criado_em', { type: 'SELECT' })) as { arquivo_id: string }[]).map((l) => l.arquivo_id);

/**
 * A copy on the removal list that its attachment records all the same: the first attempt's
 * recording failed (the copy listed), and the retry, before the removal job ran, was answered that
 * very copy (the same Idempotency-Key replayed) and recorded it.
 */
async function copiaListadaERegistrada(pasta: string, bytes: string) {
  const nome = `${pasta}-${randomBytes(4).toString('hex')}.pdf`;
  const anexo = await anexoSemJob(pasta, nome, bytes, 2);
  await primeiraCopiaSemRegistro(anexo.id, pasta);
  expect(await copiarAnexo(anexo.id)).toEqual({ estado: 'copiado' });
  const registrado = (await AnexoDaMensagem.findByPk(anexo.id))!.arquivo_id!;
  expect(registrado).toBeTruthy();
  expect(await listadas()).toContain(registrado);
  return { anexo, nome, registrado };
}

test('a retry answered (Idempotency-Key replay) with a copy queued for removal keeps its file: the recorded copy is never removed', async () => {
  const { anexo, nome, registrado } = await copiaListadaERegistrada('orfao2', '%PDF-replay');
  // the first attempt's copy, still listed: the removal finds it recorded, keeps it and drops the line
  expect((await Arquivo.findAll({ where: { nome } })).map((a) => a.id)).toEqual([registrado]);
  await apagarCopiasPendentes();
  expect(await Arquivo.findByPk(registrado)).not.toBeNull();
  expect(await AnexoDaMensagem.findByPk(anexo.id)).toMatchObject({ arquivo_id: registrado });
  expect(await listadas()).not.toContain(registrado);
});

test("a kept copy whose attachment is deleted while its removal looks at it is listed again by that deletion, and removed by the next run, not forgotten", async () => {
  const { anexo, registrado } = await copiaListadaERegistrada('relistada', '%PDF-relistada');
  // the message's deletion under way, as registro.ts makes it: the attachment gone, its copy
  // listed again (the line is there: IGNORE), not yet committed
  const outra = await novaConexao('sales');
  let remocao: Promise<number> | undefined;
  try {
    await outra.beginTransaction();
    await outra.query('DELETE FROM anexo_da_mensagem WHERE id = ?', [anexo.id]);
    await outra.query('INSERT IGNORE INTO arquivo_a_apagar (arquivo_id, criado_em) VALUES (?, UTC_TIMESTAMP(3))', [registrado]);
    // the removal saw the copy taken (the deletion not committed) and keeps it; its line waits
    remocao = apagarCopiasPendentes();
    const bloqueada = esperarOutraConexao(outra, "the line's removal waiting on the deletion", ['DELETE FROM arquivo_a_apagar%']);
    bloqueada.catch(() => undefined); // the removal ending first (the old rule) settles the race below
    await Promise.race([remocao, bloqueada]);
    await outra.commit();
  } finally {
    await outra.end();
  }
  await remocao;
  expect(await Arquivo.findByPk(registrado)).not.toBeNull();
  expect(await listadas()).toContain(registrado);
  // the next run finds it taken by none, and removes it
  await apagarCopiasPendentes();
  expect(await Arquivo.findByPk(registrado)).toBeNull();
  expect(await listadas()).not.toContain(registrado);
});

test('a removal cut short after removing a copy an attempt recorded meanwhile (before it could copy again): the next removal finds the line, the file gone, and copies the attachment again', async () => {
  const sales = banco('sales');
  const nome = `cortada-${randomBytes(4).toString('hex')}.pdf`;
  const anexo = await anexoSemJob('cortada', nome, '%PDF-cortada', 3);
  await primeiraCopiaSemRegistro(anexo.id, 'cortada');
  const [listada] = ((await sales.query('SELECT arquivo_id FROM arquivo_a_apagar', { type: 'SELECT' })) as { arquivo_id: string }[]).map((l) => l.arquivo_id);
  // the retry records the listed copy (file storage answers it again)...
  expect(await copiarAnexo(anexo.id)).toEqual({ estado: 'copiado' });
  expect((await AnexoDaMensagem.findByPk(anexo.id))!.arquivo_id).toBe(listada);
  // ...which a removal that had read it loose just before removes, and is cut there (nothing after it ran)
  await arquivos.apagarArquivo(listada);
  expect(await apagarCopiasPendentes()).toBe(1);
  expect(await AnexoDaMensagem.findByPk(anexo.id)).toMatchObject({ arquivo_id: null, tentativas: 0 });
  expect(await sales.query('SELECT arquivo_id FROM arquivo_a_apagar WHERE arquivo_id = ?', { replacements: [listada], type: 'SELECT' })).toEqual([]);
  expect(await copiarAnexo(anexo.id)).toEqual({ estado: 'copiado' });
  const nova = (await AnexoDaMensagem.findByPk(anexo.id))!.arquivo_id!;
  expect(nova).not.toBe(listada);
  expect(await Arquivo.findByPk(nova)).not.toBeNull();
});

test('a replayed copy removed as unrecorded right after this attempt recorded it (its removal checked just before): the attachment is put back and copied anew, its attempt given back', async () => {
  const sales = banco('sales');
  const nome = `removida-${randomBytes(4).toString('hex')}.pdf`;
  const anexo = await anexoSemJob('removida', nome, '%PDF-removida', 3);
  await primeiraCopiaSemRegistro(anexo.id, 'removida');
  const listada = ((await sales.query('SELECT arquivo_id FROM arquivo_a_apagar', { type: 'SELECT' })) as { arquivo_id: string }[]).map((l) => l.arquivo_id);
  expect(listada).toHaveLength(1);
  // the removal of the listed copy as it runs beside the retry: it found no attachment holding the
  // copy (before the retry recorded it) and removes it once the retry has
  const leitura = jest.spyOn(arquivos, 'arquivoDaChave').mockImplementationOnce(async (chave) => {
    await arquivos.apagarArquivo(listada[0]);
    return jest.requireActual('../../api/sales/arquivos').arquivoDaChave(chave);
  });
  try {
    expect(await copiarAnexo(anexo.id)).toEqual({ estado: 'de_novo' });
  } finally {
    leitura.mockRestore();
  }
  // nothing failed: no error recorded, and the next attempt need not wait for the retry interval
  expect(await AnexoDaMensagem.findByPk(anexo.id)).toMatchObject({ arquivo_id: null, tentativas: 1, ultimo_erro: null, adiada_desde: null });
  expect(await esperaAntesDaCopia(anexo.id)).toBe(0);
  // the next attempt stores a new copy and records it
  expect(await copiarAnexo(anexo.id)).toEqual({ estado: 'copiado' });
  const copiado = (await AnexoDaMensagem.findByPk(anexo.id))!.arquivo_id!;
  expect(copiado).not.toBe(listada[0]);
  expect(await Arquivo.findByPk(copiado)).not.toBeNull();
});

test("a fresh copy removed by its key's clean-up as it was recorded (a second worker listed the key of a job it took over): the attachment is put back and copied anew", async () => {
  const nome = `fresca-${randomBytes(4).toString('hex')}.pdf`;
  const anexo = await anexoSemJob('fresca', nome, '%PDF-fresca', 2);
  const real = jest.requireActual('../../api/sales/arquivos') as typeof arquivos;
  // the clean-up of the key, running beside this attempt, found the copy unrecorded and removed it
  const leitura = jest.spyOn(arquivos, 'arquivoDaChave').mockImplementationOnce(async (chave) => {
    const copia = await real.arquivoDaChave(chave);
    if (copia) await real.apagarArquivo(copia);
    return real.arquivoDaChave(chave);
  });
  try {
    expect(await copiarAnexo(anexo.id)).toEqual({ estado: 'de_novo' });
  } finally {
    leitura.mockRestore();
  }
  expect(await AnexoDaMensagem.findByPk(anexo.id)).toMatchObject({ arquivo_id: null });
  expect(await esperaAntesDaCopia(anexo.id)).toBe(0);
  expect(await copiarAnexo(anexo.id)).toEqual({ estado: 'copiado' });
  expect(await Arquivo.findByPk((await AnexoDaMensagem.findByPk(anexo.id))!.arquivo_id!)).not.toBeNull();
});

test('the database stopping the recording of a copy (a statement killed) is the suite\'s failure: the attempt is given back, the copy put off, and the next attempt records the copy file storage kept', async () => {
  const nome = `morta-${randomBytes(4).toString('hex')}.pdf`;
  let travada!: () => void;
  const anexo = await anexoSemJob('morta', nome, '%PDF-morta', 2, new Promise<void>((r) => (travada = r)));
  const trava = await novaConexao('sales');
  try {
    // once the attempt is counted, the download is answered only after the attachment's row is
    // held, so the recording waits; then its statement is stopped, as a server restarting or an
    // operator's KILL would
    const copia = copiarAnexo(anexo.id);
    await esperarAte(async () => (await AnexoDaMensagem.findByPk(anexo.id))!.tentativas === 1, 'the attempt counted');
    await trava.query('START TRANSACTION');
    await trava.query('SELECT id FROM anexo_da_mensagem WHERE id = ? FOR UPDATE', [anexo.id]);
    travada();
    await esperarOutraConexao(trava, 'the recording waiting for the row', ['UPDATE `anexo_da_mensagem` SET `arquivo_id`%']);
    const [[{ id }]] = (await trava.query(
      "SELECT ID AS id FROM information_schema.PROCESSLIST WHERE DB = DATABASE() AND INFO LIKE 'UPDATE `anexo_da_mensagem` SET `arquivo_id`%'",
    )) as unknown as [{ id: number }[]];
    await trava.query(`KILL QUERY ${Number(id)}`);
    await trava.query('ROLLBACK');
    expect(await copia).toEqual({ estado: 'adiada', motivo: expect.stringMatching(/interrupted/i) });
    expect((await AnexoDaMensagem.findByPk(anexo.id))!.tentativas).toBe(0);
  } finally {
    await trava.end();
  }
  expect(await copiarAnexo(anexo.id)).toEqual({ estado: 'copiado' });
  const registrada = (await AnexoDaMensagem.findByPk(anexo.id))!;
  expect(registrada.tentativas).toBe(1);
  expect((await Arquivo.findAll({ where: { nome } })).map((a) => a.id)).toEqual([registrada.arquivo_id]);
});

test("a download host refusing the connection is the attachment's failure, not the database's (its socket error has a connection code too): the attempt is spent", async () => {
  const porta = await portaLivre();
  const r = await t.s.registrar(
    t.sistema,
    eventoDeMensagem({ conversa: idDoSuporte(), conteudo: 'segue', anexos: [{ id: idDoSuporte(), data_url: `http://127.0.0.1:${porta}/recusado.pdf`, file_type: 'file' }] }),
  );
  const anexo = (await AnexoDaMensagem.findOne({ where: { conversa_id: r.conversa_id } }))!;
  await fila(filaSalesAnexo).remove(anexo.id);
  await expect(copiarAnexo(anexo.id)).rejects.toThrow(/ECONNREFUSED/);
  expect((await AnexoDaMensagem.findByPk(anexo.id))!).toMatchObject({ tentativas: 1, adiada_desde: null });
});

test('a listed copy an attachment refers to by the time its removal comes is not removed, only taken off the list', async () => {
  const sales = banco('sales');
  const anexo = await anexoSemJob('listada', `listada-${randomBytes(4).toString('hex')}.pdf`, '%PDF-listada');
  expect(await copiarAnexo(anexo.id)).toEqual({ estado: 'copiado' });
  const registrado = (await AnexoDaMensagem.findByPk(anexo.id))!.arquivo_id!;
  // listed by a run that read it before the attachment recorded it
  await sales.query('INSERT INTO arquivo_a_apagar (arquivo_id, criado_em) VALUES (?, NOW(3))', { replacements: [registrado] });
  await apagarCopiasPendentes();
  expect(await Arquivo.findByPk(registrado)).not.toBeNull();
  expect(await sales.query('SELECT arquivo_id FROM arquivo_a_apagar WHERE arquivo_id = ?', { replacements: [registrado], type: 'SELECT' })).toEqual([]);
});

test('a removal file storage keeps refusing holds back none after it: they are removed, it stays listed, and the run fails for its retry', async () => {
  const sales = banco('sales');
  expect(await listadas()).toEqual([]);
  // copies nobody refers to any more: their attachments let go of them
  const soltos: string[] = [];
  for (const n of [1, 2, 3, 4]) {
    const anexo = await anexoSemJob('soltas', `solta-${n}-${randomBytes(4).toString('hex')}.pdf`, `%PDF-solta-${n}`);
    expect(await copiarAnexo(anexo.id)).toEqual({ estado: 'copiado' });
    soltos.push((await AnexoDaMensagem.findByPk(anexo.id))!.arquivo_id!);
    await AnexoDaMensagem.update({ arquivo_id: null }, { where: { id: anexo.id } });
  }
  // listed oldest: two ids file storage refuses (its routes take no such id), then the copies
  const recusados = ['recusado um', 'recusado dois'];
  await sales.query(
    `INSERT INTO arquivo_a_apagar (arquivo_id, criado_em) VALUES (?, NOW(3) - INTERVAL 2 MINUTE), (?, NOW(3) - INTERVAL 2 MINUTE)${', (?, NOW(3))'.repeat(soltos.length)}`,
    { replacements: [...recusados, ...soltos] },
  );
  try {
    await expect(apagarCopiasPendentes()).rejects.toThrow('2 copies could not be removed from file storage (still listed)');
    expect({ listados: (await listadas()).sort(), guardados: await Arquivo.count({ where: { id: soltos } }) }).toEqual({ listados: [...recusados].sort(), guardados: 0 });
  } finally {
    await sales.query('DELETE FROM arquivo_a_apagar WHERE arquivo_id IN (?)', { replacements: [recusados] });
  }
});

test('removals failing in a row (file storage down) stop the run, the ones tried going to the back of the list: the rest wait for its retry', async () => {
  const sales = banco('sales');
  const ids = ['recusa a', 'recusa b', 'recusa c', 'recusa d', 'recusa e'];
  await sales.query(`INSERT INTO arquivo_a_apagar (arquivo_id, criado_em) VALUES ${ids.map((_, i) => `(?, NOW(3) - INTERVAL ${10 - i} SECOND)`).join(', ')}`, { replacements: ids });
  const pedidos: string[] = [];
  const espiao = jest.spyOn(arquivos, 'apagarArquivo').mockImplementation(async (id) => {
    pedidos.push(id);
    throw new Error('file storage out of reach');
  });
  try {
    await expect(apagarCopiasPendentes()).rejects.toThrow('3 copies could not be removed');
    expect(pedidos).toEqual(ids.slice(0, 3));
    // the ones tried went to the back of the list: the next run starts with the others
    await expect(apagarCopiasPendentes()).rejects.toThrow('3 copies could not be removed');
    // (the three moved back share a moment to the millisecond, perhaps: which of them comes first is open)
    expect(pedidos.slice(3, 5)).toEqual([ids[3], ids[4]]);
    expect(ids.slice(0, 3)).toContain(pedidos[5]);
  } finally {
    espiao.mockRestore();
    await sales.query('DELETE FROM arquivo_a_apagar WHERE arquivo_id IN (?)', { replacements: [ids] });
  }
});

test('a copy recorded while its file was being removed is copied again at once, with fresh attempts, even when it had used the last one and its job is still kept', async () => {
  const sales = banco('sales');
  const anexo = await anexoSemJob('corrida', `corrida-${randomBytes(4).toString('hex')}.pdf`, '%PDF-corrida', 2);
  expect(await copiarAnexo(anexo.id)).toEqual({ estado: 'copiado' });
  const copia = (await AnexoDaMensagem.findByPk(anexo.id))!.arquivo_id!;
  // the copy's job, finished and kept (a day): a plain add of the same id would be a no-op
  const q = fila(filaSalesAnexo);
  const worker = new Worker(filaSalesAnexo.nome, async () => 'copiado', { connection: novaConexaoRedis('worker', 'teste-corrida'), prefix: config().queuePrefix });
  worker.on('error', () => undefined);
  await q.add('copiar', { anexo_id: anexo.id }, { jobId: anexo.id });
  await esperarAte(async () => (await q.getJobState(anexo.id)) === 'completed', 'the copy job finished');
  await worker.close();
  // listed for removal by a run that read it loose; the attachment records it (on its last attempt) just before it goes
  await AnexoDaMensagem.update({ arquivo_id: null }, { where: { id: anexo.id } });
  await sales.query('INSERT INTO arquivo_a_apagar (arquivo_id, criado_em) VALUES (?, NOW(3))', { replacements: [copia] });
  const apagar = arquivos.apagarArquivo;
  const espiao = jest.spyOn(arquivos, 'apagarArquivo').mockImplementation(async (id) => {
    await AnexoDaMensagem.update({ arquivo_id: copia, tentativas: TENTATIVAS_DE_COPIA }, { where: { id: anexo.id } });
    return apagar(id);
  });
  try {
    expect(await apagarCopiasPendentes()).toBe(1);
  } finally {
    espiao.mockRestore();
  }
  expect(await Arquivo.findByPk(copia)).toBeNull();
  const depois = (await AnexoDaMensagem.findByPk(anexo.id))!;
  expect({ arquivo_id: depois.arquivo_id, tentativas: depois.tentativas, job: await q.getJobState(anexo.id) }).toEqual({ arquivo_id: null, tentativas: 0, job: 'waiting' });
  await q.remove(anexo.id);
  expect(await copiarAnexo(anexo.id)).toEqual({ estado: 'copiado' });
});

test('a removal run that takes a full list queues another at once: what is behind it does not wait for the sweep', async () => {
  const sales = banco('sales');
  const ids = ['cheia a', 'cheia b', 'cheia c'];
  await sales.query(`INSERT INTO arquivo_a_apagar (arquivo_id, criado_em) VALUES ${ids.map((_, i) => `(?, NOW(3) - INTERVAL ${10 - i} SECOND)`).join(', ')}`, { replacements: ids });
  const q = fila(filaSalesAnexo);
  const remocoes = async () => (await q.getJobs(['waiting', 'delayed', 'prioritized'])).filter((j) => j.name === 'apagar');
  const porVez = REMOCAO.porVez;
  REMOCAO.porVez = 2;
  // file storage's side of each removal answered at once: what is looked at here is the list
  const espiao = jest.spyOn(arquivos, 'apagarArquivo').mockResolvedValue(undefined as never);
  try {
    for (const j of await remocoes()) await j.remove();
    expect(await apagarCopiasPendentes()).toBe(2);
    expect(await remocoes()).toHaveLength(1);
    for (const j of await remocoes()) await j.remove();
    // the last one: a list not full queues none
    expect(await apagarCopiasPendentes()).toBe(1);
    expect(await remocoes()).toEqual([]);
  } finally {
    REMOCAO.porVez = porVez;
    espiao.mockRestore();
    await sales.query('DELETE FROM arquivo_a_apagar WHERE arquivo_id IN (?)', { replacements: [ids] });
  }
});
