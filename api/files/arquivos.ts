import { createHash } from 'node:crypto';
import { finished, Readable, Transform, TransformCallback } from 'node:stream';
import { col, Op, QueryTypes, Transaction, UniqueConstraintError, where, WhereOptions } from 'sequelize';
import { config } from '../../config';
import { AGORA_NO_BANCO, banco, LEITURA_CONFIRMADA, repetirEmConflito } from '../../lib/database';
import { logger } from '../../lib/logger';
import { Arquivo } from '../../models/files';
import { iso, novoId } from '../../models/shared/base';
import { dadosInvalidos, ErroDeDominio, idempotencyKeyReusada, naoEncontrado } from '../shared/errors';
import { offset, PaginaNumerada } from '../shared/paginacao';
import { ehTipoMime, mesmoTipoMime, TIPO_MIME_PADRAO } from '../shared/tipo-mime';
import { armazenamento, vencimentoDoEnvioMs } from './armazenamento';
import { totalDeArquivos } from './contagem';
import { armazenamentoAindaConferido } from './marca';
import { FORMA_DA_CHAVE } from './schemas';
import { urlDeDownload } from './url-assinada';

const log = logger('files');

/** A file as every route answers it; `url` is a fresh signed download URL (15 minutes). */
export interface ArquivoJson {
  id: string;
  nome: string;
  tipo_mime: string;
  tamanho: number;
  sha256: string;
  criado_em: string;
  url: string;
}

export interface Envio {
  /** in NFC, as the route's schema leaves it */
  nome: string;
  /** the request's Content-Type; absent means application/octet-stream */
  tipoMime?: string;
  corpo: Readable;
  /** the request's Idempotency-Key header, as sent (chaveDeIdempotencia checks it) */
  chave?: string;
}

/**
 * The Idempotency-Key header (IETF draft "The Idempotency-Key HTTP Header Field"): a string of 1 to
 * 255 visible ASCII characters, bare or in double quotes (a structured-field string). Absent:
 * undefined; anything else is a 400.
 */
export function chaveDeIdempotencia(valor: string | undefined): string | undefined {
  if (valor === undefined) return undefined;
  const chave = /^"(.*)"$/.exec(valor.trim())?.[1] ?? valor.trim();
  if (!FORMA_DA_CHAVE.test(chave)) {
    throw dadosInvalidos('Idempotency-Key inválida.', [{ campo: 'Idempotency-Key', mensagem: 'de 1 a 255 caracteres ASCII visíveis' }]);
  }
  return chave;
}

export interface Conteudo {
  nome: string;
  tipo_mime: string;
  tamanho: number;
  sha256: string;
  bytes: Readable;
}

function arquivoJson(a: Arquivo): ArquivoJson {
  return {
    id: a.id,
    nome: a.nome,
    tipo_mime: a.tipo_mime,
    tamanho: Number(a.tamanho),
    sha256: a.sha256,
    criado_em: iso(a.criado_em)!,
    url: urlDeDownload(a.id),
  };
}

/** The Content-Type as stored and served back: type and subtype in lower case, parameters as sent. */
export function tipoMime(valor: string | undefined): string {
  const v = valor?.trim();
  if (!v) return TIPO_MIME_PADRAO;
  if (!ehTipoMime(v)) {
    throw dadosInvalidos('Content-Type inválido.', [{ campo: 'Content-Type', mensagem: 'use um tipo MIME como image/png (até 255 caracteres)' }]);
  }
  return v.replace(/^[^;]+/, (essencia) => essencia.trim().toLowerCase());
}

export const corpoGrandeDemais = () =>
  new ErroDeDominio('corpo_grande_demais', `O arquivo passa do limite de ${config().files.tamanhoMaximoBytes / 1048576} MB.`);

/** Counts and hashes the bytes on their way to the storage; one byte past the limit fails the upload. */
class Medidor extends Transform {
  tamanho = 0;
  private readonly hash = createHash('sha256');

  constructor(private readonly limite: number) {
    super();
  }

  override _transform(pedaco: Buffer, _codificacao: BufferEncoding, pronto: TransformCallback): void {
    this.tamanho += pedaco.length;
    if (this.tamanho > this.limite) return pronto(corpoGrandeDemais());
    this.hash.update(pedaco);
    pronto(null, pedaco);
  }

  sha256(): string {
    return this.hash.digest('hex');
  }
}

/**
 * POST /arquivo: streams the body to the storage under a new id, never holding the whole file,
 * measuring size and SHA-256 on the way; then records the metadata. Past the size limit, or when
 * the client stops sending, nothing stays stored. With an Idempotency-Key the application already
 * used for a file it still has, the upload is a repeat: the same bytes, name and type answer that
 * file (`repetido`) and the new copy is dropped; anything different is a 422.
 *
 * Before a byte is written, the id is owed a removal (arquivo_a_apagar) due once the upload can no
 * longer finish (vencimentoDoEnvioMs); the row's insert clears that line in its own transaction. A
 * stop anywhere in between (a crash, the connection lost, a removal that fails after a refusal)
 * leaves the bytes to the sweep (varrerBytesAApagar), never to nobody.
 */
export async function enviarArquivo(aplicativoId: string, e: Envio): Promise<{ arquivo: ArquivoJson; repetido: boolean }> {
  const tipo = tipoMime(e.tipoMime);
  const chave = chaveDeIdempotencia(e.chave);
  await armazenamentoAindaConferido().catch((err) => {
    throw new ErroDeDominio('indisponivel', 'O armazenamento de arquivos está indisponível; tente de novo.', undefined, { causa: err });
  });
  const id = novoId();
  await deverRemocao(id, vencimentoDoEnvioMs());
  const medidor = new Medidor(config().files.tamanhoMaximoBytes);
  // pipe, not pipeline: a failed upload must not destroy the request, whose socket still carries the answer
  e.corpo.pipe(medidor);
  finished(e.corpo, (err) => {
    if (err) medidor.destroy(dadosInvalidos('O envio foi interrompido antes do fim do corpo.'));
  });
  let guardado = false;
  try {
    await armazenamento().gravar(id, medidor);
    const novo = { id, aplicativo_id: aplicativoId, nome: e.nome, tipo_mime: tipo, tamanho: medidor.tamanho, sha256: medidor.sha256() };
    const r = await registrar(novo, chave);
    guardado = !r.repetido;
    return r;
  } finally {
    // a failed write, a repeat, a refused key or a failed insert: the bytes (if any) are nobody's
    if (!guardado) await descartarBytesNaoGuardados(id);
  }
}

/** Inserts an upload tries before giving up on a key whose files keep being deleted under it. */
const TENTATIVAS_DA_CHAVE = 3;

/**
 * The upload's row, inserted in the transaction that takes its bytes off the owed list, or the
 * key's first file when this upload repeats it. READ COMMITTED: a line the sweep already took is
 * found missing without locking the gap where it was, which would hold up every other upload's
 * line and every deletion's around it; and what the sweep left of the bytes is removed once the
 * transaction is over, holding neither a lock nor a connection while the storage answers.
 */
async function registrar(
  novo: { id: string; aplicativo_id: string; nome: string; tipo_mime: string; tamanho: number; sha256: string },
  chave: string | undefined,
): Promise<{ arquivo: ArquivoJson; repetido: boolean }> {
  const sequelize = banco('files');
  for (let tentativa = 1; ; tentativa++) {
    try {
      // uploads of one key waiting on its deletion's commit check the key together, and then one of
      // them may be rolled back for a deadlock: written again, it meets the other's row (a repeat)
      const arquivo = await repetirEmConflito('registro de arquivo enviado', () =>
        sequelize.transaction(LEITURA_CONFIRMADA, async (transaction) => {
          const [{ affectedRows }] = (await sequelize.query('DELETE FROM arquivo_a_apagar WHERE arquivo_id = ?', {
            replacements: [novo.id],
            transaction,
          })) as unknown as [{ affectedRows: number }];
          if (!affectedRows) return null;
          return Arquivo.create({ ...novo, chave_de_idempotencia: chave ?? null }, { transaction });
        }),
      );
      if (!arquivo) return await bytesVarridos(novo.id);
      return { arquivo: arquivoJson(arquivo), repetido: false };
    } catch (err) {
      if (!chave || !(err instanceof UniqueConstraintError)) throw err;
      const primeiro = await Arquivo.findOne({ where: pelaChave(novo.aplicativo_id, chave) });
      if (!primeiro) {
        // deleted between the insert that met the key and this read: the key is free again, so
        // this upload takes it as a fresh one (bounded: each turn needs another delete to race it)
        if (tentativa < TENTATIVAS_DA_CHAVE) continue;
        throw err;
      }
      if (primeiro.sha256 !== novo.sha256 || primeiro.nome !== novo.nome || !mesmoTipoMime(primeiro.tipo_mime, novo.tipo_mime)) {
        throw idempotencyKeyReusada('Esta Idempotency-Key já foi usada para outro arquivo (outros bytes, nome ou tipo).');
      }
      return { arquivo: arquivoJson(primeiro), repetido: true };
    }
  }
}

/**
 * The upload's owed line was gone when its row came: the sweep took its bytes as abandoned (the
 * upload ran past vencimentoDoEnvioMs). No row is written; whatever the sweep left of the bytes
 * (it may have run before they were in place) is removed here, and the upload fails.
 */
async function bytesVarridos(id: string): Promise<never> {
  await armazenamento()
    .remover(id)
    .catch((err) => log.error({ err, arquivo_id: id }, 'bytes órfãos: remoção falhou'));
  throw new Error(`upload ${id} outlived its deadline: the sweep took its bytes`);
}

/**
 * The bytes of an upload that was not stored, with the line that owed them; a failure leaves both
 * to the sweep. Only while the line is there: when the insert's commit failed at the last step it
 * may have happened after all, and then the line is gone and the bytes are the new file's.
 */
async function descartarBytesNaoGuardados(id: string): Promise<void> {
  await removerBytesDevidos(id).catch((err) => log.warn({ err, arquivo_id: id }, 'bytes de envio não guardado ficam para a varredura'));
}

/**
 * GET /arquivo: the caller's files, most recent first. The page's ids are read from the index of
 * the application's live files alone, then their rows: skipping the earlier pages by whole rows
 * cost 2.2 s at the 1,000th page of 50 of a million files, 24 s at the 10,000th (docs/desempenho.md).
 */
export async function listarArquivos(aplicativoId: string, pagina: number, tamanho: number): Promise<PaginaNumerada<ArquivoJson>> {
  const [total, arquivos] = await Promise.all([
    totalDeArquivos(aplicativoId),
    banco('files').query(
      `SELECT a.* FROM (
         SELECT id FROM arquivo WHERE aplicativo_id = ? AND deletado_em IS NULL ORDER BY criado_em DESC, id DESC LIMIT ?, ?
       ) p JOIN arquivo a ON a.id = p.id ORDER BY a.criado_em DESC, a.id DESC`,
      { replacements: [aplicativoId, offset(pagina, tamanho), tamanho], model: Arquivo, mapToModel: true },
    ),
  ]);
  return { itens: arquivos.map(arquivoJson), pagina, tamanho, total };
}

/**
 * GET /arquivo/filtro?ids=: the caller's files among these ids, each with a fresh URL, in the order
 * asked; ids of another application or of no file are left out (their existence is never revealed).
 */
export async function arquivosPorIds(aplicativoId: string, ids: string[]): Promise<ArquivoJson[]> {
  const achados = await Arquivo.findAll({ where: { id: ids, aplicativo_id: aplicativoId } });
  const porId = new Map(achados.map((a) => [a.id, a]));
  return ids.flatMap((id) => (porId.has(id) ? [arquivoJson(porId.get(id)!)] : []));
}

/**
 * An application's live file of an Idempotency-Key, read from the key's unique index: on its
 * generated column `chave_viva` (files migration 0005), which the database does not put in the
 * place of the key's own column by itself.
 */
const pelaChave = (aplicativoId: string, chave: string): WhereOptions => ({
  aplicativo_id: aplicativoId,
  [Op.and]: [where(col('chave_viva'), chave)],
});

/**
 * GET /arquivo/filtro?chave=: the caller's file uploaded with that Idempotency-Key while it exists
 * (a list of one, or empty), with a fresh URL: a client whose upload's answer was lost finds the
 * file without sending the bytes again, to keep it or delete it. Another application's key is
 * never matched (keys are per application).
 */
export async function arquivosPelaChave(aplicativoId: string, chave: string): Promise<ArquivoJson[]> {
  const a = await Arquivo.findOne({ where: pelaChave(aplicativoId, chave) });
  return a ? [arquivoJson(a)] : [];
}

/** Another application's file is answered exactly as one that does not exist. */
async function doAplicativo(aplicativoId: string, id: string): Promise<Arquivo> {
  const a = await Arquivo.findOne({ where: { id, aplicativo_id: aplicativoId } });
  if (!a) throw naoEncontrado('Arquivo');
  return a;
}

/** GET /arquivo/{id}: metadata and a fresh signed URL. */
export async function arquivoPorId(aplicativoId: string, id: string): Promise<ArquivoJson> {
  return arquivoJson(await doAplicativo(aplicativoId, id));
}

/**
 * DELETE /arquivo/{id}: the row is marked deleted (DESIGN §4; its Idempotency-Key, unique among
 * live files only, may name a new upload) and, in the same transaction, its bytes are written down
 * as owed a removal (arquivo_a_apagar); the bytes are removed after the commit. Removed before it,
 * a crash or a lost connection at the commit kept a listed file whose bytes were gone; now whatever
 * stops between the commit and the removal leaves it to the sweep (varrerBytesAApagar), and the
 * file is already gone from every route.
 */
export async function deletarArquivo(aplicativoId: string, id: string): Promise<void> {
  await banco('files').transaction(async (transaction) => {
    const a = await Arquivo.findOne({ where: { id, aplicativo_id: aplicativoId }, transaction, lock: transaction.LOCK.UPDATE });
    if (!a) throw naoEncontrado('Arquivo');
    await a.destroy({ transaction });
    // due at once (an upload's line, due later, is cleared by the row's insert: none is here)
    await deverRemocao(id, 0, transaction);
  });
  // the client's file is gone already: a storage failure here is the sweep's to finish, not a 500
  await removerBytesDevidos(id).catch((err) => log.warn({ err, arquivo_id: id }, 'remoção dos bytes adiada para a varredura'));
}

/**
 * Writes down the bytes of `id` as owed a removal, due `emMs` from now by the database's clock
 * (arquivo_a_apagar), the one the sweep reads it with: by each process's own, an upload written by
 * a process whose clock ran behind the sweeping one's would lose its bytes while still in progress.
 */
async function deverRemocao(id: string, emMs: number, transaction?: Transaction): Promise<void> {
  await banco('files').query(
    `INSERT IGNORE INTO arquivo_a_apagar (arquivo_id, criado_em, remover_apos)
     VALUES (?, ${AGORA_NO_BANCO}, ${AGORA_NO_BANCO} + INTERVAL ? MICROSECOND)`,
    { replacements: [id, emMs * 1000], transaction },
  );
}

/** A line of arquivo_a_apagar that is due, by the database's clock (deverRemocao). */
const VENCIDA = `remover_apos <= ${AGORA_NO_BANCO}`;

/**
 * The bytes a line of arquivo_a_apagar owes, then the line, under that line's lock: an upload's
 * insert, which clears its line in its own transaction, waits for a removal under way and then
 * finds the line gone (bytesVarridos), so no row ever commits over removed bytes. With `soVencida`,
 * only a line due (the sweep). Whether a line was there to act on.
 */
async function removerBytesDevidos(id: string, soVencida = false): Promise<boolean> {
  const sequelize = banco('files');
  return sequelize.transaction(LEITURA_CONFIRMADA, async (transaction) => {
    const [linha] = await sequelize.query(
      `SELECT arquivo_id FROM arquivo_a_apagar WHERE arquivo_id = ?${soVencida ? ` AND ${VENCIDA}` : ''} FOR UPDATE`,
      { replacements: [id], type: QueryTypes.SELECT, transaction },
    );
    if (!linha) return false;
    // a store that is no longer the one the start found would count the bytes as removed
    await armazenamentoAindaConferido();
    await armazenamento().remover(id);
    await sequelize.query('DELETE FROM arquivo_a_apagar WHERE arquivo_id = ?', { replacements: [id], transaction });
    return true;
  });
}

/** How many owed removals the sweep reads at a time. */
const LOTE_DA_VARREDURA = 500;

/**
 * Removes the owed bytes that are due (remover_apos): a deleted file's whose removal did not finish
 * (a crash after the commit, the storage out of reach), at once; an upload's that never got its row
 * (a crash or a lost connection between the bytes and the row, a failed removal after a refusal),
 * once the upload can no longer finish, so one in progress is never touched. Each removal holds its
 * line (removerBytesDevidos), so processes sweeping together act once on each. Reads the due lines
 * in id order, page after page, past those that fail again (they stay for the next run): a few the
 * storage keeps refusing never hold up the ones behind them. Returns how many were removed; after
 * each page, tells `aoProgredir` how many were read and removed so far. Asked to stop (`sinal`, a
 * worker's shutdown), it stops between two removals: the next run takes up what is left.
 */
export async function varrerBytesAApagar(
  lote = LOTE_DA_VARREDURA,
  aoProgredir: (p: { lidos: number; removidos: number }) => void = () => undefined,
  sinal?: AbortSignal,
): Promise<number> {
  let removidos = 0;
  let lidos = 0;
  for (let depoisDe = ''; !sinal?.aborted; ) {
    const pendentes = await banco('files').query<{ arquivo_id: string }>(
      `SELECT arquivo_id FROM arquivo_a_apagar WHERE arquivo_id > ? AND ${VENCIDA} ORDER BY arquivo_id LIMIT ?`,
      { replacements: [depoisDe, lote], type: QueryTypes.SELECT },
    );
    for (const { arquivo_id } of pendentes) {
      if (sinal?.aborted) break;
      lidos++;
      try {
        if (await removerBytesDevidos(arquivo_id, true)) removidos++;
      } catch (err) {
        log.warn({ err, arquivo_id }, 'varredura: remoção dos bytes falhou; fica para a próxima');
      }
    }
    aoProgredir({ lidos, removidos });
    if (pendentes.length < lote) break;
    depoisDe = pendentes[pendentes.length - 1].arquivo_id;
  }
  if (removidos) log.warn({ removidos }, 'bytes devidos (arquivos apagados, envios sem registro) removidos pela varredura');
  return removidos;
}

/** GET /arquivo/{id}/conteudo, once its link's signature held (conferirLink): the file's bytes as a stream. */
export async function abrirConteudo(id: string): Promise<Conteudo> {
  const a = await Arquivo.findByPk(id);
  if (!a) throw naoEncontrado('Arquivo');
  const bytes = await armazenamento().ler(id);
  if (!bytes) {
    // a delete that committed between the read of the row and this one is a file gone, a plain
    // 404; only a row still there without its bytes is a fault
    if (await Arquivo.findByPk(id)) log.error({ arquivo_id: id }, 'arquivo sem bytes no armazenamento');
    throw naoEncontrado('Arquivo');
  }
  return { nome: a.nome, tipo_mime: a.tipo_mime, tamanho: Number(a.tamanho), sha256: a.sha256, bytes };
}
