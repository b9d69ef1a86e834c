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
  // READ COMMITTED: the phone's conversations are found without gap locks, which a chat webhook
  // creating a conversation would wait on; a deadlock left (the same rows in another order) is retried
  const vinculadas = await repetirEmConflito('vínculo do gateway', () => vincular(sistema.id, chave, mensageiroId, momentoDaMensagem(e.data.messageTimestamp)));
  return vinculadas === null ? { conversas_vinculadas: 0, ignorado: 'mensagem mais antiga que a do vínculo do telefone' } : { conversas_vinculadas: vinculadas };
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
 * The phone's link to the gateway and messaging number, kept and copied to its running conversations.
 * `mensageiroId` undefined (the event did not name its number): the gateway alone is written. The
 * event of a message older than the one that wrote the link changes nothing (null): the gateway's
 * instances, one per number, send their events apart, and a late one would move the phone back
 * to the number the contact left. Events that do not say when (`mensagemEm` null), and links kept
 * before the time was, apply in arrival order, as before.
 */
function vincular(gatewayId: string, chave: string, mensageiroId: string | null | undefined, mensagemEm: Date | null): Promise<number | null> {
  const agora = dataSql(new Date());
  const conhecido = mensageiroId !== undefined;
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
    if (!(inserido as ResultSetHeader).affectedRows) {
      const [linhas] = await conexao.query('SELECT mensagem_em FROM contato_gateway WHERE telefone_chave = ? FOR UPDATE', [chave]);
      const anterior = (linhas as { mensagem_em: Date | null }[])[0]?.mensagem_em;
      if (mensagemEm && anterior && mensagemEm < anterior) return null;
      // IF(?, new, old): an unknown number keeps the one stored
      await conexao.query(
        `UPDATE contato_gateway SET config_system_gateway_id = ?, config_system_mensageiro_id = IF(?, ?, config_system_mensageiro_id),
           mensagem_em = COALESCE(?, mensagem_em), atualizado_em = ? WHERE telefone_chave = ?`,
        [gatewayId, conhecido, mensageiroId ?? null, mensagemEm && dataSql(mensagemEm), agora, chave],
      );
    }
    const [r] = await conexao.query(
      `UPDATE conversa SET config_system_gateway_id = ?, config_system_mensageiro_id = IF(?, ?, config_system_mensageiro_id), atualizado_em = ?
        WHERE contato_telefone_digitos IN (?) AND deletado_em IS NULL AND status <> 'resolved'
          AND NOT (config_system_gateway_id <=> ? AND (NOT ? OR config_system_mensageiro_id <=> ?))`,
      [gatewayId, conhecido, mensageiroId ?? null, agora, variantesDoTelefone(chave), gatewayId, conhecido, mensageiroId ?? null],
    );
    return (r as { affectedRows: number }).affectedRows;
  }, { leituraConfirmada: true });
}
