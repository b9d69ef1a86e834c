import { banco, ConexaoEmTransacao, dataSql, emTransacao } from '../../lib/database';
import { logger } from '../../lib/logger';
import { novoId } from '../../models/shared/base';
import { enfileirarCopias } from './anexos';
import { SistemaDoWebhook } from './config-system';
import { usuariosDosRobos } from './robos';
import { autorDe, ConversaDoSuporte, EventoDoSuporte, MensagemDoSuporte } from './suporte';
import { chaveDoTelefone, digitos } from './telefone';

const log = logger('sales-webhook');

export interface ResultadoDoWebhook {
  /** the conversation record the event landed on (null when ignored) */
  conversa_id: string | null;
  /** messages stored by this call (0 for a repeated webhook) */
  mensagens_novas: number;
  ignorado?: string;
}

/** The chat platform's panel link of a conversation, when the system's address and account are known. */
function enderecoNoPainel(sistema: SistemaDoWebhook, c: ConversaDoSuporte): string | null {
  const conta = c.contaId ?? sistema.contaId;
  if (!sistema.url || conta === null) return null;
  return `${sistema.url}/app/accounts/${conta}/conversations/${c.suporteConversaId}`.slice(0, 700);
}

/**
 * The live record of the chat conversation, created when there is none (a deleted record stays
 * deleted: the new one starts an empty history), and brought up to date otherwise: contact, status
 * (mirrored), flow step, and the messaging gateway's link of the phone when it has none yet.
 */
async function gravarConversa(conexao: ConexaoEmTransacao, sistema: SistemaDoWebhook, c: ConversaDoSuporte, agora: string) {
  const chave = chaveDoTelefone(c.contatoTelefone);
  await conexao.query(
    `INSERT INTO conversa (id, config_system_suporte_id, suporte_conversa_id, suporte_conta_id, suporte_contato_id,
       suporte_endereco_conversa, config_system_gateway_id, config_system_mensageiro_id, etapa_id, contato_nome,
       contato_telefone, contato_telefone_digitos, status, ultima_mensagem, quantidade_mensagens, criado_em, atualizado_em)
     VALUES (?, ?, ?, ?, ?, ?,
       (SELECT config_system_gateway_id FROM contato_gateway WHERE telefone_chave = ?),
       (SELECT config_system_mensageiro_id FROM contato_gateway WHERE telefone_chave = ?),
       ?, ?, ?, ?, ?, '', 0, ?, ?)
     ON DUPLICATE KEY UPDATE
       suporte_conta_id = COALESCE(VALUES(suporte_conta_id), suporte_conta_id),
       suporte_contato_id = COALESCE(VALUES(suporte_contato_id), suporte_contato_id),
       suporte_endereco_conversa = COALESCE(VALUES(suporte_endereco_conversa), suporte_endereco_conversa),
       config_system_mensageiro_id = IF(config_system_gateway_id IS NULL, VALUES(config_system_mensageiro_id), config_system_mensageiro_id),
       config_system_gateway_id = COALESCE(config_system_gateway_id, VALUES(config_system_gateway_id)),
       etapa_id = COALESCE(VALUES(etapa_id), etapa_id),
       contato_nome = IF(VALUES(contato_nome) = '', contato_nome, VALUES(contato_nome)),
       contato_telefone_digitos = IF(VALUES(contato_telefone) = '', contato_telefone_digitos, VALUES(contato_telefone_digitos)),
       contato_telefone = IF(VALUES(contato_telefone) = '', contato_telefone, VALUES(contato_telefone)),
       status = VALUES(status),
       atualizado_em = VALUES(atualizado_em)`,
    [
      novoId(),
      sistema.id,
      c.suporteConversaId,
      c.contaId,
      c.contatoId,
      enderecoNoPainel(sistema, c),
      chave,
      chave,
      c.etapaId,
      c.contatoNome,
      c.contatoTelefone,
      digitos(c.contatoTelefone),
      c.status,
      agora,
      agora,
    ],
  );
  const [linhas] = await conexao.query(
    'SELECT id FROM conversa WHERE config_system_suporte_id = ? AND suporte_conversa_viva = ?',
    [sistema.id, c.suporteConversaId],
  );
  return (linhas as { id: string }[])[0].id;
}

interface AnexoNovo {
  id: string;
}

/**
 * Stores a message once: a repeated webhook finds it (unique per conversation record) and changes
 * nothing. A new message moves the counters and the last-message fields, which only ever advance:
 * a message that arrives late does not hide a more recent one.
 */
async function gravarMensagem(
  conexao: ConexaoEmTransacao,
  conversaId: string,
  m: MensagemDoSuporte,
  robos: Map<number, string>,
  agora: string,
): Promise<{ nova: boolean; anexos: AnexoNovo[] }> {
  const autor = autorDe(m.remetente, new Set(robos.keys()));
  const criadaEm = dataSql(m.criadaEm);
  const id = novoId();
  const [inserida] = await conexao.query(
    `INSERT IGNORE INTO conversa_mensagem (id, conversa_id, suporte_mensagem_id, autor, conteudo, etapa_id, criada_em,
       quantidade_anexos, criado_em, atualizado_em) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    [id, conversaId, m.suporteMensagemId, autor, m.conteudo, autor === 'robo' ? m.etapaId : null, criadaEm, m.anexos.length, agora, agora],
  );
  if ((inserida as { affectedRows: number }).affectedRows === 0) return { nova: false, anexos: [] };

  const anexos = m.anexos.map((a) => ({ id: novoId(), ...a }));
  if (anexos.length) {
    await conexao.query(
      `INSERT INTO anexo_da_mensagem (id, mensagem_id, conversa_id, suporte_anexo_id, endereco, nome, tipo, tentativas,
         criado_em, atualizado_em) VALUES ?`,
      [anexos.map((a) => [a.id, id, conversaId, a.suporteAnexoId, a.endereco, a.nome, a.tipo, 0, agora, agora])],
    );
  }
  const roboId = autor === 'robo' && m.remetente.id !== null ? (robos.get(m.remetente.id) ?? null) : null;
  // assignments run left to right and see the values already set: the text before its date
  await conexao.query(
    `UPDATE conversa SET
       quantidade_mensagens = quantidade_mensagens + 1,
       ultima_mensagem = IF(ultima_mensagem_em IS NULL OR ? >= ultima_mensagem_em, ?, ultima_mensagem),
       ultima_mensagem_em = GREATEST(COALESCE(ultima_mensagem_em, ?), ?),
       ultima_mensagem_do_contato_em = IF(? = 'contato', GREATEST(COALESCE(ultima_mensagem_do_contato_em, ?), ?), ultima_mensagem_do_contato_em),
       ultima_mensagem_do_robo_em = IF(? = 'robo', GREATEST(COALESCE(ultima_mensagem_do_robo_em, ?), ?), ultima_mensagem_do_robo_em),
       robo_id = COALESCE(robo_id, ?),
       atualizado_em = ?
     WHERE id = ?`,
    [criadaEm, m.conteudo, criadaEm, criadaEm, autor, criadaEm, criadaEm, autor, criadaEm, criadaEm, roboId, agora, conversaId],
  );
  return { nova: true, anexos };
}

/** message_updated of a stored message: its new text (an edit, or the platform's "deleted" text). */
async function atualizarMensagem(conexao: ConexaoEmTransacao, conversaId: string, m: MensagemDoSuporte, agora: string) {
  await conexao.query('UPDATE conversa_mensagem SET conteudo = ?, atualizado_em = ? WHERE conversa_id = ? AND suporte_mensagem_id = ?', [
    m.conteudo,
    agora,
    conversaId,
    m.suporteMensagemId,
  ]);
  await conexao.query('UPDATE conversa SET ultima_mensagem = ? WHERE id = ? AND ultima_mensagem_em = ?', [
    m.conteudo,
    conversaId,
    dataSql(m.criadaEm),
  ]);
}

/** An event without a visible message (a status change, a private note) must not bring back a record someone deleted. */
async function apagadaSemRegistroVivo(conexao: ConexaoEmTransacao, sistemaId: string, suporteConversaId: number): Promise<boolean> {
  const [linhas] = await conexao.query(
    `SELECT MAX(deletado_em IS NULL) AS viva, COUNT(*) AS registros FROM conversa
      WHERE config_system_suporte_id = ? AND suporte_conversa_id = ?`,
    [sistemaId, suporteConversaId],
  );
  const { viva, registros } = (linhas as { viva: number | null; registros: number }[])[0];
  return Number(registros) > 0 && !Number(viva);
}

const ERROS_DE_CONCORRENCIA = new Set(['ER_LOCK_DEADLOCK', 'ER_LOCK_WAIT_TIMEOUT']);

/**
 * Events of one conversation at the same instant may deadlock on its row or on the status counts;
 * the database rolls one back, and it goes again after a short random pause (up to 3 times).
 */
async function comNovasTentativas<T>(gravar: () => Promise<T>, sistemaId: string): Promise<T> {
  for (let tentativa = 1; ; tentativa++) {
    try {
      return await gravar();
    } catch (err) {
      if (tentativa > 3 || !ERROS_DE_CONCORRENCIA.has((err as { code?: string }).code ?? '')) throw err;
      log.warn({ err: (err as Error).message, sistema: sistemaId, tentativa }, 'evento repetido após conflito de travas');
      await new Promise((r) => setTimeout(r, Math.random() * 20 * tentativa));
    }
  }
}

/**
 * DESIGN §7: one chat-platform event, stored in one transaction. Every visible message is stored
 * once, the conversation's fields follow the platform, and each new attachment is queued for its
 * copy to file storage after the commit.
 */
export async function registrarEventoDoSuporte(sistema: SistemaDoWebhook, evento: EventoDoSuporte): Promise<ResultadoDoWebhook> {
  if (evento.tipo === 'ignorado') return { conversa_id: null, mensagens_novas: 0, ignorado: `evento ${evento.evento} não é guardado` };
  const robos = await usuariosDosRobos();
  const mensagens = evento.tipo === 'mensagem' ? (evento.mensagem ? [evento.mensagem] : []) : evento.mensagens;

  const gravar = () =>
    emTransacao(
      banco('sales'),
      async (conexao) => {
        const agora = dataSql(new Date());
        if (!mensagens.length) {
          if (await apagadaSemRegistroVivo(conexao, sistema.id, evento.conversa.suporteConversaId)) return null;
        }
        const conversaId = await gravarConversa(conexao, sistema, evento.conversa, agora);
        let novas = 0;
        const anexos: AnexoNovo[] = [];
        for (const m of mensagens) {
          const r = await gravarMensagem(conexao, conversaId, m, robos, agora);
          if (r.nova) {
            novas++;
            anexos.push(...r.anexos);
          } else if (evento.evento === 'message_updated') {
            await atualizarMensagem(conexao, conversaId, m, agora);
          }
        }
        return { conversaId, novas, anexos };
      },
      { leituraConfirmada: true },
    );

  const gravado = await comNovasTentativas(gravar, sistema.id);
  if (!gravado) return { conversa_id: null, mensagens_novas: 0, ignorado: 'conversa apagada; só uma nova mensagem abre outro registro' };
  await enfileirarCopias(gravado.anexos.map((a) => a.id));
  return { conversa_id: gravado.conversaId, mensagens_novas: gravado.novas };
}
