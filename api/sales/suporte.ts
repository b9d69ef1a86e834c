import Joi from 'joi';
import { AutorDaMensagem, StatusDaConversa } from '../../models/sales';
import { dadosInvalidos } from '../shared/errors';
import { esquemaPronto, validarCom } from '../shared/validacao';
import type { IdentidadesDosRobos } from './robos';
import { adiantadoDemais, noMaximoAdiantado } from './tempos';

/**
 * The chat platform's webhook payloads (Chatwoot's shape, DESIGN §7), read into what the sales
 * service keeps. Chatwoot writes a message two ways: at the top of `message_*` events (string
 * `message_type`, ISO `created_at`, `sender.type` contact|user|agent_bot|captain_assistant) and
 * inside `conversation.messages` (integer `message_type`, unix `created_at`, `sender_type`
 * Contact|User|AgentBot|Captain::Assistant); both are read.
 */

export const STATUS: StatusDaConversa[] = ['pending', 'open', 'resolved', 'snoozed'];

export interface ConversaDoSuporte {
  suporteConversaId: number;
  contaId: number | null;
  contatoId: number | null;
  contatoNome: string;
  contatoTelefone: string;
  status: StatusDaConversa;
  /** the flow step a robot integration keeps in the conversation's custom attributes */
  etapaId: string | null;
  /** the platform's `updated_at` of the conversation (momentoDaPlataforma), null when it sent none usable */
  atualizadaEm: string | null;
}

export interface AnexoDoSuporte {
  suporteAnexoId: number | null;
  endereco: string;
  nome: string;
  tipo: string;
}

export interface MensagemDoSuporte {
  suporteMensagemId: number;
  /** who sent it, as the chat platform says; the robot is told apart later (a robot's chat user) */
  remetente: { tipo: 'contato' | 'usuario' | 'robo' | 'sistema'; id: number | null };
  conteudo: string;
  criadaEm: Date;
  etapaId: string | null;
  anexos: AnexoDoSuporte[];
  /** attachments sent past the first ANEXOS_POR_MENSAGEM: not read, not recorded, not copied */
  anexosDeixados: number;
  /** deleted in the platform: its text replaced by the platform's notice, its attachments gone */
  apagada: boolean;
  /** the platform's `updated_at` of the message (momentoDaPlataforma), null when it sent none usable */
  atualizadaEm: string | null;
}

export type EventoDoSuporte =
  | { tipo: 'mensagem'; evento: 'message_created' | 'message_updated'; conversa: ConversaDoSuporte; mensagem: MensagemDoSuporte | null }
  | {
      tipo: 'conversa';
      evento: 'conversation_created' | 'conversation_updated' | 'conversation_status_changed';
      conversa: ConversaDoSuporte;
      mensagens: MensagemDoSuporte[];
    }
  | { tipo: 'ignorado'; evento: string };

/**
 * What one event may carry. Each attachment is a download and a file to store: unbounded, one
 * request of whoever holds a system's webhook token could queue tens of thousands of them. A
 * message's attachments past the first ANEXOS_POR_MENSAGEM are left out, not refused: an inbound
 * e-mail can carry more, and the platform does not retry a 4xx, so refusing would lose the
 * message. They are not read, so not checked either: what the body carries past them costs its
 * parse only (within the route's 4 MiB). Chatwoot sends one message in a conversation event: more
 * than MENSAGENS_POR_EVENTO is refused, counted before any is read.
 */
export const ANEXOS_POR_MENSAGEM = 20;
export const MENSAGENS_POR_EVENTO = 20;

const idNumerico = Joi.number().integer().min(0).max(Number.MAX_SAFE_INTEGER);
const texto = Joi.string().allow('', null);

const remetente = Joi.object({ id: idNumerico.allow(null), name: texto, phone_number: texto, type: texto }).unknown(true);

const anexo = Joi.object({
  id: idNumerico.allow(null),
  file_type: texto,
  // Chatwoot sends none for a contact card, and a location's may be null: nothing to copy. Any
  // text: one that is no http(s) address loses its attachment (baixavel), not the message
  data_url: Joi.string().allow(null, ''),
}).unknown(true);

/** 1000-01-01T00:00:00Z and 9999-12-31T23:59:59Z in unix seconds: the moments a DATETIME column holds. */
const PRIMEIRO_SEGUNDO = -30610224000;
const ULTIMO_SEGUNDO = 253402300799;

const mensagem = Joi.object({
  id: idNumerico.required(),
  content: texto,
  // unix seconds up to the year 9999, or an ISO date in the years a date column holds (an offset
  // could move 9999-12-31 past them); one without an offset is UTC, as the platform keeps its
  // times, not the time of whatever zone this server's host is in (Date.parse's reading), its
  // year's expanded form (+002026) too
  created_at: Joi.alternatives(
    Joi.number().min(0).max(ULTIMO_SEGUNDO),
    Joi.string()
      .replace(/^([+-]\d{6}|\d{4})(-\d{2}-\d{2})[T ]([\d:.]+)$/, '$1$2T$3Z')
      .isoDate()
      .custom((v: string, h) =>
        Date.parse(v) >= PRIMEIRO_SEGUNDO * 1000 && Date.parse(v) <= ULTIMO_SEGUNDO * 1000 ? v : h.message({ custom: '{{#label}} deve estar entre os anos 1000 e 9999 (UTC)' }),
      ),
  ).required(),
  // a number first: "0" sent as text is the incoming type 0, not an unknown name
  message_type: Joi.alternatives(Joi.number().integer(), Joi.string()).required(),
  private: Joi.boolean().allow(null),
  sender: remetente.allow(null),
  sender_type: texto,
  sender_id: idNumerico.allow(null),
  content_attributes: Joi.object().unknown(true).allow(null),
  additional_attributes: Joi.object().unknown(true).allow(null),
  // cut to the first ANEXOS_POR_MENSAGEM before it is checked (comAnexosLidos)
  attachments: Joi.array().items(anexo).allow(null),
}).unknown(true);

const conversa = Joi.object({
  id: idNumerico.required(),
  account_id: idNumerico.allow(null),
  status: Joi.string()
    .valid(...STATUS)
    .required(),
  meta: Joi.object({ sender: remetente.allow(null) }).unknown(true).allow(null),
  contact_inbox: Joi.object({ contact_id: idNumerico.allow(null), source_id: texto }).unknown(true).allow(null),
  custom_attributes: Joi.object().unknown(true).allow(null),
  // counted before it is checked (lerEventoDoSuporte)
  messages: Joi.array().items(mensagem).allow(null),
}).unknown(true);

const conta = Joi.object({ id: idNumerico.allow(null) }).unknown(true).allow(null);

// a message event's conversation carries its messages too (the same message, in Chatwoot): not read
// from there, so not checked twice
const eventoDeMensagem = esquemaPronto(
  mensagem.keys({ event: Joi.string().required(), conversation: conversa.keys({ messages: Joi.any() }).required(), account: conta }),
);
const eventoDeConversa = esquemaPronto(conversa.keys({ event: Joi.string().required(), account: conta }));
const FORA_DO_FORMATO = 'Evento da plataforma de atendimento fora do formato esperado.';

const textoOuNulo = (v: unknown): string | null => (typeof v === 'string' && v.trim() ? v.trim() : null);
/** A step's id as the platform's custom attributes hold it: text, or a number (an attribute of type number). */
const etapaDe = (v: unknown): string | null => (typeof v === 'number' && Number.isFinite(v) ? String(v) : textoOuNulo(v));

/**
 * A message's time in whole seconds: the platform writes it with milliseconds in a message event
 * and in whole seconds in the copies a conversation event carries, and whichever arrives first is
 * kept. One precision for both keeps messages in their order (ties by the platform's id) and the
 * robot's answer after the contact's message it answered within the same second. A time more than
 * ADIANTAMENTO_ACEITO_MS ahead is brought back to that.
 */
function dataDe(valor: number | string): Date {
  const ms = typeof valor === 'number' ? valor * 1000 : Date.parse(valor);
  return new Date(Math.floor(noMaximoAdiantado(ms, 'created_at') / 1000) * 1000);
}

/** An ISO date with its offset, as Rails writes one. */
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}(:?\d{2})?)$/i;

/**
 * The platform's `updated_at`, which orders the events of one conversation or message (webhooks
 * come in no guaranteed order): unix seconds with a fraction (Chatwoot writes a conversation's so)
 * or an ISO date (a message's, inside `conversation.messages`). Kept to the microsecond as SQL
 * DATETIME(6) text in UTC, which compares as text too. Anything else, a moment before the years a
 * date column holds, or one more than ADIANTAMENTO_ACEITO_MS ahead of this server's clock, is no
 * usable time: null, and the event is applied in arrival order as before (not refused: the field
 * is only a guard).
 */
export function momentoDaPlataforma(valor: unknown): string | null {
  let segundos: number;
  let micro: number;
  if (typeof valor === 'number' && Number.isFinite(valor)) {
    segundos = Math.floor(valor);
    micro = Math.round((valor - segundos) * 1e6);
  } else if (typeof valor === 'string' && ISO.test(valor)) {
    // Date.parse keeps milliseconds only: the fraction is read apart, up to the microsecond
    const fracao = /\.(\d+)/.exec(valor)?.[1] ?? '';
    const ms = Date.parse(valor.replace(/\.\d+/, ''));
    if (Number.isNaN(ms)) return null;
    segundos = Math.floor(ms / 1000);
    micro = Number(fracao.slice(0, 6).padEnd(6, '0'));
  } else {
    return null;
  }
  if (micro >= 1e6) {
    segundos += 1;
    micro -= 1e6;
  }
  if (segundos < PRIMEIRO_SEGUNDO || adiantadoDemais(segundos * 1000, 'updated_at')) return null;
  return `${new Date(segundos * 1000).toISOString().slice(0, 19).replace('T', ' ')}.${String(micro).padStart(6, '0')}`;
}

/**
 * Visible messages only: incoming (0), outgoing (1) and template (3, the inbox's automatic
 * messages). Private notes and activity lines (2: "conversation resolved by ...") are not
 * messages between the contact and the company.
 */
function visivel(m: any): boolean {
  if (m.private === true) return false;
  return ['incoming', 'outgoing', 'template', 0, 1, 3].includes(m.message_type);
}

function remetenteDe(m: any): MensagemDoSuporte['remetente'] {
  const tipo = String(m.sender?.type ?? m.sender_type ?? '').toLowerCase().replace(/_/g, '');
  const id = m.sender?.id ?? m.sender_id ?? null;
  if (tipo === 'contact') return { tipo: 'contato', id };
  if (tipo === 'agentbot') return { tipo: 'robo', id };
  // Chatwoot's own AI assistant (Captain): a robot answering, whose ids are not agent bots' (no robot linked by them)
  if (tipo === 'captainassistant' || tipo === 'captain::assistant') return { tipo: 'robo', id: null };
  if (tipo === 'user') return { tipo: 'usuario', id };
  // no sender: a template or an automation of the inbox
  if (m.message_type === 'incoming' || m.message_type === 0) return { tipo: 'contato', id };
  return { tipo: 'sistema', id };
}

/**
 * The file name of an attachment: the last segment of its address, else one made from its id. It
 * must be a name file storage accepts, or the copy would fail every time: control characters
 * become spaces, and it is cut at 255 UTF-16 units after NFC (file storage counts characters, of
 * which that is never more than 255) without splitting a character in two.
 */
function nomeDoAnexo(a: { id?: unknown; data_url?: unknown; extension?: unknown }): string {
  let ultimo = '';
  try {
    ultimo = decodeURIComponent(new URL(String(a.data_url)).pathname.split('/').filter(Boolean).pop() ?? '');
  } catch {
    // an undecodable name falls back to the id
  }
  return limpo(ultimo) || limpo(`anexo-${a.id ?? 'sem-id'}${a.extension ? `.${String(a.extension).replace(/^\./, '')}` : ''}`);
}

/** A name file storage takes: NFC, control characters as spaces, a lone surrogate as U+FFFD, trimmed, at most 255 units. */
const limpo = (nome: string) =>
  // eslint-disable-next-line no-control-regex
  cortar(nome.replace(/\p{Cs}/gu, '\uFFFD').normalize('NFC').replace(/[\u0000-\u001f\u007f]/g, ' ').trim(), 255).trim();

/**
 * Attachment types whose `data_url`, when there is one, is a page outside the platform (a place's
 * map or website, a page shared from another network), not a file it keeps: copying it would
 * store that page's HTML as the contact's file.
 */
const SEM_ARQUIVO = new Set(['location', 'fallback', 'contact']);

/** An attachment's address the copy can download: http(s), as the URL parser reads it (`ação.jpg`, `a|b` included), up to the 2,000 characters stored. */
function baixavel(valor: unknown): boolean {
  if (typeof valor !== 'string' || !valor || valor.length > 2000) return false;
  try {
    const { protocol } = new URL(valor);
    return protocol === 'https:' || protocol === 'http:';
  } catch {
    return false;
  }
}

function cortar(texto: string, unidades: number): string {
  const cortado = texto.slice(0, unidades);
  return /[\uD800-\uDBFF]$/.test(cortado) ? cortado.slice(0, -1) : cortado;
}

/**
 * A message as it is read: its attachments cut to the first ANEXOS_POR_MENSAGEM (a copy, the body
 * is left as it came), so those past them are neither checked nor read.
 */
function comAnexosLidos(m: unknown): unknown {
  const anexos = (m as { attachments?: unknown } | null)?.attachments;
  return Array.isArray(anexos) && anexos.length > ANEXOS_POR_MENSAGEM ? { ...(m as object), attachments: anexos.slice(0, ANEXOS_POR_MENSAGEM) } : m;
}

/** How many attachments of a message, as sent, comAnexosLidos left out. */
function anexosDeixadosDe(m: unknown): number {
  const anexos = (m as { attachments?: unknown } | null)?.attachments;
  return Array.isArray(anexos) ? Math.max(anexos.length - ANEXOS_POR_MENSAGEM, 0) : 0;
}

function lerMensagem(m: any, etapaDaConversa: string | null, anexosDeixados: number, atualizadaEm: unknown = m.updated_at): MensagemDoSuporte {
  const remetenteDaMensagem = remetenteDe(m);
  const apagada = m.content_attributes?.deleted === true;
  return {
    suporteMensagemId: m.id,
    remetente: remetenteDaMensagem,
    conteudo: m.content ?? '',
    criadaEm: dataDe(m.created_at),
    etapaId: (etapaDe(m.content_attributes?.etapa_id) ?? etapaDe(m.additional_attributes?.etapa_id))?.slice(0, 64) ?? etapaDaConversa,
    // an attachment without a file (a contact card, a location, a shared link) is not kept: there
    // is nothing to copy, and the message is stored all the same; a deleted message has none
    anexos: (apagada ? [] : (m.attachments ?? [])).filter((a: any) => baixavel(a.data_url) && !SEM_ARQUIVO.has(a.file_type)).map((a: any) => ({
      suporteAnexoId: a.id ?? null,
      endereco: a.data_url,
      nome: nomeDoAnexo(a),
      tipo: String(a.file_type || 'file').slice(0, 30),
    })),
    anexosDeixados: apagada ? 0 : anexosDeixados,
    apagada,
    atualizadaEm: momentoDaPlataforma(atualizadaEm),
  };
}

/**
 * The account of a conversation event's messages: Chatwoot's conversation events leave `account`
 * and `account_id` out, and write the account in each message they carry.
 */
function contaDasMensagens(mensagens: unknown): number | null {
  if (!Array.isArray(mensagens)) return null;
  const conta = mensagens.find((m) => Number.isSafeInteger(m?.account_id))?.account_id;
  return conta ?? null;
}

function lerConversa(c: any, contaDoEvento: number | null | undefined, remetenteDaMensagem?: any): ConversaDoSuporte {
  const contato = c.meta?.sender ?? (remetenteDaMensagem?.type === 'contact' ? remetenteDaMensagem : null);
  return {
    suporteConversaId: c.id,
    contaId: contaDoEvento ?? c.account_id ?? contaDasMensagens(c.messages),
    contatoId: contato?.id ?? c.contact_inbox?.contact_id ?? null,
    // composed (NFC), as a search is: a name sent decomposed (`a` + combining tilde) is the same
    // name; control characters as spaces, as a search has them: a line break would also split the
    // name from the phone in `contato_busca`, where the digits searched are looked for after it
    contatoNome: cortar(String(contato?.name ?? '').normalize('NFC').replace(/\p{Cc}/gu, ' '), 255),
    contatoTelefone: String(contato?.phone_number ?? '').slice(0, 40),
    status: c.status,
    etapaId: etapaDe(c.custom_attributes?.etapa_id)?.slice(0, 64) ?? null,
    atualizadaEm: momentoDaPlataforma(c.updated_at),
  };
}

/**
 * A message event's `updated_at` of its message: Chatwoot leaves it out of the top level and writes
 * it in the message's copy in `conversation.messages` (present when it is the conversation's last
 * message). That copy is not checked (see eventoDeMensagem), so it is read with care.
 */
function atualizadaEmDoEvento(e: any): unknown {
  if (e.updated_at !== undefined && e.updated_at !== null) return e.updated_at;
  const copias: unknown = e.conversation?.messages;
  if (!Array.isArray(copias)) return null;
  return copias.find((m) => m !== null && typeof m === 'object' && m.id === e.id)?.updated_at ?? null;
}

/** Reads one webhook body; events the service does not keep come back as `ignorado`. */
export function lerEventoDoSuporte(corpo: unknown): EventoDoSuporte {
  const evento = (corpo as { event?: unknown })?.event;
  if (typeof evento !== 'string') throw dadosInvalidos('Evento sem o campo event.', [{ campo: 'event', mensagem: 'obrigatório' }]);
  if (evento === 'message_created' || evento === 'message_updated') {
    const e = validarCom<any>(eventoDeMensagem, comAnexosLidos(corpo), FORA_DO_FORMATO);
    const c = lerConversa(e.conversation, e.account?.id, e.sender);
    const mensagem = visivel(e) ? lerMensagem(e, c.etapaId, anexosDeixadosDe(corpo), atualizadaEmDoEvento(e)) : null;
    return { tipo: 'mensagem', evento, conversa: c, mensagem };
  }
  if (evento === 'conversation_created' || evento === 'conversation_updated' || evento === 'conversation_status_changed') {
    const enviadas: unknown = (corpo as { messages?: unknown }).messages;
    // counted before any is checked: checking each message of an oversized list first cost seconds
    if (Array.isArray(enviadas) && enviadas.length > MENSAGENS_POR_EVENTO) {
      throw dadosInvalidos(FORA_DO_FORMATO, [{ campo: 'messages', mensagem: `no máximo ${MENSAGENS_POR_EVENTO} mensagens por evento` }]);
    }
    const lido = Array.isArray(enviadas) ? { ...(corpo as object), messages: enviadas.map(comAnexosLidos) } : corpo;
    const e = validarCom<any>(eventoDeConversa, lido, FORA_DO_FORMATO);
    const c = lerConversa(e, e.account?.id);
    const mensagens = ((e.messages ?? []) as any[]).flatMap((m, i) => (visivel(m) ? [lerMensagem(m, c.etapaId, anexosDeixadosDe((enviadas as unknown[])[i]))] : []));
    return { tipo: 'conversa', evento, conversa: c, mensagens };
  }
  return { tipo: 'ignorado', evento };
}

/**
 * DESIGN §10 `autor` and the robot a message links to: the contact; a robot (any agent bot, the
 * inbox's own automation, or a user that a registered robot answers as); anyone else of the team.
 */
export function autorDe(remetente: MensagemDoSuporte['remetente'], robos: IdentidadesDosRobos): { autor: AutorDaMensagem; roboId: string | null } {
  if (remetente.tipo === 'contato') return { autor: 'contato', roboId: null };
  if (remetente.tipo === 'sistema') return { autor: 'robo', roboId: null };
  const deRobo = remetente.id === null ? undefined : (remetente.tipo === 'robo' ? robos.bots : robos.usuarios).get(remetente.id);
  if (remetente.tipo === 'robo') return { autor: 'robo', roboId: deRobo ?? null };
  return deRobo ? { autor: 'robo', roboId: deRobo } : { autor: 'atendente', roboId: null };
}
