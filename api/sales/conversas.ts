import { literal } from 'sequelize';
import { banco, dataSql, emTransacao, lerDemorado, lerLinhas, lerPorTexto, repetirEmConflito, tempoEsgotado } from '../../lib/database';
import { Conversa, StatusDaConversa } from '../../models/sales';
import { iso } from '../../models/shared/base';
import { semAcentos } from '../../models/shared/sql';
import { ErroDeDominio, naoEncontrado, referenciaInvalida } from '../shared/errors';
import { mudarSobTrava } from '../shared/sob-trava';
import { contem, offset, PaginaNumerada } from '../shared/paginacao';
import { enfileirarRemocao, listarChavesSemCopia } from './anexos';
import { condicaoDoTexto, recopiarConversas } from './busca-de-texto';
import { clientes } from './clientes';
import { totalDeConversas } from './contagem';
import { MARCA_DA_DECISAO } from './registro';
import { robos } from './robos';
import { digitos } from './telefone';


/** SPEC 4.6 rule 1: pages of exactly 50. */
export const TAMANHO_DA_PAGINA = 50;
/** SPEC 4.6 rule 4. */
export const MAXIMO_DO_FILTRO = 500;

/** SPEC §2 Conversa. */
export interface ConversaJson {
  id: string;
  suporte_conversa_id: number;
  suporte_contato_id: number | null;
  suporte_endereco_conversa: string | null;
  config_system_suporte_id: string;
  config_system_mensageiro_id: string | null;
  config_system_mensageiro_nome: string | null;
  config_system_gateway_id: string | null;
  config_system_gateway_nome: string | null;
  cliente_id: string | null;
  cliente_razao_social: string | null;
  robo_id: string | null;
  robo_nome: string | null;
  etapa_id: string | null;
  contato_nome: string;
  contato_telefone: string;
  status: StatusDaConversa;
  ultima_mensagem: string;
  ultima_mensagem_em: string | null;
  ultima_mensagem_do_contato_em: string | null;
  ultima_mensagem_do_robo_em: string | null;
  transferida_em: string | null;
  transferida_motivo: string | null;
  quantidade_mensagens: number;
  criado_em: string;
  atualizado_em: string;
}

const sales = () => banco('sales');

/** The conversation's columns and the names it shows (messaging number, gateway, customer, robot). */
const SELECAO = `SELECT c.id, c.suporte_conversa_id, c.suporte_contato_id, c.suporte_endereco_conversa, c.config_system_suporte_id,
    c.config_system_mensageiro_id, sm.nome AS config_system_mensageiro_nome, c.config_system_gateway_id,
    sg.nome AS config_system_gateway_nome, c.cliente_id, cl.razao_social AS cliente_razao_social, c.robo_id, r.nome AS robo_nome,
    c.etapa_id, c.contato_nome, c.contato_telefone, c.status, c.ultima_mensagem, c.ultima_mensagem_em,
    c.ultima_mensagem_do_contato_em, c.ultima_mensagem_do_robo_em, c.transferida_em, c.transferida_motivo,
    c.quantidade_mensagens, c.criado_em, c.atualizado_em`;
const NOMES = `LEFT JOIN config_system sm ON sm.id = c.config_system_mensageiro_id
  LEFT JOIN config_system sg ON sg.id = c.config_system_gateway_id
  LEFT JOIN cliente cl ON cl.id = c.cliente_id
  LEFT JOIN robo r ON r.id = c.robo_id`;
/** SPEC 4.6 rules 1 and 4: most recent last message first (no message yet: last). */
const RECENTES = 'c.ultima_mensagem_em DESC, c.id DESC';

type Linha = Omit<ConversaJson, 'ultima_mensagem_em' | 'ultima_mensagem_do_contato_em' | 'ultima_mensagem_do_robo_em' | 'transferida_em' | 'criado_em' | 'atualizado_em'> &
  Record<'ultima_mensagem_em' | 'ultima_mensagem_do_contato_em' | 'ultima_mensagem_do_robo_em' | 'transferida_em' | 'criado_em' | 'atualizado_em', Date | null>;

function comoJson(l: Linha): ConversaJson {
  return {
    ...l,
    suporte_conversa_id: Number(l.suporte_conversa_id),
    suporte_contato_id: l.suporte_contato_id === null ? null : Number(l.suporte_contato_id),
    quantidade_mensagens: Number(l.quantidade_mensagens),
    ultima_mensagem_em: iso(l.ultima_mensagem_em),
    ultima_mensagem_do_contato_em: iso(l.ultima_mensagem_do_contato_em),
    ultima_mensagem_do_robo_em: iso(l.ultima_mensagem_do_robo_em),
    transferida_em: iso(l.transferida_em),
    criado_em: iso(l.criado_em)!,
    atualizado_em: iso(l.atualizado_em)!,
  };
}

/**
 * GET /conversa (SPEC 4.6 rule 1): 50 per page, most recent last message first; `total` counts the
 * live conversations of the status. The page's ids come from the index alone (a deep page skips
 * index entries, not rows), then their rows and names are read.
 */
export async function listarConversas(pagina: number, status?: StatusDaConversa): Promise<PaginaNumerada<ConversaJson>> {
  const filtro = status ? 'AND status = ?' : '';
  const parametros = status ? [status] : [];
  const [linhas, total] = await Promise.all([
    lerPorTexto<Linha>(
      sales(),
      `${SELECAO} FROM (SELECT id FROM conversa WHERE deletado_em IS NULL ${filtro}
         ORDER BY ultima_mensagem_em DESC, id DESC LIMIT ? OFFSET ?) p
       JOIN conversa c ON c.id = p.id ${NOMES} ORDER BY ${RECENTES}`,
      [...parametros, TAMANHO_DA_PAGINA, offset(pagina, TAMANHO_DA_PAGINA)],
    ),
    totalDeConversas(status),
  ]);
  return { itens: linhas.map(comoJson), pagina, tamanho: TAMANHO_DA_PAGINA, total };
}

/**
 * A contact search (`busca`, `contato`) against `contato_busca`: the name in lower case without
 * accents, a line break, the phone's digits, compared byte by byte inside an index. The text
 * matches the name (any case, any accent); its digits, when it has any, match the phone (DESIGN §10 for `contato`; the autocomplete's
 * `busca` only when it has no letters: typing "Ana 1" looks for a name, not for every phone with
 * a 1). A line break in the text would cross from the name to the phone, so control characters
 * count as spaces. INSTR on a byte-compared column is a plain substring search, a third faster
 * than LIKE '%...%' over every live conversation; a text of digits alone is one search, since the
 * phone is part of `contato_busca`.
 */
function condicaoDoContato(busca: string, parametros: unknown[], digitosComLetras: boolean): string {
  const texto = busca.replace(/[\u0000-\u001f]/g, ' ').normalize('NFC');
  const numeros = digitosComLetras || !/\p{L}/u.test(busca) ? digitos(busca) : '';
  parametros.push(texto);
  // put in lower case and stripped of accents by the database, as the column was: JavaScript
  // folds some letters otherwise (İ, ẞ)
  const nome = `${semAcentos('LOWER(CONVERT(? USING utf8mb4) COLLATE utf8mb4_unicode_ci)')} COLLATE utf8mb4_bin`;
  if (!numeros || numeros === texto) return `INSTR(c.contato_busca, ${nome}) > 0`;
  parametros.push(numeros);
  // the digits searched from the line break on: in the phone only
  return `(INSTR(c.contato_busca, ${nome}) > 0 OR LOCATE(?, c.contato_busca, INSTR(c.contato_busca, CHAR(10))) > 0)`;
}

/** GET /conversa/autocomplete (SPEC 4.6 rule 3): alphabetical by contact name. */
export async function autocompletarConversas(busca: string | undefined, pagina: number, tamanho: number) {
  const parametros: unknown[] = [];
  const where = `WHERE c.deletado_em IS NULL${busca ? ` AND ${condicaoDoContato(busca, parametros, false)}` : ''}`;
  const [itens, [{ total }]] = await Promise.all([
    lerDemorado<{ id: string; suporte_conversa_id: number; contato_nome: string; contato_telefone: string }>(
      sales(),
      `SELECT c.id, c.suporte_conversa_id, c.contato_nome, c.contato_telefone FROM conversa c ${where}
        ORDER BY c.contato_nome, c.id LIMIT ? OFFSET ?`,
      [...parametros, tamanho, offset(pagina, tamanho)],
    ),
    // without busca, every live conversation: the kept counts say how many, where a COUNT read every one on each keystroke
    busca ? lerDemorado<{ total: number }>(sales(), `SELECT COUNT(*) AS total FROM conversa c ${where}`, parametros) : totalDeConversas().then((total) => [{ total }]),
  ]);
  return { itens: itens.map((i) => ({ ...i, suporte_conversa_id: Number(i.suporte_conversa_id) })), pagina, tamanho, total: Number(total) };
}

export interface FiltroDeConversas {
  cliente_id?: string;
  robo_id?: string;
  config_system_gateway_id?: string;
  suporte_conversa_id?: number;
  status?: StatusDaConversa;
  contato?: string;
  texto?: string;
}

/**
 * GET /conversa/filtro (SPEC 4.6 rule 4): at most 500, most recent last message first. Ids and the
 * status compare exactly; `contato` is a substring of the contact's name, the customer's name or
 * (its digits) the phone; `texto` a substring of any message of the conversation. Any case.
 */
export async function filtrarConversas(f: FiltroDeConversas): Promise<ConversaJson[]> {
  const condicoes = ['c.deletado_em IS NULL'];
  const parametros: unknown[] = [];
  for (const campo of ['cliente_id', 'robo_id', 'config_system_gateway_id', 'suporte_conversa_id', 'status'] as const) {
    if (f[campo] !== undefined) {
      condicoes.push(`c.${campo} = ?`);
      parametros.push(f[campo]);
    }
  }
  if (f.contato) {
    // customers are few: their matching ids first, then one scan of the conversations' index
    const doContato = condicaoDoContato(f.contato, parametros, true);
    condicoes.push(`(${doContato} OR c.cliente_id IN (SELECT id FROM cliente WHERE razao_social LIKE ?))`);
    parametros.push(contem(f.contato));
  }
  if (f.texto) condicoes.push(await condicaoDoTexto(f.texto, parametros));
  // A contact search reads every live conversation's `contato_busca` in the narrow conversa_busca
  // index (a fraction of a second for 200,000) rather than walking the rows in recency order, which
  // costs far more when the contact is rare. The 500 ids are chosen first, then their rows read.
  const indice = f.contato ? 'IGNORE INDEX (conversa_recentes)' : '';
  const select = `${SELECAO} FROM (SELECT c.id FROM conversa c ${indice} WHERE ${condicoes.join(' AND ')}
        ORDER BY ${RECENTES} LIMIT ${MAXIMO_DO_FILTRO}) p
      JOIN conversa c ON c.id = p.id ${NOMES} ORDER BY ${RECENTES}`;
  try {
    // stopped by the database past its limit: a rare text over years of messages would otherwise
    // read them for minutes, long after the caller gave up
    return (await lerDemorado<Linha>(sales(), select, parametros, PRAZO_DO_FILTRO_S)).map(comoJson);
  } catch (err) {
    if (tempoEsgotado(err)) throw new ErroDeDominio('indisponivel', 'A busca demorou demais: combine mais filtros (status, cliente_id, contato) com o texto.');
    throw err;
  }
}

/** How long a filter may read, as a page of the leads listing. */
export const PRAZO_DO_FILTRO_S = 10;

/** GET /conversa/{id} (SPEC 4.6 rule 5): a deleted conversation is not found. */
export async function conversaPorId(id: string): Promise<ConversaJson> {
  const [linha] = await lerLinhas<Linha>(sales(), `${SELECAO} FROM conversa c ${NOMES} WHERE c.id = ? AND c.deletado_em IS NULL`, [id]);
  if (!linha) throw naoEncontrado('Conversa');
  return comoJson(linha);
}

export interface AlteracaoDaConversa {
  cliente_id?: string | null;
  robo_id?: string | null;
  status?: StatusDaConversa | null;
}

/**
 * PATCH /conversa/{id} (SPEC 4.6 rule 6): only what is sent changes; a customer or robot that does
 * not exist answers 422, unless the conversation already holds it; `null` unlinks. The status
 * changes here only, never in the chat platform.
 * A robot linked or unlinked here stays so: a later robot message links no other; a status set
 * here stays until the platform sends a copy of the conversation newer than the one it corrected
 * (with none known yet, stamped after the correction: registro.ts MARCA_DA_DECISAO).
 * The conversation is read again under lock, and the customer and robot with a shared lock, so a
 * deletion of any of them either waits for the change or is seen by it (404 or 422).
 */
export async function atualizarConversa(id: string, e: AlteracaoDaConversa): Promise<ConversaJson> {
  await mudarSobTrava(Conversa, id, 'Conversa', async (conversa, transaction) => {
    // the customer or robot the conversation holds, sent back (a form sends every field), is no
    // change: accepted though deleted since (history keeps it), and no choice of robot by the team
    // (SPEC 4.3 rule 9 keeps a subscription's current version the same way)
    const cliente_id = e.cliente_id === conversa.cliente_id ? undefined : e.cliente_id;
    const robo_id = e.robo_id === conversa.robo_id ? undefined : e.robo_id;
    if (cliente_id && !(await clientes.existe(cliente_id, transaction))) throw referenciaInvalida('cliente_id', 'Cliente não encontrado.');
    if (robo_id && !(await robos.existe(robo_id, transaction))) throw referenciaInvalida('robo_id', 'Robô não encontrado.');
    const mudancas: Record<string, unknown> = {};
    if (cliente_id !== undefined) mudancas.cliente_id = cliente_id;
    // the team's choice, null included: the webhooks link a robot only to a conversation never given one by hand
    if (robo_id !== undefined) Object.assign(mudancas, { robo_id, robo_escolhido: true });
    // the platform's copy the team corrected (or, with none known yet, the correction's moment): the
    // webhooks' copies not newer than it leave the team's status (registro.ts)
    if (e.status) Object.assign(mudancas, { status: e.status, status_corrigido_sobre: literal(MARCA_DA_DECISAO) });
    if (Object.keys(mudancas).length) await conversa.update(mudancas, { transaction });
  });
  return conversaPorId(id);
}

/**
 * DELETE /conversa/{id} (SPEC §3): the record is deleted (logically) and its messages and
 * attachments for good, in one transaction, which also records the attachments' copies for
 * removal from file storage (done by the sales-anexo queue), and the keys of those not copied,
 * whose upload may be stored with its answer lost. A later message from the chat platform starts
 * a new record.
 */
export async function deletarConversa(id: string): Promise<void> {
  // a webhook upserting the conversation may lock its key before the deletion moves it: a deadlock
  const copias = await repetirEmConflito('exclusão de conversa', () => apagarNoBanco(id)).catch(async (err) => {
    // rolled back after the text index's delete trigger may have run: the messages are back
    if (!(err instanceof ErroDeDominio)) await recopiarConversas([id]);
    throw err;
  });
  if (copias) await enfileirarRemocao();
}

/**
 * The deletion's transaction; answers how many file copies (and keys of copies) await removal.
 * REPEATABLE READ on purpose: the INSERT ... SELECT share-locks the attachments it lists, so a copy
 * being recorded meanwhile waits and then finds its attachment gone (and lists its own file); read
 * without locks, it could be recorded between that list and the delete, and its file kept for good.
 */
function apagarNoBanco(id: string): Promise<number> {
  return emTransacao(sales(), async (conexao) => {
    const [vivas] = await conexao.query('SELECT id FROM conversa WHERE id = ? AND deletado_em IS NULL FOR UPDATE', [id]);
    if (!(vivas as unknown[]).length) throw naoEncontrado('Conversa');
    const agora = dataSql(new Date());
    const [registradas] = await conexao.query(
      `INSERT IGNORE INTO arquivo_a_apagar (arquivo_id, criado_em)
         SELECT arquivo_id, ? FROM anexo_da_mensagem WHERE conversa_id = ? AND arquivo_id IS NOT NULL`,
      [agora, id],
    );
    const [chaves] = await conexao.query(listarChavesSemCopia('anexo_da_mensagem a WHERE a.conversa_id = ?'), [id]);
    await conexao.query(
      `UPDATE conversa SET deletado_em = ?, atualizado_em = ?,
         suporte_mensagem_apagada_ate = (SELECT MAX(suporte_mensagem_id) FROM conversa_mensagem WHERE conversa_id = ?)
       WHERE id = ?`,
      [agora, agora, id, id],
    );
    await conexao.query('DELETE FROM anexo_da_mensagem WHERE conversa_id = ?', [id]);
    await conexao.query('DELETE FROM conversa_mensagem WHERE conversa_id = ?', [id]);
    return (registradas as { affectedRows: number }).affectedRows + (chaves as { affectedRows: number }).affectedRows;
  });
}
