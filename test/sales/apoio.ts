import { createHmac, randomBytes, randomInt } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import { AddressInfo } from 'node:net';
import path from 'node:path';
import nock from 'nock';
import { config } from '../../config';
import { acessoDe } from '../helpers/acesso';
import { Resposta } from '../helpers/http';
import { iniciarSuite, SuiteDeTeste } from '../helpers/suite';

/**
 * Helpers of the sales tests: configured systems, the chat platform's and the gateway's webhooks
 * posted as those systems post them (payloads built on Chatwoot's own documented samples, in
 * test/fixtures/chat), and people with a given profile of area `clientes`.
 */

const FIXTURES = path.join(__dirname, '..', 'fixtures', 'chat');
export const fixture = (...partes: string[]) => JSON.parse(readFileSync(path.join(FIXTURES, ...partes), 'utf8'));

/** RFC 3339 in UTC, as SPEC §2 writes conversation dates. */
export const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

/** Ids the chat platform would give: unique per test run. */
export const idDoSuporte = () => randomInt(1, 2 ** 31);
/** The platform numbers messages in the order they are created (one sequence for all). */
let ultimaMensagem = randomInt(1, 2 ** 30);
export const idDeMensagem = () => ++ultimaMensagem;
/** A unique tag of letters only: a contact search's digits are compared with the phones, so a tag must have none. */
export const unico = (rotulo = 'T') => `${rotulo}${randomBytes(5).toString('hex').replace(/\d/g, (d) => 'ghijklmnop'[Number(d)])}`;

export interface Contato {
  id: number;
  nome: string;
  telefone: string | null;
}

export const novoContato = (campos: Partial<Contato> = {}): Contato => ({
  id: idDoSuporte(),
  nome: unico('Contato '),
  telefone: `+55119${randomInt(10_000_000, 99_999_999)}`,
  ...campos,
});

export interface Remetente {
  id: number | null;
  type: 'contact' | 'user' | 'agent_bot' | null;
  name?: string;
}

export interface OpcoesDaMensagem {
  conversa: number;
  mensagem?: number;
  conteudo?: string;
  /** message_type as the top of a message event writes it */
  tipo?: 'incoming' | 'outgoing' | 'activity' | 'template';
  privada?: boolean;
  remetente?: Remetente;
  contato?: Contato;
  status?: string;
  criadaEm?: Date;
  anexos?: ({ id: number; data_url?: string | null; file_type?: string } & Record<string, unknown>)[];
  evento?: 'message_created' | 'message_updated';
  conta?: number;
  etapa?: string;
}

/** A message event as Chatwoot posts it: the documented `message_created` sample with our own values. */
export function eventoDeMensagem(o: OpcoesDaMensagem) {
  const base = fixture('chatwoot', 'docs-2022_message_created.json');
  const contato = o.contato ?? novoContato();
  const tipo = o.tipo ?? 'incoming';
  const remetente = o.remetente ?? (tipo === 'incoming' ? { id: contato.id, type: 'contact', name: contato.nome } : { id: 1, type: 'user', name: 'Atendente' });
  return {
    ...base,
    event: o.evento ?? 'message_created',
    id: o.mensagem ?? idDeMensagem(),
    content: o.conteudo ?? unico('Mensagem '),
    created_at: (o.criadaEm ?? new Date()).toISOString(),
    message_type: tipo,
    private: o.privada ?? false,
    sender: remetente.type ? { id: remetente.id, name: remetente.name ?? '', avatar: '', type: remetente.type } : null,
    attachments: o.anexos,
    account: { id: o.conta ?? 1, name: 'Conta de teste' },
    conversation: {
      ...base.conversation,
      id: o.conversa,
      status: o.status ?? 'pending',
      messages: [],
      custom_attributes: o.etapa ? { etapa_id: o.etapa } : {},
      contact_inbox: { ...base.conversation.contact_inbox, contact_id: contato.id },
      meta: {
        ...base.conversation.meta,
        sender: { ...base.conversation.meta.sender, id: contato.id, name: contato.nome, phone_number: contato.telefone },
      },
    },
  };
}

/** A conversation event (the documented `conversation_status_changed` sample) with our own values. */
export function eventoDeConversa(
  evento: 'conversation_created' | 'conversation_updated' | 'conversation_status_changed',
  o: { conversa: number; status?: string; contato?: Contato; mensagens?: Record<string, unknown>[]; etapa?: string },
) {
  const base = fixture('chatwoot', 'docs-2022_conversation_status_changed.json');
  const contato = o.contato ?? novoContato();
  return {
    ...base,
    event: evento,
    id: o.conversa,
    status: o.status ?? 'pending',
    messages: o.mensagens ?? [],
    custom_attributes: o.etapa ? { etapa_id: o.etapa } : {},
    contact_inbox: { ...base.contact_inbox, contact_id: contato.id },
    meta: { ...base.meta, sender: { ...base.meta.sender, id: contato.id, name: contato.nome, phone_number: contato.telefone } },
    account: { id: 1, name: 'Conta de teste' },
  };
}

/** A message as `conversation.messages` carries it: integer message_type, unix seconds. */
export function mensagemAninhada(o: { id: number; conversa: number; conteudo: string; tipo: 0 | 1 | 2 | 3; privada?: boolean; senderType?: string; senderId?: number; criadaEm?: Date }) {
  return {
    id: o.id,
    content: o.conteudo,
    account_id: 1,
    inbox_id: 1,
    conversation_id: o.conversa,
    message_type: o.tipo,
    created_at: Math.floor((o.criadaEm ?? new Date()).getTime() / 1000),
    private: o.privada ?? false,
    status: 'sent',
    source_id: null,
    content_type: 'text',
    content_attributes: {},
    sender_type: o.senderType ?? null,
    sender_id: o.senderId ?? null,
    external_source_ids: {},
  };
}

/** The gateway's `messages.upsert` (the constructed Evolution sample) for a phone, sent by a messaging number. */
export function eventoDoGateway(telefone: string, numeroDoMensageiro: string, evento = 'messages.upsert') {
  const base = fixture('constructed', 'evolution_messages_upsert_text.json');
  return {
    ...base,
    event: evento,
    sender: `${numeroDoMensageiro.replace(/\D/g, '')}@s.whatsapp.net`,
    data: { ...base.data, key: { ...base.data.key, remoteJid: `${telefone.replace(/\D/g, '')}@s.whatsapp.net`, id: unico('WA') } },
  };
}

/** X-Chatwoot-Signature of a body: `sha256=<hex>` of `<timestamp>.<body>`. */
export function assinaturaDoChatwoot(segredo: string, carimbo: number | string, corpo: string): string {
  return `sha256=${createHmac('sha256', segredo).update(`${carimbo}.${corpo}`).digest('hex')}`;
}

export function salesDe(suite: SuiteDeTeste) {
  const acesso = acessoDe(suite.url.identity, suite.url.sales);
  const { api, admin } = acesso;

  async function criarSistema(tipo: 'suporte' | 'mensageiro' | 'gateway', campos: Record<string, unknown> = {}) {
    const res = await api.post('/config_system', { token: await admin(), body: { tipo, nome: unico(`${tipo} `), ...campos } });
    if (res.status !== 201) throw new Error(`create config_system: ${res.status} ${res.text}`);
    return res.body as { id: string; token: string; [k: string]: unknown };
  }

  /** POST /webhooks/suporte/{id}?token= with the event as the body. */
  function webhook(sistema: { id: string; token?: string }, evento: unknown, o: { token?: string | null; headers?: Record<string, string>; raw?: string } = {}) {
    const token = o.token === null ? undefined : (o.token ?? sistema.token);
    return api.post(`/webhooks/suporte/${sistema.id}`, { query: { token }, headers: o.headers, ...(o.raw !== undefined ? { raw: o.raw } : { body: evento }) });
  }

  function gateway(sistema: { id: string; token?: string }, evento: unknown, token = sistema.token) {
    return api.post(`/webhooks/gateway/${sistema.id}`, { query: { token }, body: evento });
  }

  /** Posts and expects the webhook to be taken (200). */
  async function registrar(sistema: { id: string; token?: string }, evento: unknown): Promise<any> {
    const res = await webhook(sistema, evento);
    if (res.status !== 200) throw new Error(`webhook: ${res.status} ${res.text}`);
    return res.body;
  }

  /** The live conversation of a chat-platform conversation id, through the filter route. */
  async function conversaDoSuporte(suporteConversaId: number): Promise<any> {
    const res = await api.get('/conversa/filtro', { token: await admin(), query: { suporte_conversa_id: suporteConversaId } });
    if (res.status !== 200) throw new Error(`filter: ${res.status} ${res.text}`);
    return res.body[0];
  }

  async function mensagens(conversaId: string): Promise<any[]> {
    const res = await api.get(`/conversa/${conversaId}/mensagens`, { token: await admin() });
    if (res.status !== 200) throw new Error(`messages: ${res.status} ${res.text}`);
    return res.body;
  }

  async function criar(recurso: 'cliente' | 'robo', body: Record<string, unknown>) {
    const res = await api.post(`/${recurso}`, { token: await admin(), body });
    if (res.status !== 201) throw new Error(`create ${recurso}: ${res.status} ${res.text}`);
    return res.body;
  }

  return { ...acesso, criarSistema, webhook, gateway, registrar, conversaDoSuporte, mensagens, criar };
}

export type Sales = ReturnType<typeof salesDe>;

/** The fields of SPEC §2 Conversa, exactly. */
export const CAMPOS_DA_CONVERSA = [
  'id',
  'suporte_conversa_id',
  'suporte_contato_id',
  'suporte_endereco_conversa',
  'config_system_suporte_id',
  'config_system_mensageiro_id',
  'config_system_mensageiro_nome',
  'config_system_gateway_id',
  'config_system_gateway_nome',
  'cliente_id',
  'cliente_razao_social',
  'robo_id',
  'robo_nome',
  'etapa_id',
  'contato_nome',
  'contato_telefone',
  'status',
  'ultima_mensagem',
  'ultima_mensagem_em',
  'ultima_mensagem_do_contato_em',
  'ultima_mensagem_do_robo_em',
  'transferida_em',
  'transferida_motivo',
  'quantidade_mensagens',
  'criado_em',
  'atualizado_em',
].sort();

export type { Resposta };

/**
 * The database refuses to record a copy of an attachment whose address holds `trecho` (a real
 * failure, from a trigger) until the answered function drops the trigger.
 */
export async function recusarRegistroDaCopia(sales: { query(sql: string): Promise<unknown> }, trecho: string): Promise<() => Promise<unknown>> {
  await sales.query(`CREATE TRIGGER falha_ao_registrar BEFORE UPDATE ON anexo_da_mensagem FOR EACH ROW
    BEGIN
      IF NEW.arquivo_id IS NOT NULL AND OLD.arquivo_id IS NULL AND NEW.endereco LIKE '%${trecho}%' THEN
        SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'falha simulada ao registrar a cópia';
      END IF;
    END`);
  return () => sales.query('DROP TRIGGER IF EXISTS falha_ao_registrar');
}

/** The chat platform of the attachment-copy tests, behind nock. */
export const CHAT = 'https://chat.exemplo.test';
/** Attachment copies are retried this far apart in the tests (30 minutes in production). */
export const ESPERA_ENTRE_TENTATIVAS_MS = 300;

/**
 * For a whole test file: identity, sales and file storage started in its beforeAll, stopped in its
 * afterAll; the answer is filled in once beforeAll has run.
 */
export function salesNesteArquivo(opcoes: { workers?: boolean } = {}): { suite: SuiteDeTeste; s: Sales } {
  const t = {} as { suite: SuiteDeTeste; s: Sales };
  beforeAll(async () => {
    t.suite = await iniciarSuite(['identity', 'sales', 'files'], opcoes);
    t.s = salesDe(t.suite);
  });
  afterAll(() => t.suite?.encerrar());
  return t;
}

/**
 * For a whole attachment-copy test file: identity, sales and file storage, copies retried
 * ESPERA_ENTRE_TENTATIVAS_MS apart, and a chat-platform system at CHAT with an API token.
 * Registers the file's beforeAll (start), afterEach (the chat platform's nock interceptors gone,
 * a delayed reply still waiting aborted so its timer outlives no test) and afterAll (the suite
 * stops); the answer is filled in once beforeAll has run.
 */
export function anexosNesteArquivo(opcoes: { workers?: boolean; env?: Record<string, string> } = {}): {
  suite: SuiteDeTeste;
  s: Sales;
  sistema: { id: string; token: string };
} {
  const t = {} as { suite: SuiteDeTeste; s: Sales; sistema: { id: string; token: string } };
  beforeAll(async () => {
    t.suite = await iniciarSuite(['identity', 'sales', 'files'], {
      ...opcoes,
      env: { SALES_ANEXO_RETRY_MS: String(ESPERA_ENTRE_TENTATIVAS_MS), ...opcoes.env },
    });
    t.s = salesDe(t.suite);
    t.sistema = await t.s.criarSistema('suporte', { url: CHAT, conta_id: 1, token_api: 'token-da-api-do-chat' });
  });
  afterEach(() => {
    nock.abortPendingRequests();
    nock.cleanAll();
  });
  afterAll(() => t.suite?.encerrar());
  return t;
}

/**
 * While `agir` runs, file storage (at `enderecoDoFiles`) is reached through a relay that passes
 * every request on and loses the answer to the first upload: file storage stores it, sales never
 * learns its id. `agir` gets how many uploads the relay has seen so far.
 */
export async function comRespostaDoEnvioPerdida<T>(enderecoDoFiles: string, agir: (envios: () => number) => Promise<T>): Promise<T> {
  let envios = 0;
  const relay = http.createServer((req, res) => {
    const ida = http.request(new URL(req.url!, enderecoDoFiles), { method: req.method, headers: req.headers }, (volta) => {
      if (req.method === 'POST' && envios++ === 0) {
        volta.resume();
        volta.on('end', () => res.socket?.destroy());
        return;
      }
      res.writeHead(volta.statusCode!, volta.headers);
      volta.pipe(res);
    });
    req.pipe(ida);
  });
  await new Promise<void>((r) => relay.listen(0, '127.0.0.1', r));
  const antes = config().servicos.files.url;
  config().servicos.files.url = `http://127.0.0.1:${(relay.address() as AddressInfo).port}`;
  try {
    return await agir(() => envios);
  } finally {
    config().servicos.files.url = antes;
    relay.closeAllConnections();
    await new Promise((r) => relay.close(r));
  }
}
