import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { Op } from 'sequelize';
import { CacheComPrazo } from '../../lib/cache';
import { sozinho } from '../../lib/database';
import { ConfigSystem, TipoDeSistema } from '../../models/sales';
import { iso } from '../../models/shared/base';
import { conflito, dadosInvalidos, emAndamento, naoAutenticado, naoEncontrado } from '../shared/errors';
import { mudarSobTrava } from '../shared/sob-trava';
import { comoId, ehId, offset, PaginaNumerada } from '../shared/paginacao';
import { cifrar, decifrar, resumoDoToken } from './cifra';
import { chaveDoTelefone, digitos, variantesDoTelefone } from './telefone';

/** A configured system as the administration routes answer it: its secrets never, only whether they are set. */
export interface ConfigSystemJson {
  id: string;
  tipo: TipoDeSistema;
  nome: string;
  url: string | null;
  conta_id: number | null;
  numero: string | null;
  ativo: boolean;
  tem_segredo_hmac: boolean;
  tem_token_api: boolean;
  criado_em: string;
  atualizado_em: string;
  /** the webhook token: only in the answer that created or renewed it */
  token?: string;
}

export interface DadosDoConfigSystem {
  tipo: TipoDeSistema;
  nome: string;
  token?: string;
  segredo_hmac?: string | null;
  url?: string | null;
  conta_id?: number | null;
  token_api?: string | null;
  numero?: string | null;
  ativo?: boolean;
}

export type AlteracaoDoConfigSystem = Partial<Omit<DadosDoConfigSystem, 'tipo' | 'token'>> & { renovar_token?: boolean };

const novoToken = () => randomBytes(32).toString('base64url');

function comoJson(c: ConfigSystem, token?: string): ConfigSystemJson {
  return {
    id: c.id,
    tipo: c.tipo,
    nome: c.nome,
    url: c.url ?? null,
    conta_id: c.conta_id == null ? null : Number(c.conta_id),
    numero: c.numero ?? null,
    ativo: c.ativo,
    tem_segredo_hmac: Boolean(c.segredo_hmac_cifrado),
    tem_token_api: Boolean(c.token_api_cifrado),
    criado_em: iso(c.criado_em)!,
    atualizado_em: iso(c.atualizado_em)!,
    ...(token ? { token } : {}),
  };
}

/** DESIGN §10: the HMAC of X-Chatwoot-Signature belongs to the chat platform. */
function conferirSegredoHmac(tipo: TipoDeSistema, segredo: string | null | undefined): void {
  if (segredo && tipo !== 'suporte') {
    throw dadosInvalidos('segredo_hmac só vale para o tipo suporte.', [{ campo: 'segredo_hmac', mensagem: 'só para tipo suporte' }]);
  }
}

const semBarraFinal = (url: string | null) => url?.replace(/\/+$/, '') ?? null;

/**
 * The chat platform's API token goes to the system's `url` (the hand-over, attachment downloads):
 * a new address without the token sent again would carry the stored one, which nobody can read
 * back, to wherever the change points (`null` clears it).
 */
function conferirTokenAoMudarUrl(c: ConfigSystem, e: AlteracaoDoConfigSystem): void {
  // no address (null) sends it nowhere; a later address must come with it again
  if (!e.url || semBarraFinal(e.url) === (c.url ?? null) || !c.token_api_cifrado || e.token_api !== undefined) return;
  throw dadosInvalidos('Mudar url exige enviar token_api de novo (ou null para apagá-lo).', [
    { campo: 'token_api', mensagem: 'obrigatório ao mudar url' },
  ]);
}

/** The columns a create or update writes; `undefined` leaves a column as it is, `null` clears it. */
function colunas(e: AlteracaoDoConfigSystem): Record<string, unknown> {
  const c: Record<string, unknown> = {};
  if (e.nome !== undefined) c.nome = e.nome;
  if (e.url !== undefined) c.url = semBarraFinal(e.url);
  if (e.conta_id !== undefined) c.conta_id = e.conta_id;
  if (e.numero !== undefined) c.numero = e.numero === null ? null : digitos(e.numero);
  if (e.ativo !== undefined) c.ativo = e.ativo;
  if (e.segredo_hmac !== undefined) c.segredo_hmac_cifrado = e.segredo_hmac ? cifrar(e.segredo_hmac) : null;
  if (e.token_api !== undefined) c.token_api_cifrado = e.token_api ? cifrar(e.token_api) : null;
  return c;
}

/**
 * One live messaging system per number: of two, the gateway's events would name the older alone
 * (gateway.ts). A number matches with or without a Brazilian mobile's ninth digit, as the gateway
 * matches it. Checked and written under one named lock, so two systems given one number at once
 * cannot both pass. A system (`proprio`) given the number it holds, read under the lock, is not
 * checked: systems that shared a number before the rule get their whole record sent again.
 */
async function comNumeroUnico<T>(tipo: TipoDeSistema, numero: string | null | undefined, proprio: string | null, escrever: () => Promise<T>): Promise<T> {
  if (tipo !== 'mensageiro' || !numero) return escrever();
  const feito = await sozinho(
    'sales',
    'config_system_numero',
    async () => {
      const mantem = proprio !== null && (await ConfigSystem.findByPk(proprio, { attributes: ['numero'] }))?.numero === digitos(numero);
      const outro =
        !mantem &&
        (await ConfigSystem.findOne({
          where: { tipo: 'mensageiro', numero: variantesDoTelefone(chaveDoTelefone(numero)), ...(proprio ? { id: { [Op.ne]: proprio } } : {}) },
          attributes: ['id'],
        }));
      if (outro) throw conflito(`O sistema mensageiro ${outro.id} já tem este número.`, 'numero');
      return { valor: await escrever() };
    },
    10,
  );
  // another change of numbers held the lock past 10 s: a busy moment, tried again
  if (!feito) throw emAndamento('Outra alteração de números de sistemas está em curso; tente de novo.', 5);
  return feito.valor;
}

/** POST /config_system: the token is generated when not sent, and shown in this answer only. */
export async function criarConfigSystem(e: DadosDoConfigSystem): Promise<ConfigSystemJson> {
  conferirSegredoHmac(e.tipo, e.segredo_hmac);
  const token = e.token ?? novoToken();
  const c = await comNumeroUnico(e.tipo, e.numero, null, () => ConfigSystem.create({ tipo: e.tipo, token_hash: resumoDoToken(token), ...colunas(e) }));
  return comoJson(c, token);
}

export async function listarConfigSystems(pagina: number, tamanho: number, tipo?: TipoDeSistema): Promise<PaginaNumerada<ConfigSystemJson>> {
  const { rows, count } = await ConfigSystem.findAndCountAll({
    where: tipo ? { tipo } : {},
    order: [
      ['tipo', 'ASC'],
      ['nome', 'ASC'],
      ['id', 'ASC'],
    ],
    offset: offset(pagina, tamanho),
    limit: tamanho,
  });
  return { itens: rows.map((c) => comoJson(c)), pagina, tamanho, total: count };
}

async function existente(id: string): Promise<ConfigSystem> {
  const c = await ConfigSystem.findByPk(id);
  if (!c) throw naoEncontrado('Sistema configurado');
  return c;
}

export async function configSystemPorId(id: string): Promise<ConfigSystemJson> {
  return comoJson(await existente(id));
}

/**
 * PATCH: partial; `renovar_token` issues a new webhook token and shows it once. The old one stops
 * at once in this process and within 10 seconds in the others (their cache of systems). Changes
 * and deletions read the system again under lock: of two at once, the second sees the first (a
 * change after a deletion answers 404, never a new token for a deleted system).
 */
export async function atualizarConfigSystem(id: string, e: AlteracaoDoConfigSystem): Promise<ConfigSystemJson> {
  const token = e.renovar_token ? novoToken() : undefined;
  // a number given to a messaging system is checked against the others' (a system's type never
  // changes) under the lock: the number it held when read here may be gone by then, and given to another
  const conferir = (c: ConfigSystem) => {
    conferirSegredoHmac(c.tipo, e.segredo_hmac);
    conferirTokenAoMudarUrl(c, e);
  };
  const mudar = () =>
    mudarSobTrava(ConfigSystem, id, 'Sistema configurado', async (c, transaction) => {
      conferir(c);
      return c.update({ ...colunas(e), ...(token ? { token_hash: resumoDoToken(token) } : {}) }, { transaction });
    });
  const atual = e.numero ? await existente(id) : null;
  // the input's 400s before the number's 409 (DESIGN §10's order), checked again under the lock
  if (atual) conferir(atual);
  const c = atual ? await comNumeroUnico(atual.tipo, e.numero, id, mudar) : await mudar();
  paraWebhooks.esquecer(id);
  return comoJson(c, token);
}

/** Logical deletion: its webhooks stop being accepted; conversations keep the reference. */
export async function deletarConfigSystem(id: string): Promise<void> {
  await mudarSobTrava(ConfigSystem, id, 'Sistema configurado', async (c, transaction) => {
    await c.destroy({ transaction });
  });
  paraWebhooks.esquecer(id);
}

/** What a webhook needs of its system, decrypted once and kept a few seconds. */
export interface SistemaDoWebhook {
  id: string;
  tipo: TipoDeSistema;
  url: string | null;
  contaId: number | null;
  tokenHash: Buffer;
  segredoHmac: string | null;
}

/**
 * Changes made by another process take effect within this time; this process's at once. A system
 * deleted or inactive is kept as `null` (a platform still sending to it costs no read each time);
 * an id no system ever had is not kept: webhooks to made-up ids, which anyone can send, would
 * otherwise fill the cache and push the real systems out.
 */
const paraWebhooks = new CacheComPrazo<string, SistemaDoWebhook | null | undefined>(() => 10_000);

async function sistemaDoWebhook(id: string): Promise<SistemaDoWebhook | null | undefined> {
  // checked before the route's own validation runs: an id outside ASCII made the database refuse
  // the comparison with the ASCII column (a 500 for any mistyped address); anything that is not an
  // id names no system
  if (!ehId(id)) return null;
  const porId = comoId(id);
  return paraWebhooks.obterOuCarregar(porId, async () => {
    const c = await ConfigSystem.findByPk(porId, { paranoid: false });
    if (!c) return undefined;
    if (c.deletado_em || !c.ativo) return null;
    return {
      id: c.id,
      tipo: c.tipo,
      url: c.url,
      contaId: c.conta_id === null ? null : Number(c.conta_id),
      tokenHash: Buffer.from(c.token_hash, 'hex'),
      segredoHmac: c.segredo_hmac_cifrado ? decifrar(c.segredo_hmac_cifrado) : null,
    };
  });
}

/** How far a signed webhook's timestamp may be from this clock (a replay older than this is refused). */
export const TOLERANCIA_DO_CARIMBO_S = 300;

export interface ChamadaDeWebhook {
  corpoBruto?: Buffer;
  assinatura?: string;
  carimbo?: string;
}

/** What an unknown system's token is compared with: the refusal takes as long as a wrong token's. */
const NENHUM_TOKEN = Buffer.alloc(32);

/**
 * A webhook's caller (DESIGN §7, §10), before its body is read: the `token` must be that of an
 * active system of the route's type. Anything else (no token, a wrong one, a system unknown,
 * deleted, inactive or of the other type) is the same 401: the token is what authenticates the
 * caller, and an unauthenticated caller learns nothing of which systems exist.
 */
export async function autenticarWebhook(id: string, tipo: TipoDeSistema, token: string | undefined): Promise<SistemaDoWebhook> {
  const encontrado = await sistemaDoWebhook(id);
  const sistema = encontrado?.tipo === tipo ? encontrado : null;
  const recebido = Buffer.from(resumoDoToken(token ?? ''), 'hex');
  const confere = timingSafeEqual(recebido, sistema?.tokenHash ?? NENHUM_TOKEN);
  if (!token || !sistema || !confere) throw naoAutenticado('Token do webhook ausente ou inválido, ou o sistema não existe ou está inativo.');
  return sistema;
}

/**
 * Once the body is read: a system with an HMAC secret wants `X-Chatwoot-Signature`
 * (`sha256=<hex>` of `<timestamp>.<raw body>`) matching within five minutes of
 * `X-Chatwoot-Timestamp` (else 401).
 */
export function conferirAssinaturaDoWebhook(sistema: SistemaDoWebhook, chamada: ChamadaDeWebhook, agora = Date.now()): void {
  if (sistema.segredoHmac) conferirHmac(sistema.segredoHmac, chamada, agora);
}

function conferirHmac(segredo: string, chamada: ChamadaDeWebhook, agora: number): void {
  const carimbo = Number(chamada.carimbo);
  if (!chamada.assinatura || !Number.isInteger(carimbo) || Math.abs(agora / 1000 - carimbo) > TOLERANCIA_DO_CARIMBO_S) {
    throw naoAutenticado('Assinatura do webhook ausente ou fora do prazo (X-Chatwoot-Signature, X-Chatwoot-Timestamp).');
  }
  const esperada = Buffer.from(
    `sha256=${createHmac('sha256', segredo)
      .update(`${chamada.carimbo}.`)
      .update(chamada.corpoBruto ?? Buffer.alloc(0))
      .digest('hex')}`,
  );
  const recebida = Buffer.from(chamada.assinatura.trim());
  if (recebida.length !== esperada.length || !timingSafeEqual(recebida, esperada)) {
    throw naoAutenticado('Assinatura do webhook inválida.');
  }
}

/** How the chat platform's API is reached for a system: its base address, account and token. */
export interface AcessoAoSuporte {
  url: string;
  contaId: number | null;
  tokenApi: string | null;
}

/**
 * A system the suite may call in the chat platform (hand-over, downloads), as stored: null for a
 * deleted or inactive one, or one without an address. Only the database's read can fail here.
 */
export async function sistemaParaChamar(id: string): Promise<ConfigSystem | null> {
  const c = await ConfigSystem.findByPk(id);
  return c?.url && c.ativo ? c : null;
}

/** A callable system's API access; a stored token that cannot be decrypted throws, the system's own fault. */
export function acessoDe(c: ConfigSystem): AcessoAoSuporte {
  return {
    url: c.url!,
    contaId: c.conta_id === null ? null : Number(c.conta_id),
    tokenApi: c.token_api_cifrado ? decifrar(c.token_api_cifrado) : null,
  };
}

/** The chat platform's API access of a system, or null when it is not to be called. */
export async function acessoAoSuporte(id: string): Promise<AcessoAoSuporte | null> {
  const c = await sistemaParaChamar(id);
  return c && acessoDe(c);
}
