import Joi from 'joi';
import type { ResultSetHeader } from 'mysql2';
import { banco, dataSql, emTransacao, repetirEmConflito } from '../../lib/database';
import { ConfigSystem } from '../../models/sales';
import { esquemaPronto, validarCom } from '../shared/validacao';
import { SistemaDoWebhook } from './config-system';
import { adiantadoDemais } from './tempos';
import { chaveDoTelefone, variantesDoTelefone } from './telefone';

/**
 * The messaging gateway's webhook (Evolution API's `messages.upsert`, DESIGN §7): it tells which
 * gateway, and which messaging number, a phone talks through. The sales service links the phone's
 * running conversations (not resolved) to them, and remembers the link for conversations the chat
 * platform creates later for that phone.
 */

const jid = Joi.string().max(200);
/**
 * messages.upsert: the contact's id (`data.key.remoteJid`) and the gateway's own number (`sender`).
 * A contact WhatsApp names by a LID (`...@lid`, no phone in it) comes with its phone's id beside
 * it, in `remoteJidAlt` (Evolution 2.3.6 on) or `senderPn` (2.3.0 to 2.3.5), when the gateway knows it.
 */
const mensagemDoGateway = Joi.object({
  event: Joi.string().required(),
  instance: Joi.string().allow('', null),
  sender: jid.allow('', null),
  data: Joi.object({
    key: Joi.object({
      remoteJid: jid.required(),
      remoteJidAlt: jid.allow('', null),
      senderPn: jid.allow('', null),
      fromMe: Joi.boolean().allow(null),
      id: Joi.string().allow('', null),
    })
      .unknown(true)
      .required(),
    // seconds since 1970, when the message was sent; anything else is taken as not said
    messageTimestamp: Joi.any(),
  })
    .unknown(true)
    .required(),
}).unknown(true);
const mensagemValidavel = esquemaPronto(mensagemDoGateway);

export interface ResultadoDoGateway {
  conversas_vinculadas: number;
  ignorado?: string;
}

/** `5511999990000@s.whatsapp.net` is a person; groups, broadcasts and ids without a phone are not. */
function telefoneDoJid(valor: string | null | undefined): string | null {
  const m = /^(\d{8,20})(?::\d+)?@(s\.whatsapp\.net|c\.us)$/.exec(valor ?? '');
  return m ? m[1] : null;
}

/**
 * The configured messaging number the gateway speaks for (its `sender`): its id, null when no
 * messaging system has that number, undefined when the event does not say which number it is (no
 * `sender`, or one without a phone), which must leave the number already known in place.
 */
async function mensageiroDe(sender: string | null | undefined): Promise<string | null | undefined> {
  const numero = telefoneDoJid(sender);
  if (!numero) return undefined;
  const m = await ConfigSystem.findOne({
    where: { tipo: 'mensageiro', ativo: true, numero: variantesDoTelefone(chaveDoTelefone(numero)) },
    attributes: ['id'],
    order: [['criado_em', 'ASC']],
  });
  return m?.id ?? null;
}

export async function registrarEventoDoGateway(sistema: SistemaDoWebhook, corpo: { event: string }): Promise<ResultadoDoGateway> {
  // the gateway sends many events (connection.update, qrcode.updated...): only messages.upsert is read
  const nome = corpo.event.toLowerCase().replace(/_/g, '.');
  if (nome !== 'messages.upsert') return { conversas_vinculadas: 0, ignorado: `evento ${corpo.event} não é guardado` };
  const e = validarCom<any>(mensagemValidavel, corpo, 'Evento do gateway fora do formato esperado.');
  const { remoteJid, remoteJidAlt, senderPn } = e.data.key;
  const telefone = remoteJid.endsWith('@lid') ? (telefoneDoJid(remoteJidAlt) ?? telefoneDoJid(senderPn)) : telefoneDoJid(remoteJid);
  if (!telefone) return { conversas_vinculadas: 0, ignorado: 'conversa de grupo ou sem telefone' };

  const chave = chaveDoTelefone(telefone);
  const mensageiroId = await mensageiroDe(e.sender);
  const guardado = await repetirEmConflito('vínculo do gateway', () => guardarVinculo(sistema.id, chave, mensageiroId, momentoDaMensagem(e.data.messageTimestamp)));
  if (!guardado) return { conversas_vinculadas: 0, ignorado: 'mensagem mais antiga que a do vínculo do telefone' };
  return { conversas_vinculadas: await repetirEmConflito('vínculo do gateway', () => ligarConversas(chave, mensageiroId !== undefined)) };
}

/**
 * The message's `messageTimestamp` (whole seconds, a number or its digits) as a date; null when it
 * says none, or a moment more than ADIANTAMENTO_ACEITO_MS ahead of this server's clock (stored, it
 * would keep the phone's link from every later message).
 */
function momentoDaMensagem(valor: unknown): Date | null {
  const segundos = typeof valor === 'number' ? valor : typeof valor === 'string' && /^\d{1,12}$/.test(valor) ? Number(valor) : NaN;
  return Number.isSafeInteger(segundos) && segundos > 0 && !adiantadoDemais(segundos * 1000, 'messageTimestamp') ? new Date(segundos * 1000) : null;
}

/**
 * The phone's link to the gateway and messaging number, kept for its running conversations and for
 * those the chat platform creates later. `mensageiroId` undefined (the event did not name its
 * number): the gateway alone is written. The event of a message older than the one that wrote the
 * link changes nothing (false): the gateway's instances, one per number, send their events apart,
 * and a late one would move the phone back to the number the contact left. Events that do not say
 * when (`mensagemEm` null), and links kept before the time was, apply in arrival order, as before.
 */
function guardarVinculo(gatewayId: string, chave: string, mensageiroId: string | null | undefined, mensagemEm: Date | null): Promise<boolean> {
  const agora = dataSql(new Date());
  return emTransacao(banco('sales'), async (conexao) => {
    // the phone's row as this event has it when there is none, else the row locked as it stands:
    // read first, a phone two events see for the first time at once was missing for both (READ
    // COMMITTED locks no missing row), and the second wrote over the first without comparing times
    // (IGNORE: no row counted for an existing one; ON DUPLICATE KEY counts it found)
    const [inserido] = await conexao.query(
      `INSERT IGNORE INTO contato_gateway (telefone_chave, config_system_gateway_id, config_system_mensageiro_id, mensagem_em, atualizado_em)
       VALUES (?, ?, ?, ?, ?)`,
      [chave, gatewayId, mensageiroId ?? null, mensagemEm && dataSql(mensagemEm), agora],
    );
    if ((inserido as ResultSetHeader).affectedRows) return true;
    const [linhas] = await conexao.query('SELECT mensagem_em FROM contato_gateway WHERE telefone_chave = ? FOR UPDATE', [chave]);
    const anterior = (linhas as { mensagem_em: Date | null }[])[0]?.mensagem_em;
    if (mensagemEm && anterior && mensagemEm < anterior) return false;
    // IF(?, new, old): an unknown number keeps the one stored
    await conexao.query(
      `UPDATE contato_gateway SET config_system_gateway_id = ?, config_system_mensageiro_id = IF(?, ?, config_system_mensageiro_id),
         mensagem_em = COALESCE(?, mensagem_em), atualizado_em = ? WHERE telefone_chave = ?`,
      [gatewayId, mensageiroId !== undefined, mensageiroId ?? null, mensagemEm && dataSql(mensagemEm), agora, chave],
    );
    return true;
  }, { leituraConfirmada: true });
}

/**
 * The phone's running conversations take the link as it is stored now, once that link is
 * committed. A chat webhook writing a conversation of the phone at that moment read the link before
 * it existed (a webhook reading it later waits for its commit: registro.ts VINCULO_VIVO), and this
 * event's UPDATE would pass its uncommitted row by (READ COMMITTED): the lock on the phone's
 * conversations, resolved ones too (a webhook may be reopening one), waits for that write, so one
 * of the two always sees the other. A deadlock with such a webhook (it holds the link's row
 * shared, then the conversation) is retried by the caller. The messaging number is copied only
 * when this event named it (`numeroConhecido`).
 */
function ligarConversas(chave: string, numeroConhecido: boolean): Promise<number> {
  const agora = dataSql(new Date());
  const telefones = variantesDoTelefone(chave);
  return emTransacao(banco('sales'), async (conexao) => {
    await conexao.query('SELECT id FROM conversa WHERE contato_telefone_digitos IN (?) AND deletado_em IS NULL FOR UPDATE', [telefones]);
    const [r] = await conexao.query(
      `UPDATE conversa c JOIN contato_gateway cg ON cg.telefone_chave = ?
          SET c.config_system_gateway_id = cg.config_system_gateway_id,
              c.config_system_mensageiro_id = IF(?, cg.config_system_mensageiro_id, c.config_system_mensageiro_id), c.atualizado_em = ?
        WHERE c.contato_telefone_digitos IN (?) AND c.deletado_em IS NULL AND c.status <> 'resolved'
          AND NOT (c.config_system_gateway_id <=> cg.config_system_gateway_id
                   AND (NOT ? OR c.config_system_mensageiro_id <=> cg.config_system_mensageiro_id))`,
      [chave, numeroConhecido, agora, telefones, numeroConhecido],
    );
    return (r as ResultSetHeader).affectedRows;
  }, { leituraConfirmada: true });
}
