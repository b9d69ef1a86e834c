import { banco, lerLinhas } from '../../lib/database';
import { comCausa } from '../../lib/erros';
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
    log.warn({ erro: comCausa(err as Error), conversa_id: conversaId }, 'mensagens sem url dos anexos');
    return new Map();
  }
}

/** One row of the listing's statement: a message and one of its attachments, if any. */
interface LinhaDaMensagem extends Omit<MensagemJson, 'id' | 'criada_em' | 'anexos'>, Omit<AnexoJson, 'url' | 'endereco'> {
  id: string | null;
  criada_em: Date;
  anexo_id: string | null;
  endereco: string | null;
}

/**
 * GET /conversa/{id}/mensagens (SPEC 4.6 rule 7): the stored messages in sending order (private
 * notes are never stored), each with its attachments. One statement, so one snapshot: a deletion
 * committing between a check of the conversation and the read of its messages answered 200 with
 * none, or messages without their attachments. A message's row comes once per attachment (at
 * most ANEXOS_POR_MENSAGEM), content included: cheaper than a transaction's two round trips more.
 */
export async function mensagensDaConversa(conversaId: string): Promise<MensagemJson[]> {
  const linhas = await lerLinhas<LinhaDaMensagem>(
    banco('sales'),
    `SELECT m.id, m.conversa_id, m.suporte_mensagem_id, m.autor, m.conteudo, m.etapa_id, m.criada_em, m.quantidade_anexos,
            a.id AS anexo_id, a.endereco, a.nome, a.tipo, a.arquivo_id, a.tipo_mime, a.tamanho, a.tentativas
       FROM conversa c
       LEFT JOIN conversa_mensagem m ON m.conversa_id = c.id
       LEFT JOIN anexo_da_mensagem a ON a.mensagem_id = m.id
      WHERE c.id = ? AND c.deletado_em IS NULL
      ORDER BY m.criada_em, m.suporte_mensagem_id, a.criado_em, a.id`,
    [conversaId],
  );
  if (!linhas.length) throw naoEncontrado('Conversa');
  const urls = await urlsDasCopias(
    linhas.flatMap((l) => (l.arquivo_id ? [l.arquivo_id] : [])),
    conversaId,
  );
  return mensagensDasLinhas(linhas, urls);
}

/** The statement's rows, in order, folded into messages each holding its attachments. */
function mensagensDasLinhas(linhas: LinhaDaMensagem[], urls: Map<string, string>): MensagemJson[] {
  const mensagens: MensagemJson[] = [];
  for (const l of linhas) {
    if (l.id === null) continue; // the conversation has no message
    let m = mensagens[mensagens.length - 1];
    if (m?.id !== l.id) {
      m = {
        id: l.id,
        conversa_id: l.conversa_id,
        suporte_mensagem_id: Number(l.suporte_mensagem_id),
        autor: l.autor,
        conteudo: l.conteudo,
        etapa_id: l.etapa_id,
        criada_em: iso(l.criada_em)!,
        quantidade_anexos: l.quantidade_anexos,
        anexos: [],
      };
      mensagens.push(m);
    }
    if (l.anexo_id === null) continue;
    m.anexos.push({
      endereco: l.endereco!,
      nome: l.nome,
      tipo: l.tipo,
      arquivo_id: l.arquivo_id,
      tipo_mime: l.tipo_mime,
      tamanho: l.tamanho === null ? null : Number(l.tamanho),
      tentativas: l.tentativas,
      url: l.arquivo_id ? (urls.get(l.arquivo_id) ?? null) : null,
    });
  }
  return mensagens;
}
