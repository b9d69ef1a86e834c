import { banco, lerLinhas } from '../../lib/database';
import { logger } from '../../lib/logger';
import { AutorDaMensagem } from '../../models/sales';
import { iso } from '../../models/shared/base';
import { naoEncontrado } from '../shared/errors';
import { urlsDosArquivos } from './arquivos';

const log = logger('sales');

/** SPEC §2 AnexoDaMensagem. */
export interface AnexoJson {
  endereco: string;
  nome: string;
  tipo: string;
  arquivo_id: string | null;
  tipo_mime: string | null;
  tamanho: number | null;
  url: string | null;
  tentativas: number;
}

/** SPEC §2 ConversaMensagem. */
export interface MensagemJson {
  id: string;
  conversa_id: string;
  suporte_mensagem_id: number;
  autor: AutorDaMensagem;
  conteudo: string;
  etapa_id: string | null;
  criada_em: string;
  quantidade_anexos: number;
  anexos: AnexoJson[];
}

/**
 * Fresh signed URLs of the copies (15 minutes, from file storage). When file storage does not
 * answer, the messages are still listed, with `url` null.
 */
async function urlsDasCopias(ids: string[], conversaId: string): Promise<Map<string, string>> {
  if (!ids.length) return new Map();
  try {
    return await urlsDosArquivos(ids);
  } catch (err) {
    log.warn({ err: (err as Error).message, conversa_id: conversaId }, 'mensagens sem url dos anexos');
    return new Map();
  }
}

/**
 * GET /conversa/{id}/mensagens (SPEC 4.6 rule 7): the stored messages in sending order (private
 * notes are never stored), each with its attachments.
 */
export async function mensagensDaConversa(conversaId: string): Promise<MensagemJson[]> {
  const sales = banco('sales');
  const [conversa] = await lerLinhas(sales, 'SELECT id FROM conversa WHERE id = ? AND deletado_em IS NULL', [conversaId]);
  if (!conversa) throw naoEncontrado('Conversa');
  const [mensagens, anexos] = await Promise.all([
    lerLinhas<Omit<MensagemJson, 'criada_em' | 'anexos'> & { criada_em: Date }>(
      sales,
      `SELECT id, conversa_id, suporte_mensagem_id, autor, conteudo, etapa_id, criada_em, quantidade_anexos
         FROM conversa_mensagem WHERE conversa_id = ? ORDER BY criada_em, suporte_mensagem_id`,
      [conversaId],
    ),
    lerLinhas<Omit<AnexoJson, 'url'> & { mensagem_id: string }>(
      sales,
      `SELECT mensagem_id, endereco, nome, tipo, arquivo_id, tipo_mime, tamanho, tentativas
         FROM anexo_da_mensagem WHERE conversa_id = ? ORDER BY criado_em, id`,
      [conversaId],
    ),
  ]);
  const urls = await urlsDasCopias(
    anexos.flatMap((a) => (a.arquivo_id ? [a.arquivo_id] : [])),
    conversaId,
  );
  const porMensagem = new Map<string, AnexoJson[]>();
  for (const { mensagem_id, ...a } of anexos) {
    const lista = porMensagem.get(mensagem_id) ?? [];
    lista.push({ ...a, tamanho: a.tamanho === null ? null : Number(a.tamanho), url: a.arquivo_id ? (urls.get(a.arquivo_id) ?? null) : null });
    porMensagem.set(mensagem_id, lista);
  }
  return mensagens.map((m) => ({
    ...m,
    suporte_mensagem_id: Number(m.suporte_mensagem_id),
    criada_em: iso(m.criada_em)!,
    anexos: porMensagem.get(m.id) ?? [],
  }));
}
