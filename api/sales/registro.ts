import { AGORA_NO_BANCO, banco, dataSql, emTransacaoAgrupada, lerPorTexto, repetirEmConflito, RespostaDoComando, TransacaoAgrupada, valorPorId } from '../../lib/database';
import { logger } from '../../lib/logger';
import { GravadorEmLotes, MENSAGEM_MAXIMA } from '../../lib/lotes';
import { AutorDaMensagem } from '../../models/sales';
import { novoId } from '../../models/shared/base';
import { enfileirarCopias, enfileirarRemocao, listarChavesSemCopia } from './anexos';
import { modoDaBusca, recopiarConversas } from './busca-de-texto';
import { SistemaDoWebhook } from './config-system';
import { identidadesDosRobos } from './robos';
import { dadosInvalidos } from '../shared/errors';
import { ANEXOS_POR_MENSAGEM, AnexoDoSuporte, autorDe, ConversaDoSuporte, EventoDoSuporte, MensagemDoSuporte } from './suporte';
import { chaveDoTelefone, digitos } from './telefone';

const log = logger('sales-webhook');

export interface ResultadoDoWebhook {
  /** the conversation record the event landed on (null when ignored) */
  conversa_id: string | null;
  /** messages stored by this call (0 for a repeated webhook) */
  mensagens_novas: number;
  ignorado?: string;
}

type EventoGuardado = Exclude<EventoDoSuporte, { tipo: 'ignorado' }>;

interface Pedido {
  sistema: SistemaDoWebhook;
  evento: EventoGuardado;
}

/** A message of the batch, with what the webhook decided of it. */
interface MensagemDoLote {
  pedido: number;
  m: MensagemDoSuporte;
  autor: AutorDaMensagem;
  roboId: string | null;
  id: string;
  criadaEm: string;
  conversaId?: string;
  nova?: boolean;
}

const chaveDaConversa = (sistemaId: string, suporteConversaId: number) => `${sistemaId}:${suporteConversaId}`;
const chaveDoPedido = (p: Pedido) => chaveDaConversa(p.sistema.id, p.evento.conversa.suporteConversaId);
const mensagensDe = (e: EventoGuardado) => (e.tipo === 'mensagem' ? (e.mensagem ? [e.mensagem] : []) : e.mensagens);

/**
 * What an event adds to its batch's SQL: each message's text, escaped (at most twice its bytes),
 * in its row and again as the conversation's last message, beside a kilobyte of fields and rows;
 * and each attachment's address and name, escaped, in its row (20 addresses of 2,000 characters
 * weigh as much as a long text).
 */
export function pesoDoEvento(evento: EventoGuardado): number {
  const pesoDosAnexos = (m: MensagemDoSuporte) =>
    m.anexos.reduce((peso, a) => peso + 2 * (Buffer.byteLength(a.endereco) + Buffer.byteLength(a.nome)) + 256, 0);
  return mensagensDe(evento).reduce((peso, m) => peso + 4 * Buffer.byteLength(m.conteudo) + 1024 + pesoDosAnexos(m), 1024);
}
const lista = (n: number, item: string) => Array(n).fill(item).join(', ');

/** The chat platform's panel link of a conversation, when the system's address and account are known. */
function enderecoNoPainel(sistema: SistemaDoWebhook, c: ConversaDoSuporte): string | null {
  const conta = c.contaId ?? sistema.contaId;
  if (!sistema.url || conta === null) return null;
  return `${sistema.url}/app/accounts/${conta}/conversations/${c.suporteConversaId}`.slice(0, 700);
}

/** What deleted records of a chat conversation leave behind. */
interface HistoricoApagado {
  /** no live record: only a new message starts one */
  semRegistroVivo: boolean;
  /** the last chat message the deleted records held: it and the earlier ones stay deleted */
  apagadaAte: number | null;
}

/**
 * The batch's chat conversations that had records deleted. A deleted history cannot be restored
 * (SPEC §3): its messages never come back, whatever event brings them (a delivery or read
 * receipt's `message_updated`, a repeated `message_created`, the last message Chatwoot repeats in
 * every conversation event), and, with no live record left, only a new message starts a new one.
 */
async function historicosApagados(t: TransacaoAgrupada, pedidos: Pedido[]): Promise<Map<string, HistoricoApagado>> {
  const chaves = [...new Map(pedidos.map((p) => [chaveDoPedido(p), p])).values()];
  // sent with the transaction's next message (see gravarLote); the index is named, or the planner
  // may range over every conversation of the system
  const linhas = (await t.depois(
    `SELECT config_system_suporte_id AS sistema, suporte_conversa_id AS conversa, MAX(deletado_em IS NULL) AS viva,
            MAX(suporte_mensagem_apagada_ate) AS ate
       FROM conversa FORCE INDEX (conversa_suporte_conversa)
      WHERE (config_system_suporte_id, suporte_conversa_id) IN (${lista(chaves.length, '(?, ?)')})
      GROUP BY config_system_suporte_id, suporte_conversa_id HAVING COUNT(deletado_em) > 0`,
    chaves.flatMap((p) => [p.sistema.id, p.evento.conversa.suporteConversaId]),
  )) as { sistema: string; conversa: number; viva: number; ate: number | string | null }[];
  return new Map(
    linhas.map((l) => [chaveDaConversa(l.sistema, Number(l.conversa)), { semRegistroVivo: !Number(l.viva), apagadaAte: l.ate === null ? null : Number(l.ate) }]),
  );
}

interface ConversasGravadas {
  novas: Set<string>;
  /** chat conversation key → its live record's id */
  ids: Promise<Map<string, string>>;
}

/**
 * Whether an event's copy of a conversation or message (its platform `updated_at`) is not older
 * than what was applied, in SQL (`novo` against the column `aplicado`): equal applies (a repeated
 * webhook changes nothing), and either side without a time applies, in arrival order, as before the
 * platform's times were kept.
 */
const NAO_EH_MAIS_VELHO = (novo: string, aplicado: string) => `(${novo} IS NULL OR ${aplicado} IS NULL OR ${novo} >= ${aplicado})`;
/**
 * Whether the event's copy of the conversation is one whose status the team corrected by PATCH
 * since (SPEC 4.6 rule 6), or the hand-over set to `open` (transferencia.ts): not newer than the
 * copy the correction was made over. A message event
 * carries the conversation as it stands, with the same `updated_at` until the platform changes the
 * conversation, and a copy sent before the correction may arrive after it: either would put the
 * platform's old status back. A copy without a time applies, in arrival order, as any other.
 */
const CORRIGIDO_PELA_EQUIPE = `(VALUES(suporte_atualizada_em) IS NOT NULL AND status_corrigido_sobre IS NOT NULL
       AND VALUES(suporte_atualizada_em) <= status_corrigido_sobre)`;
/**
 * The mark a status decision of ours (PATCH, the hand-over) leaves in `status_corrigido_sobre`, in
 * SQL over the row it is written on: the platform's `updated_at` of the copy it was made over, to
 * the microsecond. A record with no platform time yet (its events carried none usable, or it
 * predates 0008) is marked with the moment of the decision by the database's clock, one for every
 * process, so that a copy the platform stamped before it is stale; a skew between that clock and
 * the platform's moves the line by as much. A mark never goes back: copies it made stale stay so.
 */
export const MARCA_DA_DECISAO = `GREATEST(COALESCE(suporte_atualizada_em, UTC_TIMESTAMP(6)),
       COALESCE(status_corrigido_sobre, suporte_atualizada_em, UTC_TIMESTAMP(6)))`;
/** The later of two platform times, either of them null. */
const MAIS_RECENTE = (a: string, b: string) => `GREATEST(COALESCE(${a}, ${b}), COALESCE(${b}, ${a}))`;

/**
 * The batch's events in conversation key order (concurrent batches lock rows in the same order),
 * each conversation's in arrival order: one row each, which the insert applies one after the other,
 * each judged by the guard against what the rows before it left, exactly as if they came one by one
 * (events arrive in no guaranteed order, so a late copy of the conversation must not undo a newer
 * one; one without a time applies, and leaves the newest time kept).
 */
function emOrdemDeChave(pedidos: Pedido[]): { chave: string; pedido: Pedido }[] {
  return pedidos
    .map((pedido, i) => ({ chave: chaveDoPedido(pedido), pedido, i }))
    .sort((a, b) => (a.chave < b.chave ? -1 : a.chave > b.chave ? 1 : a.i - b.i));
}

/**
 * An upsert's assignments, `atualizado_em` first: moved only when one of their values changes, so
 * a repeated webhook, or a newer copy of the conversation that changes nothing kept here (its
 * assignee, its labels), leaves the record as it was. Assignments run left to right, each reading the columns as
 * the ones before it left them; read first, every expression sees the row as it was, as each one
 * does in its own place (no assignment here reads a column assigned before it).
 */
function comoAtualizacao(atribuicoes: [coluna: string, valor: string][]): string {
  // byte by byte: the collation would take a name changed only in case for the same
  const iguais = atribuicoes.map(([coluna, valor]) => `BINARY (${valor}) <=> BINARY ${coluna}`).join(' AND ');
  return [`atualizado_em = IF(${iguais}, atualizado_em, VALUES(atualizado_em))`, ...atribuicoes.map(([coluna, valor]) => `${coluna} = ${valor}`)].join(',\n       ');
}

/**
 * The phone's link to the gateway (contato_gateway), only while that gateway is configured: a
 * system deleted since is linked to no conversation created or reopened after (DESIGN §4: a deleted
 * record vanishes from every read), nor is a deleted messaging number. Those linked before keep it.
 * Read by subselects in the INSERT's VALUES, which InnoDB makes locking reads even in READ
 * COMMITTED: they wait for a link the gateway has not committed (gateway.ts relies on it; an
 * INSERT ... SELECT would read a snapshot instead, and miss it).
 */
const VINCULO_VIVO = 'contato_gateway cg JOIN config_system g ON g.id = cg.config_system_gateway_id AND g.deletado_em IS NULL';

/**
 * The live record of each chat conversation, created when there is none and brought up to date
 * otherwise: contact, status (mirrored), flow step, and the gateway's link of the phone when it has
 * none yet. One row per event (emOrdemDeChave). The record keeps the newest platform `updated_at`
 * it applied: an older copy (a late webhook) leaves the contact, status and step as they are.
 * Answers the ids it gives the records it may create (the first row of a conversation creates
 * it), and, once its message is sent, the live record of each conversation.
 */
function gravarConversas(t: TransacaoAgrupada, pedidos: Pedido[], agora: string): ConversasGravadas {
  if (!pedidos.length) return { novas: new Set(), ids: Promise.resolve(new Map()) };
  const emOrdem = emOrdemDeChave(pedidos);
  const porChave = new Map(emOrdem.map((e) => [e.chave, e.pedido]));
  const linhas = emOrdem.map(({ pedido: { sistema, evento } }) => {
    const c = evento.conversa;
    const telefone = chaveDoTelefone(c.contatoTelefone);
    return [novoId(), sistema.id, c.suporteConversaId, c.contaId, c.contatoId, enderecoNoPainel(sistema, c), telefone, telefone, c.etapaId,
      c.contatoNome, c.contatoTelefone, digitos(c.contatoTelefone), c.status, c.atualizadaEm, agora, agora];
  });
  // the event's copy of the conversation, unless older than the one the record holds
  const daCopia = (valor: string, coluna: string) =>
    `IF(${NAO_EH_MAIS_VELHO('VALUES(suporte_atualizada_em)', 'suporte_atualizada_em')}, ${valor}, ${coluna})`;
  const novosDigitos = daCopia(`IF(VALUES(contato_telefone) = '', contato_telefone_digitos, VALUES(contato_telefone_digitos))`, 'contato_telefone_digitos');
  const novoStatus = daCopia(`IF(${CORRIGIDO_PELA_EQUIPE}, status, VALUES(status))`, 'status');
  // the phone's link, where the gateway knows one, replaces the record's when the conversation
  // reopens (the gateway links running conversations only, and the contact may have come back on
  // another number) or its phone changes; read before status and phone are assigned, as they were
  const religa = `(VALUES(config_system_gateway_id) IS NOT NULL
       AND ((status = 'resolved' AND ${novoStatus} <> 'resolved') OR NOT (BINARY contato_telefone_digitos <=> BINARY ${novosDigitos})))`;
  void t.depois(
    `INSERT INTO conversa (id, config_system_suporte_id, suporte_conversa_id, suporte_conta_id, suporte_contato_id,
       suporte_endereco_conversa, config_system_gateway_id, config_system_mensageiro_id, etapa_id, contato_nome,
       contato_telefone, contato_telefone_digitos, status, suporte_atualizada_em, ultima_mensagem, quantidade_mensagens,
       criado_em, atualizado_em)
     VALUES ${lista(linhas.length, `(?, ?, ?, ?, ?, ?,
       (SELECT cg.config_system_gateway_id FROM ${VINCULO_VIVO} WHERE cg.telefone_chave = ?),
       (SELECT m.id FROM ${VINCULO_VIVO} JOIN config_system m ON m.id = cg.config_system_mensageiro_id AND m.deletado_em IS NULL
         WHERE cg.telefone_chave = ?),
       ?, ?, ?, ?, ?, ?, '', 0, ?, ?)`)}
     ON DUPLICATE KEY UPDATE ${comoAtualizacao([
       ['suporte_conta_id', 'COALESCE(VALUES(suporte_conta_id), suporte_conta_id)'],
       ['suporte_contato_id', daCopia('COALESCE(VALUES(suporte_contato_id), suporte_contato_id)', 'suporte_contato_id')],
       ['suporte_endereco_conversa', 'COALESCE(VALUES(suporte_endereco_conversa), suporte_endereco_conversa)'],
       ['config_system_mensageiro_id', `IF(config_system_gateway_id IS NULL OR ${religa}, VALUES(config_system_mensageiro_id), config_system_mensageiro_id)`],
       ['config_system_gateway_id', `IF(${religa}, VALUES(config_system_gateway_id), COALESCE(config_system_gateway_id, VALUES(config_system_gateway_id)))`],
       ['etapa_id', daCopia('COALESCE(VALUES(etapa_id), etapa_id)', 'etapa_id')],
       ['contato_nome', daCopia(`IF(VALUES(contato_nome) = '', contato_nome, VALUES(contato_nome))`, 'contato_nome')],
       ['contato_telefone_digitos', novosDigitos],
       ['contato_telefone', daCopia(`IF(VALUES(contato_telefone) = '', contato_telefone, VALUES(contato_telefone))`, 'contato_telefone')],
       ['status', novoStatus],
     ])},
       suporte_atualizada_em = ${MAIS_RECENTE('VALUES(suporte_atualizada_em)', 'suporte_atualizada_em')}`,
    linhas.flat(),
  );
  const ids = t.depois(
    `SELECT id, config_system_suporte_id AS sistema, suporte_conversa_viva AS conversa FROM conversa
      WHERE (config_system_suporte_id, suporte_conversa_viva) IN (${lista(porChave.size, '(?, ?)')})`,
    [...porChave.values()].flatMap((p) => [p.sistema.id, p.evento.conversa.suporteConversaId]),
  ) as Promise<{ id: string; sistema: string; conversa: number }[]>;
  return {
    novas: new Set(linhas.map((l) => l[0] as string)),
    ids: ids.then((lidas) => new Map(lidas.map((l) => [chaveDaConversa(l.sistema, Number(l.conversa)), l.id]))),
  };
}

/**
 * Stores each message once: a repeated webhook (in this batch or before it) finds its row and
 * changes nothing. A message is new when the row found is the one this batch wrote.
 */
async function gravarMensagens(t: TransacaoAgrupada, mensagens: MensagemDoLote[], agora: string): Promise<void> {
  if (!mensagens.length) return;
  const ordem = [...mensagens].sort((a, b) => (a.conversaId! < b.conversaId! ? -1 : a.conversaId! > b.conversaId! ? 1 : a.m.suporteMensagemId - b.m.suporteMensagemId));
  void t.depois(
    `INSERT INTO conversa_mensagem (conversa_id, suporte_mensagem_id, id, autor, conteudo, etapa_id, criada_em,
       quantidade_anexos, apagada, suporte_atualizada_em, criado_em, atualizado_em) VALUES ?
     ON DUPLICATE KEY UPDATE conversa_id = conversa_id`,
    [
      ordem.map((x) => [
        x.conversaId, x.m.suporteMensagemId, x.id, x.autor, x.m.conteudo, x.autor === 'robo' ? x.m.etapaId : null, x.criadaEm,
        x.m.anexos.length, x.m.apagada, x.m.atualizadaEm, agora, agora,
      ]),
    ],
  );
  const linhas = await t.consultar<{ id: string }>(
    `SELECT id FROM conversa_mensagem WHERE (conversa_id, suporte_mensagem_id) IN (${lista(ordem.length, '(?, ?)')})`,
    ordem.flatMap((x) => [x.conversaId, x.m.suporteMensagemId]),
  );
  const gravadas = new Set(linhas.map((l) => l.id));
  for (const x of mensagens) x.nova = gravadas.has(x.id);
}

function gravarAnexos(t: TransacaoAgrupada, novas: MensagemDoLote[], agora: string): string[] {
  const anexos: (AnexoDoSuporte & { id: string; mensagemId: string; conversaId: string })[] = novas.flatMap((x) =>
    x.m.anexos.map((a) => ({ ...a, id: novoId(), mensagemId: x.id, conversaId: x.conversaId! })),
  );
  if (!anexos.length) return [];
  // atualizado_em on the database's clock: the attachments' sweep compares it with that clock (anexos.ts)
  void t.depois(
    `INSERT INTO anexo_da_mensagem (id, mensagem_id, conversa_id, suporte_anexo_id, endereco, nome, tipo, tentativas,
       criado_em, atualizado_em) VALUES ${lista(anexos.length, `(?, ?, ?, ?, ?, ?, ?, 0, ?, ${AGORA_NO_BANCO})`)}`,
    anexos.flatMap((a) => [a.id, a.mensagemId, a.conversaId, a.suporteAnexoId, a.endereco, a.nome, a.tipo, agora]),
  );
  return anexos.map((a) => a.id);
}

/**
 * Whether the conversation holds a message of the same second after the one given: messages are
 * kept in whole seconds, and of one second the last is the platform's last (its ids grow).
 */
const ULTIMA_DO_SEGUNDO_DEPOIS = (conversa: string, em: string, suporteId: string) =>
  `EXISTS (SELECT 1 FROM conversa_mensagem o WHERE o.conversa_id = ${conversa} AND o.criada_em = ${em} AND o.suporte_mensagem_id > ${suporteId})`;

/**
 * The new messages move each conversation's count and last-message fields, which only ever
 * advance: a message that arrives late does not hide a more recent one. One UPDATE by primary key
 * for the batch's conversations (each value picked by a CASE on the id), so it locks those rows
 * and no other.
 */
function moverContadores(t: TransacaoAgrupada, novas: MensagemDoLote[], agora: string): void {
  const porConversa = new Map<
    string,
    { n: number; em: string; suporteId: number; texto: string; contatoEm: string | null; roboEm: string | null; roboId: string | null }
  >();
  for (const x of novas) {
    const c = porConversa.get(x.conversaId!) ?? { n: 0, em: x.criadaEm, suporteId: x.m.suporteMensagemId, texto: x.m.conteudo, contatoEm: null, roboEm: null, roboId: null };
    c.n++;
    // the last message is the latest, and of one second the platform's last (its ids grow)
    if (x.criadaEm > c.em || (x.criadaEm === c.em && x.m.suporteMensagemId >= c.suporteId)) {
      Object.assign(c, { em: x.criadaEm, suporteId: x.m.suporteMensagemId, texto: x.m.conteudo });
    }
    if (x.autor === 'contato' && (!c.contatoEm || x.criadaEm > c.contatoEm)) c.contatoEm = x.criadaEm;
    // an automatic message of the inbox (no sender) is no answer of the robot: the hand-over still waits for one
    const doRobo = x.autor === 'robo' && x.m.remetente.tipo !== 'sistema';
    if (doRobo && (!c.roboEm || x.criadaEm > c.roboEm)) c.roboEm = x.criadaEm;
    c.roboId ??= x.roboId;
    porConversa.set(x.conversaId!, c);
  }
  if (!porConversa.size) return;
  const ids = [...porConversa.keys()].sort();
  const parametros: unknown[] = [];
  /** each conversation's own value (lib/database.ts valorPorId), its parameters pushed in order of appearance */
  const porId = (valor: (c: NonNullable<ReturnType<typeof porConversa.get>>) => unknown, data = false) => {
    // qualified: some values are read inside a subquery of conversa_mensagem, which has an id too
    const caso = valorPorId(ids, (id) => id, (id) => valor(porConversa.get(id)!), data ? 'DATETIME(3)' : undefined, 'conversa.id');
    parametros.push(...caso.parametros);
    return caso.sql;
  };
  // assignments run left to right: each reads the columns as they were, before its own
  const em = () => porId((c) => c.em, true);
  const sets = [
    `ultima_mensagem = IF(ultima_mensagem_em IS NULL OR ${em()} > ultima_mensagem_em
       OR (${em()} = ultima_mensagem_em AND NOT ${ULTIMA_DO_SEGUNDO_DEPOIS('conversa.id', em(), porId((c) => c.suporteId))}),
       ${porId((c) => c.texto)}, ultima_mensagem)`,
    `ultima_mensagem_em = GREATEST(COALESCE(ultima_mensagem_em, ${em()}), ${em()})`,
    `quantidade_mensagens = quantidade_mensagens + ${porId((c) => c.n)}`,
    `ultima_mensagem_do_contato_em = COALESCE(GREATEST(ultima_mensagem_do_contato_em, ${porId((c) => c.contatoEm, true)}), ultima_mensagem_do_contato_em, ${porId((c) => c.contatoEm, true)})`,
    `ultima_mensagem_do_robo_em = COALESCE(GREATEST(ultima_mensagem_do_robo_em, ${porId((c) => c.roboEm, true)}), ultima_mensagem_do_robo_em, ${porId((c) => c.roboEm, true)})`,
    // the first robot seen, unless the team chose (or cleared) the robot by PATCH; and only a live
    // one: the identities are cached (robos.ts), and another process may have deleted it since
    `robo_id = IF(robo_escolhido OR robo_id IS NOT NULL, robo_id,
       (SELECT r.id FROM robo r WHERE r.id = ${porId((c) => c.roboId)} AND r.deletado_em IS NULL))`,
  ];
  void t.depois(`UPDATE conversa SET ${sets.join(', ')}, atualizado_em = ? WHERE id IN (?)`, [...parametros, agora, ids]);
}

/**
 * message_updated of a message already stored: its new text (an edit, or the platform's "deleted"
 * notice). A message deleted in the platform loses its attachments there, and so it does here:
 * their copies go on the removal list, so their links stop working, and the keys of those not
 * copied too (an upload stored with its answer lost). A deleted message keeps the notice: an edit
 * or a read receipt sent before the deletion may arrive after it. An edit whose copy of the
 * message is older than the one applied (its platform `updated_at`) changes nothing either;
 * a deletion is final in the platform, nothing newer can follow it, so it applies whatever its time.
 */
function atualizarMensagem(t: TransacaoAgrupada, x: MensagemDoLote, agora: string): void {
  const mensagem = [x.conversaId, x.m.suporteMensagemId];
  if (x.m.apagada) {
    const daMensagem = 'JOIN conversa_mensagem m ON m.id = a.mensagem_id WHERE m.conversa_id = ? AND m.suporte_mensagem_id = ?';
    // the attachments locked first: a copy being recorded right now is waited for, and its file
    // read below (read committed reads past a row lock, and would find no file to remove)
    void t.depois(`SELECT a.id FROM anexo_da_mensagem a ${daMensagem} FOR UPDATE`, mensagem);
    void t.depois(
      `INSERT IGNORE INTO arquivo_a_apagar (arquivo_id, criado_em)
         SELECT a.arquivo_id, ? FROM anexo_da_mensagem a ${daMensagem} AND a.arquivo_id IS NOT NULL`,
      [agora, ...mensagem],
    );
    void t.depois(listarChavesSemCopia(`anexo_da_mensagem a ${daMensagem}`), mensagem);
    void t.depois(`DELETE a FROM anexo_da_mensagem a ${daMensagem}`, mensagem);
  }
  const em = 'CAST(? AS DATETIME(6))';
  void t.depois(
    `UPDATE conversa_mensagem SET conteudo = ?, atualizado_em = ?, suporte_atualizada_em = ${MAIS_RECENTE(em, 'suporte_atualizada_em')}
       ${x.m.apagada ? ', quantidade_anexos = 0, apagada = 1' : ''}
      WHERE conversa_id = ? AND suporte_mensagem_id = ? AND NOT apagada
        ${x.m.apagada ? '' : `AND ${NAO_EH_MAIS_VELHO(em, 'suporte_atualizada_em')}`}`,
    [x.m.conteudo, agora, x.m.atualizadaEm, x.m.atualizadaEm, ...mensagem, ...(x.m.apagada ? [] : [x.m.atualizadaEm, x.m.atualizadaEm])],
  );
  // when it is the last message, that takes the stored text, whether or not this update changed it,
  // and the record's atualizado_em moves with it. The comparison is in WHERE: a multi-table UPDATE's
  // assignments have no guaranteed order, so one cannot read what another assigns
  void t.depois(
    `UPDATE conversa c JOIN conversa_mensagem m ON m.conversa_id = c.id AND m.suporte_mensagem_id = ?
        SET c.atualizado_em = ?, c.ultima_mensagem = m.conteudo
      WHERE c.id = ? AND NOT (BINARY c.ultima_mensagem <=> BINARY m.conteudo)
        AND c.ultima_mensagem_em = m.criada_em AND NOT ${ULTIMA_DO_SEGUNDO_DEPOIS('c.id', 'm.criada_em', 'm.suporte_mensagem_id')}`,
    [x.m.suporteMensagemId, agora, x.conversaId],
  );
}

/**
 * The attachments an edit of a stored message carries that it does not hold yet (by the platform's
 * id), up to ANEXOS_POR_MENSAGEM in all: Chatwoot creates an e-mail's message first and adds its
 * attachments in a second save, which reaches us as `message_updated`. One whose platform id is
 * unknown cannot be told from those it holds, and is left out. Each insert's answer says whether
 * it went in (its copy is queued after the commit). The batch holds the conversation's row, so no
 * deletion of it or of its messages runs meanwhile.
 */
function acrescentarAnexos(t: TransacaoAgrupada, x: MensagemDoLote, agora: string): { id: string; inserido: Promise<RespostaDoComando> }[] {
  const novos = x.m.anexos.filter((a) => a.suporteAnexoId !== null);
  if (x.m.apagada || !novos.length) return [];
  const daMensagem = 'm.conversa_id = ? AND m.suporte_mensagem_id = ? AND NOT m.apagada';
  const inseridos = novos.map((a) => {
    const id = novoId();
    const inserido = t.depois(
      `INSERT INTO anexo_da_mensagem (id, mensagem_id, conversa_id, suporte_anexo_id, endereco, nome, tipo, tentativas, criado_em, atualizado_em)
         SELECT ?, m.id, m.conversa_id, ?, ?, ?, ?, 0, ?, ${AGORA_NO_BANCO} FROM conversa_mensagem m
          WHERE ${daMensagem}
            AND NOT EXISTS (SELECT 1 FROM anexo_da_mensagem a WHERE a.mensagem_id = m.id AND a.suporte_anexo_id = ?)
            AND (SELECT COUNT(*) FROM anexo_da_mensagem a WHERE a.mensagem_id = m.id) < ${ANEXOS_POR_MENSAGEM}`,
      [id, a.suporteAnexoId, a.endereco, a.nome, a.tipo, agora, x.conversaId, x.m.suporteMensagemId, a.suporteAnexoId],
    );
    return { id, inserido };
  });
  void t.depois(
    `UPDATE conversa_mensagem m SET quantidade_anexos = (SELECT COUNT(*) FROM anexo_da_mensagem a WHERE a.mensagem_id = m.id) WHERE ${daMensagem}`,
    [x.conversaId, x.m.suporteMensagemId],
  );
  return inseridos;
}

/** A new message stored without the attachments it carried past ANEXOS_POR_MENSAGEM (suporte.ts): what its warning names. */
interface AnexosDeixados {
  sistema: string;
  suporte_conversa_id: number;
  conversa_id: string;
  suporte_mensagem_id: number;
  mensagem_id: string;
  gravados: number;
  deixados: number;
}

/** A batch whose conversations were written for other events than the deleted records leave: what was read. */
class HistoricoMudaOLote extends Error {
  constructor(readonly lido: Map<string, HistoricoApagado>) {
    super('deleted records changed the batch');
  }
}

/**
 * The events a batch keeps, and their messages: a message of a deleted history is dropped, and an
 * event of a conversation with no live record is kept only from a new message on (in event order,
 * a new message earlier in the batch opens the new record for the events after it). A new message
 * is a message_created, or a message_updated of a message after the deleted history's last one:
 * that message itself, its edit or receipt come before its creation (webhooks keep no order).
 */
function escolherEventos(lote: Pedido[], apagados: Map<string, HistoricoApagado>) {
  const ateDe = (p: Pedido) => apagados.get(chaveDoPedido(p))?.apagadaAte ?? null;
  const mensagensDoPedido = lote.map((p) => {
    const ate = ateDe(p);
    return mensagensDe(p.evento).filter((m) => ate === null || m.suporteMensagemId > ate);
  });
  const reabertas = new Set<string>();
  const validos = new Set(
    lote.filter((p, i) => {
      const chave = chaveDoPedido(p);
      // with no last message known (a history deleted empty, or before 0003), an update may be of an old one
      const nova = p.evento.evento === 'message_created' || (p.evento.evento === 'message_updated' && ateDe(p) !== null);
      if (nova && mensagensDoPedido[i].length) reabertas.add(chave);
      return !apagados.get(chave)?.semRegistroVivo || reabertas.has(chave);
    }),
  );
  return { validos, mensagensDoPedido };
}

/**
 * A batch of chat-platform events in one transaction: conversations, then messages, attachments
 * and counters, each in one statement (the attachments an edit adds, one statement each). The
 * statements travel in three messages (lib/database.ts TransacaoAgrupada): up to the
 * conversations' ids, up to the messages' ids, the rest with the commit. Each event gets the
 * answer it would have had alone.
 */
async function gravarLote(
  lote: Pedido[],
  assumido = new Map<string, HistoricoApagado>(),
): Promise<{ resultados: ResultadoDoWebhook[]; anexos: string[]; copiasARemover: boolean; anexosDeixados: AnexosDeixados[] }> {
  const robos = await identidadesDosRobos();
  const gravado = await emTransacaoAgrupada(
    banco('sales'),
    async (t) => {
      const agora = dataSql(new Date());
      // Deleted records are rare: the conversations are written as `assumido` says (at first, that
      // there are none), and what they left is read right after, in the same message. Read after
      // the upsert, it sees a DELETE that committed while the upsert waited on its row (the upsert
      // then made a new record, which is no live record the deletion left). When the events kept
      // differ, the batch is rolled back and written again as read (HistoricoMudaOLote).
      const { validos } = escolherEventos(lote, assumido);
      const conversas = gravarConversas(t, [...validos], agora);
      const leitura = historicosApagados(t, lote);
      // awaited below only when the message carrying them succeeded: a failed one must not go unhandled
      leitura.catch(() => undefined);
      conversas.ids.catch(() => undefined);
      await t.enviar();
      const ids = await conversas.ids;
      const lido = await leitura;
      for (const [chave, h] of lido) if (conversas.novas.has(ids.get(chave) ?? '')) h.semRegistroVivo = true;
      const escolha = escolherEventos(lote, lido);
      if (lote.some((p) => escolha.validos.has(p) !== validos.has(p))) throw new HistoricoMudaOLote(lido);
      const { mensagensDoPedido } = escolha;

      const mensagens: MensagemDoLote[] = lote.flatMap((p, pedido) =>
        (validos.has(p) ? mensagensDoPedido[pedido] : []).map((m) => {
          const { autor, roboId } = autorDe(m.remetente, robos);
          return { pedido, m, autor, roboId, id: novoId(), criadaEm: dataSql(m.criadaEm), conversaId: ids.get(chaveDoPedido(p)) };
        }),
      );
      await gravarMensagens(t, mensagens, agora);
      const novas = mensagens.filter((x) => x.nova);
      const anexos = gravarAnexos(t, novas, agora);
      moverContadores(t, novas, agora);
      const atualizadas = mensagens.filter((x) => !x.nova && lote[x.pedido].evento.evento === 'message_updated');
      for (const x of atualizadas) atualizarMensagem(t, x, agora);
      const anexosDasEdicoes = atualizadas.flatMap((x) => acrescentarAnexos(t, x, agora));

      const novasPorPedido = lote.map(() => 0);
      for (const x of novas) novasPorPedido[x.pedido]++;
      const resultados = lote.map((p, i): ResultadoDoWebhook => {
        const conversaId = ids.get(chaveDoPedido(p));
        if (!validos.has(p) || !conversaId) {
          return { conversa_id: null, mensagens_novas: 0, ignorado: 'conversa apagada; só uma nova mensagem abre outro registro' };
        }
        return { conversa_id: conversaId, mensagens_novas: novasPorPedido[i] };
      });
      const anexosDeixados = novas.flatMap((x): AnexosDeixados[] =>
        x.m.anexosDeixados
          ? [{ sistema: lote[x.pedido].sistema.id, suporte_conversa_id: lote[x.pedido].evento.conversa.suporteConversaId, conversa_id: x.conversaId!,
              suporte_mensagem_id: x.m.suporteMensagemId, mensagem_id: x.id, gravados: x.m.anexos.length, deixados: x.m.anexosDeixados }]
          : [],
      );
      return { resultados, anexos, anexosDasEdicoes, copiasARemover: atualizadas.some((x) => x.m.apagada), anexosDeixados };
    },
    { leituraConfirmada: true },
  );
  // committed: the inserts of the edits' attachments have answered
  const { anexosDasEdicoes, ...gravados } = gravado;
  const acrescentados: string[] = [];
  for (const a of anexosDasEdicoes) if (((await a.inserido) as { affectedRows: number }).affectedRows) acrescentados.push(a.id);
  return { ...gravados, anexos: [...gravados.anexos, ...acrescentados] };
}

/**
 * A batch with edits that failed for good: its text-index copies may hold the new texts while the
 * messages kept the old ones (busca-de-texto.ts), so they are copied again from the database.
 */
async function repararIndiceDeTexto(lote: Pedido[]): Promise<void> {
  const editadas = lote.filter((p) => p.evento.evento === 'message_updated');
  if (modoDaBusca() !== 'indice' || !editadas.length) return;
  try {
    const conversas = await lerPorTexto<{ id: string }>(
      banco('sales'),
      // the index named, as in historicosApagados: the planner may otherwise range over every conversation of the system
      'SELECT id FROM conversa FORCE INDEX (conversa_suporte_conversa) WHERE (config_system_suporte_id, suporte_conversa_id) IN (?)',
      [editadas.map((p) => [p.sistema.id, p.evento.conversa.suporteConversaId])],
    );
    await recopiarConversas(conversas.map((c) => c.id));
  } catch (err) {
    log.error({ erro: (err as Error).message }, 'conversas editadas não encontradas para refazer o índice de texto');
  }
}

/**
 * Written first as if no record were deleted; then as read, again while deletions keep changing
 * what the batch keeps (a few times at most: each try reads what the one before wrote against).
 */
async function comHistoricoLido(lote: Pedido[]) {
  let assumido = new Map<string, HistoricoApagado>();
  for (let tentativa = 1; ; tentativa++) {
    try {
      return await gravarLote(lote, assumido);
    } catch (err) {
      if (!(err instanceof HistoricoMudaOLote) || tentativa === 3) throw err;
      assumido = err.lido;
    }
  }
}

/** Webhooks are written in group commits (lib/lotes.ts); the attachments' copies are queued after each commit. */
const lotes = new GravadorEmLotes<Pedido, ResultadoDoWebhook>(
  async (lote) => {
    const inicio = performance.now();
    const { resultados, anexos, copiasARemover, anexosDeixados } = await repetirEmConflito('lote de eventos do suporte', () => comHistoricoLido(lote)).catch(async (err) => {
      await repararIndiceDeTexto(lote);
      throw err;
    });
    // once, as the message is stored: a repeated event (Chatwoot repeats the last message in each conversation event) records nothing, and says nothing
    for (const d of anexosDeixados) log.warn(d, `mensagem gravada sem ${d.deixados} de seus anexos: só os primeiros ${ANEXOS_POR_MENSAGEM} são copiados`);
    await enfileirarCopias(anexos);
    if (copiasARemover) await enfileirarRemocao();
    log.debug({ eventos: lote.length, ms: performance.now() - inicio }, 'lote de eventos gravado');
    return resultados;
  },
  // a conversation's events go in one line of batches: this process's concurrent batches never share its row
  { maximo: 200, gravadores: 3, particao: chaveDoPedido, peso: { de: (p) => pesoDoEvento(p.evento), maximo: MENSAGEM_MAXIMA } },
);

/**
 * DESIGN §7: one chat-platform event, stored durably before the answer. Every visible message is
 * stored once, the conversation's fields follow the platform, and each new attachment is queued
 * for its copy to file storage.
 */
export async function registrarEventoDoSuporte(sistema: SistemaDoWebhook, evento: EventoDoSuporte): Promise<ResultadoDoWebhook> {
  if (evento.tipo === 'ignorado') return { conversa_id: null, mensagens_novas: 0, ignorado: `evento ${evento.evento} não é guardado` };
  // conversation ids count per account: a system names one account, and takes no other's events
  const conta = evento.conversa.contaId;
  if (sistema.contaId !== null && conta !== null && conta !== sistema.contaId) {
    throw dadosInvalidos(`Evento da conta ${conta}; este sistema é da conta ${sistema.contaId}.`, [
      { campo: 'account.id', mensagem: 'outra conta da plataforma de atendimento' },
    ]);
  }
  return lotes.guardar({ sistema, evento });
}
