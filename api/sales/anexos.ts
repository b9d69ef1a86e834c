import { pipeline, Readable, Transform, TransformCallback } from 'node:stream';
import { BaseError, literal, Op, Transaction, WhereOptions } from 'sequelize';
import { config } from '../../config';
import { AGORA_NO_BANCO, banco, bancoIndisponivel, impasseDeTravas, lerLinhas } from '../../lib/database';
import { comCausa } from '../../lib/erros';
import { logger } from '../../lib/logger';
import { AnexoDaMensagem, ConfigSystem, Conversa } from '../../models/sales';
import { fila, reenfileirar } from '../../queues/fila';
import { esperaEntreTentativas, filaSalesAnexo, TENTATIVAS_DE_COPIA } from '../../queues/sales-anexo';
import { apagarArquivo, arquivoDaChave, ArquivoGrandeDemais, ArquivoGuardado, FalhaDoNossoLado, guardarArquivo, tokenDaSales, urlsDosArquivos } from './arquivos';
import { acessoAoSuporte } from './config-system';
import { baixarAnexo } from './download';

const log = logger('sales-anexo');

/** How long one copy may take, download and upload together. */
const PRAZO_DA_COPIA_MS = 120_000;

/**
 * How long a listed key (chave_a_apagar) is looked up again before its line goes: an upload of the
 * key begun before the line was written (the conversation deleted during an attempt) may still be
 * storing its file, and an attempt lasts at most twice PRAZO_DA_COPIA_MS (its download's deadline,
 * then its upload's), well within this.
 */
const PROCURA_DA_CHAVE_MS = 10 * 60_000;

/** The Idempotency-Key of an attachment's copy in file storage: `anexo-<id>`. */
const PREFIXO_DA_CHAVE = 'anexo-';

/**
 * SQL that lists for clean-up (chave_a_apagar) the keys of the attachments `a` that `de` reads (a
 * FROM and its WHERE) with no copy recorded: an attempt's upload may have been stored with its
 * answer lost, and no attempt will come to claim it once the attachment is deleted or its copy
 * given up. A key listed again takes the new moment (PROCURA_DA_CHAVE_MS counts from it).
 */
export const listarChavesSemCopia = (de: string) =>
  `INSERT INTO chave_a_apagar (chave, criado_em)
     SELECT CONCAT('${PREFIXO_DA_CHAVE}', a.id), ${AGORA_NO_BANCO} FROM ${de} AND a.arquivo_id IS NULL
   ON DUPLICATE KEY UPDATE criado_em = ${AGORA_NO_BANCO}`;

const jobsDeCopia = (ids: string[]) => ids.map((id) => ({ name: 'copiar', data: { anexo_id: id }, opts: { jobId: id } }));

/** After the webhook's commit: one copy job per new attachment (jobId = its id, so never two). */
export async function enfileirarCopias(ids: string[]): Promise<void> {
  if (!ids.length) return;
  try {
    await fila(filaSalesAnexo).addBulk(jobsDeCopia(ids));
  } catch (err) {
    log.warn({ erro: (err as Error).message, anexos: ids }, 'cópias ficam para a varredura');
  }
}

/**
 * Changes attachments, their `atualizado_em` written on the database's clock (as the webhook's
 * insert writes it), which is the one the sweep compares it with.
 */
function atualizarAnexos(valores: Partial<Record<keyof AnexoDaMensagem, unknown>>, where: WhereOptions<AnexoDaMensagem>, transaction?: Transaction) {
  return AnexoDaMensagem.update({ ...valores, atualizado_em: literal(AGORA_NO_BANCO) }, { where, transaction, silent: true });
}

/**
 * Attachments whose copy never reached the queue (Redis down at the time), or whose job ended
 * without its attempts (failed after stalling twice), go back to it, a minute after they were last
 * changed by the database's clock: by the sweeping process's own, an attachment written by a
 * process whose clock ran ahead waited that much longer. `limite` of them at a time, the longest
 * unchanged first: a copy with a job (failing, or put off on our side) changes at each run, every
 * SALES_ANEXO_RETRY_MS, while one whose job was lost does not change at all, so within one such
 * interval it comes before them however many wait. Read by age instead, more than `limite` copies
 * put off (their jobs delayed, so the sweep adds nothing) hid any newer attachment whose job was
 * lost, for as long as they waited.
 */
export async function varrerAnexos(limite = 1000): Promise<number> {
  const esquecidos = await AnexoDaMensagem.findAll({
    where: {
      arquivo_id: null,
      tentativas: { [Op.lt]: TENTATIVAS_DE_COPIA },
      parada: false,
      atualizado_em: { [Op.lt]: literal(`${AGORA_NO_BANCO} - INTERVAL 1 MINUTE`) },
    },
    attributes: ['id'],
    order: [
      ['atualizado_em', 'ASC'],
      ['id', 'ASC'],
    ],
    limit: limite,
  });
  await reenfileirar(filaSalesAnexo, jobsDeCopia(esquecidos.map((a) => a.id)));
  return esquecidos.length;
}

/** `retry-attachment-copies --conversa` named no live conversation: nothing was changed. */
export class RetomadaRecusada extends Error {}

/** Copies given new attempts per statement (and per add to the queue). */
const LOTE_DA_RETOMADA = 1000;

/**
 * `suite retry-attachment-copies [--conversa <id>]`: copies stopped (no file, and `tentativas` at
 * the maximum after their own failures, or `parada` for a file too large for file storage) of live
 * messages get a fresh set (`tentativas` 0; `parada`, `adiada_desde` and `ultima_tentativa_em`
 * cleared) and are enqueued now, so an operator can retry them once the cause is gone (a limit
 * raised, the platform serving again) without editing the database. Attempts first, then the
 * queue: a job run in between would find them spent. Should the queue fail, the sweep enqueues
 * them within minutes (their `tentativas` is below the maximum now, and they are no longer
 * stopped). Run again, it finds none of them: copies made, or still trying (their last attempt
 * running, too), are not touched. Answers how many it gave new attempts.
 */
export async function retomarCopiasEsgotadas(conversaId?: string, lote = LOTE_DA_RETOMADA): Promise<number> {
  if (conversaId !== undefined && !(await Conversa.findByPk(conversaId, { attributes: ['id'] }))) {
    throw new RetomadaRecusada(`conversation ${conversaId} not found (or deleted); nothing was changed`);
  }
  const sales = banco('sales');
  let retomadas = 0;
  // by id, past the last page: a copy retried here that fails at once (too large again) and stops
  // is not taken twice in one run
  let depoisDe = '';
  for (;;) {
    const pagina = await lerLinhas<{ id: string }>(
      sales,
      `SELECT a.id FROM anexo_da_mensagem a
         JOIN conversa c ON c.id = a.conversa_id AND c.deletado_em IS NULL
         JOIN conversa_mensagem m ON m.conversa_id = a.conversa_id AND m.id = a.mensagem_id AND NOT m.apagada
        WHERE a.arquivo_id IS NULL AND (a.tentativas >= ? OR a.parada) AND a.id > ? ${conversaId !== undefined ? 'AND a.conversa_id = ?' : ''}
        ORDER BY a.id LIMIT ${Number(lote)}`,
      [TENTATIVAS_DE_COPIA, depoisDe, ...(conversaId !== undefined ? [conversaId] : [])],
    );
    if (!pagina.length) break;
    depoisDe = pagina[pagina.length - 1].id;
    // a copy's last attempt is counted as it starts: one whose job is still on it is not done yet
    // (re-armed under it, that attempt failing would end its job for good with a fresh count)
    const estados = await Promise.all(pagina.map((a) => fila(filaSalesAnexo).getJobState(a.id)));
    const ids = pagina.filter((_, i) => estados[i] !== 'active').map((a) => a.id);
    if (!ids.length) continue;
    // checked again as it is written: one copied or re-armed meanwhile is left as it is
    const [n] = await atualizarAnexos(
      { tentativas: 0, parada: false, adiada_desde: null, ultima_tentativa_em: null },
      { id: ids, arquivo_id: null, [Op.or]: [{ tentativas: { [Op.gte]: TENTATIVAS_DE_COPIA } }, { parada: true }] },
    );
    retomadas += n;
    // re-armed, each will claim what it uploads under its key: listed for clean-up still, the file
    // of its coming attempt could be removed as it is being recorded. Only the keys of attachments
    // still there: one deleted meanwhile (its message or conversation) listed its key again, for a
    // copy now nobody's
    await sales.query(
      `DELETE k FROM chave_a_apagar k JOIN anexo_da_mensagem a ON k.chave = CONCAT(?, a.id)
        WHERE a.id IN (?) AND a.arquivo_id IS NULL`,
      { replacements: [PREFIXO_DA_CHAVE, ids] },
    );
    await enfileirarAgora(ids);
  }
  log.info({ conversa_id: conversaId ?? null, retomadas }, 'cópias esgotadas receberam novas tentativas');
  return retomadas;
}

/**
 * Copy jobs for `ids`, to run now: a finished job of the same id (failed after its attempts, or
 * found them spent) is replaced, and one still delayed (a retry of BullMQ's due later) is promoted.
 */
function enfileirarAgora(ids: string[]): Promise<void> {
  return reenfileirar(filaSalesAnexo, jobsDeCopia(ids), { promoverAdiados: true });
}

/**
 * How the chat platform that sent the attachment is reached: its origin and API token. A system a
 * master switched off for now is not called (config-system.ts): its copies wait for it as for an
 * outage of ours, their attempts kept, instead of fetching without its token and trust and failing.
 */
async function acessoDoAnexo(anexo: AnexoDaMensagem): Promise<{ enderecoDoSuporte: string | null; tokenApi: string | null }> {
  const conversa = await Conversa.findByPk(anexo.conversa_id, { attributes: ['config_system_suporte_id'], paranoid: false });
  const acesso = conversa ? await acessoAoSuporte(conversa.config_system_suporte_id) : null;
  if (!acesso && conversa && (await ConfigSystem.count({ where: { id: conversa.config_system_suporte_id, ativo: false } }))) {
    throw new FalhaDoNossoLado('the chat platform system is inactive: the copy waits until it is active again');
  }
  return { enderecoDoSuporte: acesso?.url ?? null, tokenApi: acesso?.tokenApi ?? null };
}

/**
 * How a copy ended, by `estado`. `esgotado`: its attempts all made or the copy stopped for good
 * (`parada`), or copied, or gone, since it was read; `interrompido`: stopped by the worker's
 * shutdown, its attempt given back (it is no failure of the copy); `de_novo`: its copy removed as
 * it was recorded (a removal racing the record), its attempt given back, to be copied again at
 * once; `adiada`: failed on the suite's own side (FalhaDoNossoLado, or the database for now), its
 * attempt given back, to be tried again on the same schedule, `motivo` saying why;
 * `grande_demais`: file storage refused the attachment as past its size limit, the copy stopped
 * for good (`parada`), `motivo` saying so.
 */
export type ResultadoDaCopia =
  | { estado: 'copiado' | 'ja_copiado' | 'inexistente' | 'esgotado' | 'interrompido' | 'de_novo' }
  | { estado: 'adiada' | 'grande_demais'; motivo: string };

/** A copy's progress: bytes passed to file storage, of `total` when the download said its length. */
export interface ProgressoDaCopia {
  bytes: number;
  total: number | null;
}

/** How often a copy in progress reports (a video may take the two minutes a copy may last). */
const INTERVALO_DO_PROGRESSO_MS = 1000;

/** Counts the bytes going through and reports them, at most once per INTERVALO_DO_PROGRESSO_MS. */
class ContadorDeBytes extends Transform {
  bytes = 0;
  private ultimoAviso = Date.now();

  constructor(private readonly aoContar: (bytes: number) => void) {
    super();
  }

  override _transform(pedaco: Buffer, _codificacao: BufferEncoding, pronto: TransformCallback): void {
    this.bytes += pedaco.length;
    if (Date.now() - this.ultimoAviso >= INTERVALO_DO_PROGRESSO_MS) {
      this.ultimoAviso = Date.now();
      this.aoContar(this.bytes);
    }
    pronto(null, pedaco);
  }
}

/** `bytes` through a ContadorDeBytes: a failure of the download reaches the upload reading it. */
function contando(bytes: Readable, aoContar: (bytes: number) => void): ContadorDeBytes {
  const contador = new ContadorDeBytes(aoContar);
  pipeline(bytes, contador, () => undefined);
  return contador;
}

/**
 * What is left, in ms, of SALES_ANEXO_RETRY_MS since the copy's last attempt began
 * (`ultima_tentativa_em`, on the database's clock), before another may start; 0 when none is owed
 * (no attempt counted, or the copy may not run again at all). The queue's own retry comes that
 * long after a failure, but a job it brings back at once (moved back to waiting when its worker
 * died mid-attempt, its attempt counted) or the sweep adds again (its job failed after stalling,
 * or lost) would otherwise try again at once.
 */
export async function esperaAntesDaCopia(anexoId: string): Promise<number> {
  const [linha] = await lerLinhas<{ restante_us: number | string }>(
    banco('sales'),
    `SELECT TIMESTAMPDIFF(MICROSECOND, ${AGORA_NO_BANCO}, ultima_tentativa_em + INTERVAL ? MICROSECOND) AS restante_us
       FROM anexo_da_mensagem
      WHERE id = ? AND arquivo_id IS NULL AND tentativas < ? AND NOT parada AND ultima_tentativa_em IS NOT NULL`,
    [esperaEntreTentativas() * 1000, anexoId, TENTATIVAS_DE_COPIA],
  );
  return linha ? Math.max(0, Math.ceil(Number(linha.restante_us) / 1000)) : 0;
}

/**
 * SPEC 4.6 rule 7: downloads the attachment from the chat platform and streams it to file storage
 * as a private file of the sales application, the sales application's token asked for before the
 * download is opened. The attempt is counted in `tentativas` before it starts (and its start kept
 * in `ultima_tentativa_em`), by the database and not by the job: a crash still counts, and a job
 * run again after one (or queued again by the sweep, its own count back at 1) never makes a seventh. A failure of the attachment's own (its
 * download, file storage refusing the file) throws, and the queue tries again 30 minutes later;
 * but file storage refusing it as past its size limit stops the copy at once (`parada`) and answers
 * `grande_demais`, since no retry can store it. A copy stopped so, or with its attempts spent, is
 * not run again (`esgotado`). One of the suite's own side (our credentials
 * refused, identity or file storage failing or out of reach, the database out of reach or too busy
 * for now) gives its attempt back and answers
 * `adiada`: an outage or a secret renewed and not yet set delays the copies, as long as it lasts,
 * instead of using up their attempts for a fault not theirs, up to SALES_ANEXO_ADIAMENTO_MAXIMO_MS
 * (7 days) after the copy was first put off (`adiada_desde`): past that, one counts as the
 * attachment's own. A copy whose attachment was deleted meanwhile (its conversation deleted) is
 * removed again. `sinal` (the worker's shutdown) stops the download and the upload at once; the
 * attempt it cut is given back and the copy answers `interrompido`.
 */
export async function copiarAnexo(
  anexoId: string,
  aoProgredir: (p: ProgressoDaCopia) => void = () => undefined,
  sinal?: AbortSignal,
): Promise<ResultadoDaCopia> {
  const anexo = await AnexoDaMensagem.findByPk(anexoId);
  if (!anexo) return { estado: 'inexistente' };
  if (anexo.arquivo_id) return { estado: 'ja_copiado' };
  if (sinal?.aborted) return { estado: 'interrompido' };
  const [contada] = await atualizarAnexos(
    { tentativas: literal('tentativas + 1'), ultima_tentativa_em: literal(AGORA_NO_BANCO) },
    { id: anexoId, arquivo_id: null, tentativas: { [Op.lt]: TENTATIVAS_DE_COPIA }, parada: false },
  );
  if (!contada) {
    // a worker that died on the copy's last attempt left no failure to list its key: its job, run
    // again, does
    await listarChaveSeParada(anexoId);
    return { estado: 'esgotado' };
  }
  let arquivo: ArquivoGuardado | undefined;
  let bytes: ContadorDeBytes | undefined;
  let total: number | null = null;
  try {
    // the token first: without one nothing can be stored, and a secret renewed and not yet set, or
    // identity down, would otherwise have every copy fetch its attachment from the chat platform
    // every 30 minutes for nothing. A token refused later by file storage (401) is still ours.
    await tokenDaSales();
    const prazo = AbortSignal.timeout(PRAZO_DA_COPIA_MS);
    const download = await baixarAnexo(anexo.endereco, { ...(await acessoDoAnexo(anexo)), sinal: sinal ? AbortSignal.any([prazo, sinal]) : prazo });
    total = download.tamanho;
    bytes = contando(download.bytes, (b) => aoProgredir({ bytes: b, total }));
    // asked again (it is kept): the download may have outlasted the one held at the start
    const token = await tokenDaSales();
    arquivo = await guardarArquivo(anexo.nome, download.tipoMime, bytes, { prazoMs: PRAZO_DA_COPIA_MS, chave: `${PREFIXO_DA_CHAVE}${anexoId}`, sinal, token, tamanho: total });
    aoProgredir({ bytes: bytes.bytes, total });
    const copia = arquivo;
    // an attempt whose recording failed left its copy on the removal list, and file storage may
    // answer this one with that copy (the same Idempotency-Key): the line stays, and the removal,
    // finding the copy recorded, keeps it, or copies the attachment again if a removal of it that
    // was cut short got there first (apagarCopia)
    const [alterados] = await atualizarAnexos(
      { arquivo_id: copia.id, tipo_mime: copia.tipo_mime, tamanho: copia.tamanho, ultimo_erro: null, adiada_desde: null },
      { id: anexoId, arquivo_id: null },
    );
    if (alterados === 0) {
      await apagarDepois(arquivo.id);
      return { estado: 'inexistente' };
    }
    // a copy listed for removal (an earlier attempt's it could not record, answered again by file
    // storage; or this one's, its key listed by a worker that took over this job when its lock
    // lapsed) may have been checked unheld just before this recording, and removed after. Read
    // again once recorded (a removal checking from now on sees the record): gone, the attachment is
    // put back to be copied anew at once (`de_novo`), its attempt given back (file storage out of
    // reach: taken as there). Nothing failed, so nothing waits for the retry interval.
    const removida = async () => (await arquivoDaChave(`${PREFIXO_DA_CHAVE}${anexoId}`).catch(() => copia.id)) !== copia.id;
    if (await removida()) {
      await atualizarAnexos({ arquivo_id: null, tipo_mime: null, tamanho: null }, { id: anexoId, arquivo_id: copia.id });
      await devolverTentativa(anexoId);
      return { estado: 'de_novo' };
    }
    return { estado: 'copiado' };
  } catch (err) {
    // an upload that failed before reading the whole download (file storage out of reach or refusing
    // the file) leaves it open, held by the platform until the copy's time-out
    bytes?.destroy();
    if (arquivo) await largarCopiaSemRegistro(anexoId, arquivo.id);
    if (sinal && cortadaPor(sinal, err)) {
      await devolverTentativa(anexoId);
      return { estado: 'interrompido' };
    }
    if (err instanceof ArquivoGrandeDemais) return desistirDaCopia(anexoId, err, total ?? `at least ${bytes?.bytes ?? 0}`);
    const mensagem = comCausa(err as Error).slice(0, 500);
    const nossa = err instanceof FalhaDoNossoLado || bancoPorOra(err);
    // the put-off series starts at its first failure of ours and ends at a failure of the
    // attachment's own (or the copy made): a copy re-armed or copied again later starts a new one
    await atualizarAnexos({ ultimo_erro: mensagem, adiada_desde: nossa ? literal(`COALESCE(adiada_desde, ${AGORA_NO_BANCO})`) : null }, { id: anexoId });
    if (nossa && !(await passouDoAdiamento(anexoId))) {
      await devolverTentativa(anexoId);
      log.error({ erro: mensagem, anexo_id: anexoId }, 'cópia adiada sem gastar tentativa: a falha é do nosso lado');
      return { estado: 'adiada', motivo: mensagem };
    }
    if (nossa) {
      log.error({ erro: mensagem, anexo_id: anexoId }, 'falha do nosso lado gasta tentativa: a cópia passou do adiamento máximo (SALES_ANEXO_ADIAMENTO_MAXIMO_MS)');
      // its last attempt spent, the copy is given up: re-armed by hand, it is put off anew
      await atualizarAnexos({ adiada_desde: null }, { id: anexoId, tentativas: { [Op.gte]: TENTATIVAS_DE_COPIA } });
    }
    await listarChaveSeParada(anexoId);
    throw err;
  }
}

/**
 * A copy that will not run again (its attempts spent, or stopped) without a file recorded has its
 * key listed for clean-up (listarChavesSemCopia) and the removal enqueued. Re-armed later, its
 * copy still runs: a file an attachment records is never removed (apagarCopia). Should this fail,
 * the failure is logged and the copy's own outcome stands.
 */
async function listarChaveSeParada(anexoId: string): Promise<void> {
  try {
    const listadas = await lerLinhas(banco('sales'), listarChavesSemCopia('anexo_da_mensagem a WHERE a.id = ? AND (a.tentativas >= ? OR a.parada)'), [
      anexoId,
      TENTATIVAS_DE_COPIA,
    ]);
    if ((listadas as unknown as { affectedRows: number }).affectedRows) await enfileirarRemocao();
  } catch (err) {
    log.error({ erro: (err as Error).message, anexo_id: anexoId }, 'chave da cópia abandonada não listada: um envio dela guardado fica no armazenamento');
  }
}

/**
 * File storage refused the attachment as past its size limit: no attempt can ever store it, so the
 * copy stops at once (`parada`: neither the queue nor the sweep takes it again) instead of
 * downloading it five more times, its `tentativas` still the attempts made, and `ultimo_erro` says
 * why, with its size: the length its download announced (sent as the upload's, refused by file
 * storage from the headers), else the bytes already passed on, which it has at least. Its limit
 * raised, retomarCopiasEsgotadas tries it again.
 */
async function desistirDaCopia(anexoId: string, err: ArquivoGrandeDemais, tamanho: number | string): Promise<ResultadoDaCopia> {
  const motivo = `the attachment (${tamanho} bytes) exceeds file storage's size limit; ${err.message}`.slice(0, 500);
  await atualizarAnexos({ ultimo_erro: motivo, parada: true, adiada_desde: null }, { id: anexoId, arquivo_id: null });
  await listarChaveSeParada(anexoId);
  return { estado: 'grande_demais', motivo };
}

/**
 * Whether the copy was first put off SALES_ANEXO_ADIAMENTO_MAXIMO_MS ago or more: it has waited on
 * our side long enough, and a failure of ours spends its attempts again, so nothing waits for good
 * (file storage failing on this one file, say). Compared on the database's clock, which wrote
 * `adiada_desde`: `0` has every failure of ours spend its attempt.
 */
async function passouDoAdiamento(anexoId: string): Promise<boolean> {
  const maximoUs = config().sales.anexoAdiamentoMaximoMs * 1000;
  const passou = await AnexoDaMensagem.count({
    where: { id: anexoId, adiada_desde: { [Op.lte]: literal(`${AGORA_NO_BANCO} - INTERVAL ${maximoUs} MICROSECOND`) } },
  });
  return passou > 0;
}

/**
 * Whether `err` is the abort `sinal` made (fetch rejects with its reason, node's streams with an
 * AbortError carrying it): a failure of its own that came as the shutdown began is not given back.
 */
export function cortadaPor(sinal: AbortSignal, err: unknown): boolean {
  if (!sinal.aborted) return false;
  const e = err as { name?: string; cause?: unknown } | undefined;
  // the copy's own time-out aborts with a TimeoutError, not an AbortError
  return err === sinal.reason || e?.cause === sinal.reason || e?.name === 'AbortError';
}

/**
 * A copy cut by the shutdown, or failed on our side, failed through no fault of its own: its
 * attempt goes back, so shutdowns (a deploy) and outages never use up the six. Its start is
 * forgotten with it: it began only once no wait was owed, so none is owed now (a copy cut by a
 * deploy is taken up again at once; one put off is delayed by its job). Should this fail too, the
 * attempt stays spent, as a crash's.
 */
async function devolverTentativa(anexoId: string): Promise<void> {
  try {
    await atualizarAnexos(
      { tentativas: literal('tentativas - 1'), ultima_tentativa_em: null },
      { id: anexoId, arquivo_id: null, tentativas: { [Op.gt]: 0 } },
    );
  } catch (err) {
    log.error({ erro: (err as Error).message, anexo_id: anexoId }, 'tentativa não devolvida');
  }
}

/** Puts a copy on the removal list (arquivo_a_apagar), inside `transaction` when given. */
function listarParaRemocao(arquivoId: string, transaction?: Transaction): Promise<unknown> {
  return banco('sales').query(`INSERT IGNORE INTO arquivo_a_apagar (arquivo_id, criado_em) VALUES (?, ${AGORA_NO_BANCO})`, { replacements: [arquivoId], transaction });
}

/** A copy no attachment refers to goes to the removal list and its queue. */
async function apagarDepois(arquivoId: string): Promise<void> {
  await listarParaRemocao(arquivoId);
  await enfileirarRemocao();
}

/**
 * The sales database out of reach or too busy for now (reading the conversation, recording the
 * copy): no fault of the attachment's. The copy file storage kept is listed for removal, and the
 * next attempt, with the same Idempotency-Key, gets it back while it is there. Only Sequelize's
 * errors are the database's (the download's own socket errors carry the same codes), and one that
 * would come again (a value refused) is the copy's own and spends attempts.
 */
const bancoPorOra = (err: unknown): boolean => err instanceof BaseError && (bancoIndisponivel(err) || impasseDeTravas(err));

/**
 * File storage kept the copy but recording it failed: the next attempt uploads again, so this one
 * would stay in file storage for good. It goes to the removal list, unless the attachment does
 * refer to it after all (the record was written and only its answer lost) or that cannot be known.
 */
async function largarCopiaSemRegistro(anexoId: string, arquivoId: string): Promise<void> {
  try {
    const agora = await AnexoDaMensagem.findByPk(anexoId, { attributes: ['arquivo_id'] });
    if (agora?.arquivo_id !== arquivoId) await apagarDepois(arquivoId);
  } catch (err) {
    log.error({ erro: (err as Error).message, anexo_id: anexoId, arquivo_id: arquivoId }, 'cópia sem registro ficou no armazenamento');
  }
}

/**
 * Copies whose attachment is gone (arquivo_a_apagar, written with the deletion) leave file storage
 * through this queue; when Redis is out of reach the sweep finds them later. A run reads the list
 * (REMOCAO.porVez lines, and queues the next run when it took that many), so a burst of deletions needs one: while one waits, more add nothing, and while one runs,
 * they leave one to follow it (what the running one read may predate them).
 */
export async function enfileirarRemocao(): Promise<void> {
  try {
    await fila(filaSalesAnexo).add(
      'apagar',
      {},
      { attempts: 10, backoff: { type: 'exponential', delay: 10_000 }, deduplication: { id: 'apagar', keepLastIfActive: true } },
    );
  } catch (err) {
    log.warn({ erro: (err as Error).message }, 'remoção de cópias fica para a varredura');
  }
}

/** Removals failing in a row after which file storage is taken as down: the run stops there. */
const FALHAS_SEGUIDAS_NA_REMOCAO = 3;

/** How many listed copies a removal run takes (tests lower it). */
export const REMOCAO = { porVez: 500 };

/** The removal lists' pages, oldest first, each read from its age index (sales migration 0022). */
export const PAGINAS_DAS_REMOCOES = {
  arquivo_a_apagar: (n: number) => `SELECT arquivo_id FROM arquivo_a_apagar ORDER BY criado_em LIMIT ${n}`,
  chave_a_apagar: (n: number) => `SELECT chave FROM chave_a_apagar ORDER BY criado_em LIMIT ${n}`,
};

/**
 * Removes the pending copies from file storage, oldest listed first, reporting after each; the
 * files of the listed keys are found first (procurarCopiasPelaChave) and join them. One that fails
 * goes back to the end of the list (its `criado_em` is when it was listed last) and the next ones
 * go on, so one file storage keeps refusing holds back no other (the copies of conversations
 * deleted later would stay stored for good); a few failing in a row stop the run (file storage
 * down). Any failure fails the run at its end, and the job retries.
 * Asked to stop (`sinal`, a worker's shutdown), it stops between two removals: the rest stay
 * pending for the next run. Answers how many it handled.
 */
export async function apagarCopiasPendentes(
  aoProgredir: (p: { apagados: number; de: number }) => void = () => undefined,
  sinal?: AbortSignal,
): Promise<number> {
  const sales = banco('sales');
  const chavesProcuradas = await procurarCopiasPelaChave(sinal);
  const pendentes = await lerLinhas<{ arquivo_id: string }>(sales, PAGINAS_DAS_REMOCOES.arquivo_a_apagar(REMOCAO.porVez), []);
  let apagados = 0;
  const falhas: string[] = [];
  let seguidas = 0;
  for (const { arquivo_id } of pendentes) {
    if (sinal?.aborted || seguidas >= FALHAS_SEGUIDAS_NA_REMOCAO) break;
    try {
      await apagarCopia(arquivo_id);
      seguidas = 0;
    } catch (err) {
      seguidas++;
      falhas.push(arquivo_id);
      log.warn({ erro: comCausa(err as Error), arquivo_id }, 'remoção de cópia falhou: volta ao fim da lista, as seguintes continuam');
      // to the back of the list: the next runs start with the others, however many keep failing
      await lerLinhas(sales, `UPDATE arquivo_a_apagar SET criado_em = ${AGORA_NO_BANCO} WHERE arquivo_id = ?`, [arquivo_id]).catch(() => undefined);
      continue;
    }
    aoProgredir({ apagados: ++apagados, de: pendentes.length });
  }
  // a full list may have more behind it: another run follows at once, not at the next sweep
  if (pendentes.length === REMOCAO.porVez && !sinal?.aborted && seguidas < FALHAS_SEGUIDAS_NA_REMOCAO) await enfileirarRemocao();
  if (falhas.length) throw new Error(`${falhas.length} copies could not be removed from file storage (still listed): ${falhas.join(', ')}`);
  if (!chavesProcuradas) throw new Error('file storage could not be asked for the files of the listed keys (still listed)');
  return apagados;
}

/**
 * The keys listed for clean-up (chave_a_apagar), oldest first, each asked of file storage: the file
 * it holds under the key (an upload stored whose answer was lost) goes on the removal list, which
 * still checks that no attachment took it since. A key's line goes once PROCURA_DA_CHAVE_MS old,
 * found or not: an upload of it begun before the line may still be storing, and a later run (the
 * sweep's, every 10 minutes) finds that file. The first failure (file storage out of reach) ends
 * the look-ups, the keys waiting for the next run; whether none failed. Asked to stop (`sinal`), it
 * stops between two.
 */
async function procurarCopiasPelaChave(sinal?: AbortSignal): Promise<boolean> {
  const sales = banco('sales');
  try {
    const chaves = await lerLinhas<{ chave: string }>(sales, PAGINAS_DAS_REMOCOES.chave_a_apagar(500), []);
    for (const { chave } of chaves) {
      if (sinal?.aborted) break;
      const arquivoId = await arquivoDaChave(chave);
      await sales.transaction(async (transaction) => {
        if (arquivoId) await listarParaRemocao(arquivoId, transaction);
        await sales.query(`DELETE FROM chave_a_apagar WHERE chave = ? AND criado_em <= ${AGORA_NO_BANCO} - INTERVAL ? MICROSECOND`, {
          replacements: [chave, PROCURA_DA_CHAVE_MS * 1000],
          transaction,
        });
      });
    }
    return true;
  } catch (err) {
    log.warn({ erro: (err as Error).message }, 'procura das cópias pelas chaves falhou: as chaves ficam para a próxima remoção');
    return false;
  }
}

/**
 * One listed copy: removed from file storage unless an attachment took it since, then off the list.
 * One an attachment took (file storage answering a retry with it) is kept; but if file storage no
 * longer has it, a run cut short between its removal and its repair below (a crash, the database
 * out of reach) left the attachment pointing at nothing, and it is copied again. The line goes
 * only after that, so a run cut anywhere leaves it for the next; and a kept copy's line goes only
 * while an attachment still takes it: a deletion of that attachment since lists the copy again,
 * finding this very line (INSERT IGNORE), and dropped, the copy would stay stored for good. A
 * deletion under way is waited for: it holds the line it found, and the attachment's index entry
 * it removed, which the DELETE's read of the attachments locks (InnoDB locks what a DELETE reads).
 */
async function apagarCopia(arquivoId: string): Promise<void> {
  const sales = banco('sales');
  // read again: an attempt may have recorded it since
  const [{ listada, registrada }] = await lerLinhas<{ listada: number; registrada: number }>(
    sales,
    `SELECT EXISTS (SELECT 1 FROM arquivo_a_apagar WHERE arquivo_id = ?) AS listada,
        EXISTS (SELECT 1 FROM anexo_da_mensagem WHERE arquivo_id = ?) AS registrada`,
    [arquivoId, arquivoId],
  );
  let mantida = false;
  if (listada && !registrada) {
    await apagarArquivo(arquivoId);
    await copiarDeNovoSeRegistrada(arquivoId);
  } else if (registrada) {
    mantida = (await urlsDosArquivos([arquivoId])).has(arquivoId);
    if (!mantida) await copiarDeNovoSeRegistrada(arquivoId);
  }
  const aindaTomada = mantida ? ' AND EXISTS (SELECT 1 FROM anexo_da_mensagem WHERE arquivo_id = ?)' : '';
  await lerLinhas(sales, `DELETE FROM arquivo_a_apagar WHERE arquivo_id = ?${aindaTomada}`, mantida ? [arquivoId, arquivoId] : [arquivoId]);
}

/**
 * An attempt that recorded the copy while it was being removed (between the check above and the
 * removal, or before a run cut short after the removal was read again) points at a file gone: the attachment is copied again, now, with a fresh set of
 * attempts (the copy it lost was made: had it taken the last one, none would be left). Its job of
 * that attempt, finished and still kept, is replaced; should the queue fail, the sweep takes it.
 */
async function copiarDeNovoSeRegistrada(arquivoId: string): Promise<void> {
  const orfaos = await AnexoDaMensagem.findAll({ where: { arquivo_id: arquivoId }, attributes: ['id'] });
  if (!orfaos.length) return;
  await atualizarAnexos(
    { arquivo_id: null, tipo_mime: null, tamanho: null, tentativas: 0, adiada_desde: null, ultima_tentativa_em: null },
    { arquivo_id: arquivoId },
  );
  await enfileirarAgora(orfaos.map((a) => a.id)).catch((err: unknown) =>
    log.warn({ erro: (err as Error).message, arquivo_id: arquivoId }, 'nova cópia fica para a varredura'),
  );
}
