import { Readable } from 'node:stream';
import { Op } from 'sequelize';
import { logger } from '../../lib/logger';
import { AnexoDaMensagem, Conversa } from '../../models/sales';
import { fila } from '../../queues/fila';
import { filaSalesAnexo, TENTATIVAS_DE_COPIA } from '../../queues/sales-anexo';
import { apagarArquivo, guardarArquivo } from './arquivos';
import { acessoAoSuporte } from './config-system';

const log = logger('sales-anexo');

/** How long one copy may take, download and upload together. */
const PRAZO_DA_COPIA_MS = 120_000;

/** After the webhook's commit: one copy job per new attachment (jobId = its id, so never two). */
export async function enfileirarCopias(ids: string[]): Promise<void> {
  if (!ids.length) return;
  try {
    await fila(filaSalesAnexo).addBulk(ids.map((id) => ({ name: 'copiar', data: { anexo_id: id }, opts: { jobId: id } })));
  } catch (err) {
    log.warn({ err: (err as Error).message, anexos: ids }, 'cópias ficam para a varredura');
  }
}

/** Attachments whose copy never reached the queue (Redis down at the time) go back to it. */
export async function varrerAnexos(): Promise<number> {
  const esquecidos = await AnexoDaMensagem.findAll({
    where: { arquivo_id: null, tentativas: { [Op.lt]: TENTATIVAS_DE_COPIA }, atualizado_em: { [Op.lt]: new Date(Date.now() - 60_000) } },
    attributes: ['id'],
    order: [['criado_em', 'ASC']],
    limit: 1000,
  });
  await enfileirarCopias(esquecidos.map((a) => a.id));
  return esquecidos.length;
}

/** The chat platform's token goes only to the chat platform's own address, never to a storage it redirects to. */
async function cabecalhosDoDownload(anexo: AnexoDaMensagem): Promise<Record<string, string>> {
  const conversa = await Conversa.findByPk(anexo.conversa_id, { attributes: ['config_system_suporte_id'], paranoid: false });
  const acesso = conversa ? await acessoAoSuporte(conversa.config_system_suporte_id) : null;
  if (acesso?.tokenApi && new URL(anexo.endereco).origin === new URL(acesso.url).origin) return { api_access_token: acesso.tokenApi };
  return {};
}

export type ResultadoDaCopia = 'copiado' | 'ja_copiado' | 'inexistente';

/**
 * SPEC 4.6 rule 7: downloads the attachment from the chat platform and streams it to file storage
 * as a private file of the sales application. `tentativa` (1 for the first) is recorded before
 * trying, so a crash still counts; a failure throws, and the queue tries again 30 minutes later.
 * A copy whose attachment was deleted meanwhile (its conversation deleted) is removed again.
 */
export async function copiarAnexo(anexoId: string, tentativa: number): Promise<ResultadoDaCopia> {
  const anexo = await AnexoDaMensagem.findByPk(anexoId);
  if (!anexo) return 'inexistente';
  if (anexo.arquivo_id) return 'ja_copiado';
  await AnexoDaMensagem.update({ tentativas: Math.max(anexo.tentativas, tentativa) }, { where: { id: anexoId } });
  try {
    const prazo = AbortSignal.timeout(PRAZO_DA_COPIA_MS);
    const download = await fetch(anexo.endereco, { headers: await cabecalhosDoDownload(anexo), redirect: 'follow', signal: prazo });
    if (!download.ok || !download.body) throw new Error(`the chat platform answered ${download.status} to the download`);
    const tipoMime = download.headers.get('content-type')?.trim() || 'application/octet-stream';
    const arquivo = await guardarArquivo(anexo.nome, tipoMime, Readable.fromWeb(download.body as never), PRAZO_DA_COPIA_MS);
    const [alterados] = await AnexoDaMensagem.update(
      { arquivo_id: arquivo.id, tipo_mime: arquivo.tipo_mime, tamanho: arquivo.tamanho, ultimo_erro: null },
      { where: { id: anexoId, arquivo_id: null } },
    );
    if (alterados === 0) {
      await apagarArquivo(arquivo.id);
      return 'inexistente';
    }
    return 'copiado';
  } catch (err) {
    const mensagem = (err as Error).message.slice(0, 500);
    await AnexoDaMensagem.update({ ultimo_erro: mensagem }, { where: { id: anexoId } });
    throw err;
  }
}

/** After a conversation is deleted for good: its copies leave file storage too. */
export async function enfileirarRemocao(arquivoIds: string[]): Promise<void> {
  if (!arquivoIds.length) return;
  await fila(filaSalesAnexo).add('apagar', { arquivos: arquivoIds }, { attempts: 10, backoff: { type: 'exponential', delay: 10_000 } });
}

export async function apagarCopias(arquivoIds: string[]): Promise<number> {
  for (const id of arquivoIds) await apagarArquivo(id);
  return arquivoIds.length;
}
