import { createHash } from 'node:crypto';
import { finished, Readable, Transform, TransformCallback } from 'node:stream';
import { QueryTypes, UniqueConstraintError } from 'sequelize';
import { config } from '../../config';
import { banco, dataSql } from '../../lib/database';
import { logger } from '../../lib/logger';
import { Arquivo } from '../../models/files';
import { iso, novoId } from '../../models/shared/base';
import { dadosInvalidos, ErroDeDominio, naoEncontrado, referenciaInvalida } from '../shared/errors';
import { offset, PaginaNumerada } from '../shared/paginacao';
import { ehTipoMime, TIPO_MIME_PADRAO } from '../shared/tipo-mime';
import { armazenamento } from './armazenamento';
import { FORMA_DA_CHAVE } from './schemas';
import { conferirAssinatura, urlDeDownload } from './url-assinada';

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
 */
export async function enviarArquivo(aplicativoId: string, e: Envio): Promise<{ arquivo: ArquivoJson; repetido: boolean }> {
  const tipo = tipoMime(e.tipoMime);
  const chave = chaveDeIdempotencia(e.chave);
  const id = novoId();
  const medidor = new Medidor(config().files.tamanhoMaximoBytes);
  // pipe, not pipeline: a failed upload must not destroy the request, whose socket still carries the answer
  e.corpo.pipe(medidor);
  finished(e.corpo, (err) => {
    if (err) medidor.destroy(dadosInvalidos('O envio foi interrompido antes do fim do corpo.'));
  });
  await armazenamento().gravar(id, medidor);
  const novo = { id, aplicativo_id: aplicativoId, nome: e.nome, tipo_mime: tipo, tamanho: medidor.tamanho, sha256: medidor.sha256() };
  let guardado = false;
  try {
    const r = await registrar(novo, chave);
    guardado = !r.repetido;
    return r;
  } finally {
    // a repeat, a refused key or a failed insert: the bytes just written are nobody's
    if (!guardado) await descartarBytesNaoGuardados(id);
  }
}

/** Inserts an upload tries before giving up on a key whose files keep being deleted under it. */
const TENTATIVAS_DA_CHAVE = 3;

/** The upload's row, or the key's first file when this upload repeats it. */
async function registrar(
  novo: { id: string; aplicativo_id: string; nome: string; tipo_mime: string; tamanho: number; sha256: string },
  chave: string | undefined,
): Promise<{ arquivo: ArquivoJson; repetido: boolean }> {
  for (let tentativa = 1; ; tentativa++) {
    try {
      return { arquivo: arquivoJson(await Arquivo.create({ ...novo, chave_de_idempotencia: chave ?? null })), repetido: false };
    } catch (err) {
      if (!chave || !(err instanceof UniqueConstraintError)) throw err;
      const primeiro = await Arquivo.findOne({ where: { aplicativo_id: novo.aplicativo_id, chave_de_idempotencia: chave } });
      if (!primeiro) {
        // deleted between the insert that met the key and this read: the key is free again, so
        // this upload takes it as a fresh one (bounded: each turn needs another delete to race it)
        if (tentativa < TENTATIVAS_DA_CHAVE) continue;
        throw err;
      }
      if (primeiro.sha256 !== novo.sha256 || primeiro.nome !== novo.nome || primeiro.tipo_mime !== novo.tipo_mime) {
        throw referenciaInvalida('Idempotency-Key', 'Esta Idempotency-Key já foi usada para outro arquivo (outros bytes, nome ou tipo).');
      }
      return { arquivo: arquivoJson(primeiro), repetido: true };
    }
  }
}

/** The bytes of an upload that was not stored: no row points to them; a failure leaves them, logged. */
async function descartarBytesNaoGuardados(id: string): Promise<void> {
  await armazenamento()
    .remover(id)
    .catch((erroAoRemover) => log.error({ err: erroAoRemover, arquivo_id: id }, 'bytes órfãos: remoção falhou'));
}

/** GET /arquivo: the caller's files, most recent first. */
export async function listarArquivos(aplicativoId: string, pagina: number, tamanho: number): Promise<PaginaNumerada<ArquivoJson>> {
  const { rows, count } = await Arquivo.findAndCountAll({
    where: { aplicativo_id: aplicativoId },
    order: [
      ['criado_em', 'DESC'],
      ['id', 'DESC'],
    ],
    offset: offset(pagina, tamanho),
    limit: tamanho,
  });
  return { itens: rows.map(arquivoJson), pagina, tamanho, total: count };
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
 * DELETE /arquivo/{id}: the row goes, and in the same transaction its bytes are written down as owed
 * a removal (arquivo_a_apagar); the bytes are removed after the commit. Removed before it, a crash or
 * a lost connection at the commit kept a listed file whose bytes were gone; now whatever stops
 * between the commit and the removal leaves it to the sweep (varrerBytesAApagar), and the file is
 * already gone from every route.
 */
export async function deletarArquivo(aplicativoId: string, id: string): Promise<void> {
  const sequelize = banco('files');
  await sequelize.transaction(async (transaction) => {
    const a = await Arquivo.findOne({ where: { id, aplicativo_id: aplicativoId }, transaction, lock: transaction.LOCK.UPDATE });
    if (!a) throw naoEncontrado('Arquivo');
    await a.destroy({ transaction });
    await sequelize.query('INSERT IGNORE INTO arquivo_a_apagar (arquivo_id, criado_em) VALUES (?, ?)', { replacements: [id, dataSql(new Date())], transaction });
  });
  // the client's file is gone already: a storage failure here is the sweep's to finish, not a 500
  await removerBytesDevidos(id).catch((err) => log.warn({ err, arquivo_id: id }, 'remoção dos bytes adiada para a varredura'));
}

/** A deleted file's bytes, then the line that owed their removal (arquivo_a_apagar). */
async function removerBytesDevidos(id: string): Promise<void> {
  await armazenamento().remover(id);
  await banco('files').query('DELETE FROM arquivo_a_apagar WHERE arquivo_id = ?', { replacements: [id] });
}

/** How many owed removals the sweep reads at a time. */
const LOTE_DA_VARREDURA = 500;

/**
 * Removes the bytes of deleted files whose removal did not finish (a crash after the commit, the
 * storage out of reach). Removing twice is harmless, so processes sweeping together need no lock.
 * Reads the owed removals in id order, page after page, past those that fail again (they stay for
 * the next run): a few the storage keeps refusing never hold up the ones behind them. Returns how
 * many were removed.
 */
export async function varrerBytesAApagar(lote = LOTE_DA_VARREDURA): Promise<number> {
  let removidos = 0;
  for (let depoisDe = ''; ; ) {
    const pendentes = await banco('files').query<{ arquivo_id: string }>(
      'SELECT arquivo_id FROM arquivo_a_apagar WHERE arquivo_id > ? ORDER BY arquivo_id LIMIT ?',
      { replacements: [depoisDe, lote], type: QueryTypes.SELECT },
    );
    for (const { arquivo_id } of pendentes) {
      try {
        await removerBytesDevidos(arquivo_id);
        removidos++;
      } catch (err) {
        log.warn({ err, arquivo_id }, 'varredura: remoção dos bytes falhou; fica para a próxima');
      }
    }
    if (pendentes.length < lote) break;
    depoisDe = pendentes[pendentes.length - 1].arquivo_id;
  }
  if (removidos) log.warn({ removidos }, 'bytes de arquivos apagados removidos pela varredura');
  return removidos;
}

/**
 * GET /arquivo/{id}/conteudo: the signature stands for a token, so it is checked before anything
 * is read (403 when wrong or expired); then the file's bytes as a stream.
 */
export async function abrirConteudo(id: string, expira: number, assinatura: string): Promise<Conteudo> {
  conferirAssinatura(id, expira, assinatura);
  const a = await Arquivo.findByPk(id);
  if (!a) throw naoEncontrado('Arquivo');
  const bytes = await armazenamento().ler(id);
  if (!bytes) {
    log.error({ arquivo_id: id }, 'arquivo sem bytes no armazenamento');
    throw naoEncontrado('Arquivo');
  }
  return { nome: a.nome, tipo_mime: a.tipo_mime, tamanho: Number(a.tamanho), sha256: a.sha256, bytes };
}
