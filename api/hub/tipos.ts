
import { Op, Transaction } from 'sequelize';
import { banco } from '../../lib/database';
import { logger } from '../../lib/logger';
import { Aplicativo, Assinatura, TipoDeEvento, VersaoDeEvento } from '../../models/hub';
import { comONome, SituacaoDaVersao, TIPOS_DO_IDENTITY } from '../../models/hub/tipo-de-evento';
import { iso } from '../../models/shared/base';
import { conflito, naoEncontrado, referenciaInvalida } from '../shared/errors';
import { comoConflitoDaRegra, mudarSobTrava } from '../shared/sob-trava';
import { offset, PaginaNumerada } from '../shared/paginacao';
import { conferirEsquema } from './esquemas';
import { esquecerContratos } from './eventos';

const log = logger('hub-tipos');

/** DESIGN §10 event type shape. */
export interface TipoDeEventoJson {
  id: string;
  nome: string;
  descricao: string | null;
  aplicativo_id: string;
  aplicativo_nome: string | null;
  versoes: { versao: number; situacao: SituacaoDaVersao; criada_em: string }[];
  criado_em: string;
  atualizado_em: string;
}

const incluir = [
  { model: Aplicativo, as: 'aplicativo', attributes: ['id', 'nome'], paranoid: false },
  { model: VersaoDeEvento, as: 'versoes', attributes: ['versao', 'situacao', 'criada_em'] },
];

function tipoJson(t: TipoDeEvento): TipoDeEventoJson {
  return {
    id: t.id,
    nome: t.nome,
    descricao: t.descricao,
    aplicativo_id: t.aplicativo_id,
    aplicativo_nome: t.aplicativo?.nome ?? null,
    versoes: (t.versoes ?? [])
      .map((v) => ({ versao: v.versao, situacao: v.situacao, criada_em: iso(v.criada_em)! }))
      .sort((a, b) => a.versao - b.versao),
    criado_em: iso(t.criado_em)!,
    atualizado_em: iso(t.atualizado_em)!,
  };
}

async function existente(id: string): Promise<TipoDeEvento> {
  const t = await TipoDeEvento.findByPk(id, { include: incluir });
  if (!t) throw naoEncontrado('Tipo de evento');
  return t;
}

export async function listarTipos(pagina: number, tamanho: number): Promise<PaginaNumerada<TipoDeEventoJson>> {
  const [total, ids] = await Promise.all([
    TipoDeEvento.count(),
    TipoDeEvento.findAll({ attributes: ['id'], order: [['nome', 'ASC'], ['id', 'ASC']], offset: offset(pagina, tamanho), limit: tamanho }),
  ]);
  const tipos = ids.length ? await TipoDeEvento.findAll({ where: { id: ids.map((t) => t.id) }, include: incluir, order: [['nome', 'ASC'], ['id', 'ASC']] }) : [];
  return { itens: tipos.map(tipoJson), pagina, tamanho, total };
}

export async function tipoPorId(id: string): Promise<TipoDeEventoJson> {
  return tipoJson(await existente(id));
}

async function aplicativoAtivo(id: string, transaction: Transaction): Promise<Aplicativo> {
  // FOR SHARE: the application sync waits for the type before counting what the application owns
  const app = await Aplicativo.findByPk(id, { transaction, lock: transaction.LOCK.SHARE });
  if (!app || !app.ativo) throw referenciaInvalida('aplicativo_id', 'Aplicativo não encontrado ou inativo.');
  return app;
}

async function nomeLivre(nome: string, exceto?: string, transaction?: Transaction): Promise<void> {
  // the identity application's types are created by the hub itself (criarTiposDoIdentity): taken
  // first by another application, identity's events would be refused. Without case, as the
  // database compares names
  if (TIPOS_DO_IDENTITY.includes(nome.toLowerCase())) throw conflito(`O nome ${nome} é reservado aos eventos do identity.`);
  const outro = await TipoDeEvento.findOne({ where: comONome(nome), attributes: ['id'], transaction });
  if (outro && outro.id !== exceto) throw nomeEmUso();
}
const nomeEmUso = () => conflito('Já existe um tipo de evento com este nome.');
/** A name taken by a write committed after nomeLivre looked: the unique key tells, as the rule does. */
const comoNomeEmUso = comoConflitoDaRegra(nomeEmUso);

export async function criarTipo(e: { nome: string; descricao?: string | null; aplicativo_id: string }) {
  const id = await banco('hub').transaction(async (transaction) => {
    const app = await aplicativoAtivo(e.aplicativo_id, transaction);
    await nomeLivre(e.nome, undefined, transaction);
    const t = await TipoDeEvento.create({ nome: e.nome, descricao: e.descricao || null, aplicativo_id: app.id }, { transaction }).catch(comoNomeEmUso);
    return t.id;
  });
  // a publication of the name before it existed left its absence in this process's cache
  esquecerContratos();
  return tipoPorId(id);
}

function conferirTipoDoIdentity(t: TipoDeEvento, acao: string): void {
  if (TIPOS_DO_IDENTITY.includes(t.nome)) throw conflito(`O tipo ${t.nome} é publicado pelo identity e não pode ser ${acao}.`);
}

/** Under the type's lock: a rename or a deletion arriving meanwhile sees this one (a deleted type answers 404). */
export async function atualizarTipo(id: string, e: { nome?: string; descricao?: string | null }) {
  await mudarSobTrava(TipoDeEvento, id, 'Tipo de evento', async (t, transaction) => {
    if (e.nome !== undefined && e.nome !== t.nome) {
      conferirTipoDoIdentity(t, 'renomeado');
      await nomeLivre(e.nome, id, transaction);
    }
    await t.update(e.descricao === undefined ? e : { ...e, descricao: e.descricao || null }, { transaction }).catch(comoNomeEmUso);
  });
  esquecerContratos();
  return tipoPorId(id);
}

/** A type with live subscriptions cannot go: its subscribers would silently stop receiving. */
export async function deletarTipo(id: string): Promise<void> {
  const t = await existente(id);
  conferirTipoDoIdentity(t, 'removido');
  // a subscription being created reads the type FOR SHARE: this count sees it (mudarSobTrava)
  await mudarSobTrava(TipoDeEvento, id, 'Tipo de evento', async (travado, transaction) => {
    if (await Assinatura.count({ where: { tipo_de_evento_id: id }, transaction })) {
      throw conflito('O tipo tem assinaturas; remova-as antes.');
    }
    await travado.destroy({ transaction });
  });
  esquecerContratos();
}

export async function criarVersao(tipoId: string, esquema: Record<string, unknown>) {
  // input first, then existence (DESIGN §10 order of checks)
  conferirEsquema(esquema);
  await existente(tipoId);
  const v = await banco('hub').transaction(async (transaction) => {
    // the type's row lock queues concurrent creations, so two never read the same last number;
    // a type deleted since it was read takes no version
    const tipo = await TipoDeEvento.findByPk(tipoId, { attributes: ['id'], transaction, lock: transaction.LOCK.UPDATE });
    if (!tipo) throw naoEncontrado('Tipo de evento');
    const ultima = (await VersaoDeEvento.max('versao', { where: { tipo_de_evento_id: tipo.id }, transaction })) as number | null;
    return VersaoDeEvento.create({ tipo_de_evento_id: tipo.id, versao: (ultima ?? 0) + 1, esquema, situacao: 'ativa' }, { transaction });
  });
  esquecerContratos();
  return versaoJson(v);
}

const versaoJson = (v: VersaoDeEvento) => ({ versao: v.versao, situacao: v.situacao, esquema: v.esquema, criada_em: iso(v.criada_em)! });

async function versaoExistente(tipoId: string, versao: number): Promise<VersaoDeEvento> {
  await existente(tipoId);
  const v = await VersaoDeEvento.findOne({ where: { tipo_de_evento_id: tipoId, versao } });
  if (!v) throw naoEncontrado('Versão');
  return v;
}

export async function versaoPorNumero(tipoId: string, versao: number) {
  return versaoJson(await versaoExistente(tipoId, versao));
}

/** `desligada` = switched off: no new subscriptions and no new events in it (SPEC §9.3). */
export async function mudarSituacaoDaVersao(tipoId: string, versao: number, situacao: SituacaoDaVersao) {
  const v = await versaoExistente(tipoId, versao);
  // identity publishes its events in version 1 and no other: switched off, each collaborator's
  // changes would wait at identity, refused, for as long as it lasted
  if (situacao === 'desligada' && versao === 1) conferirTipoDoIdentity(await existente(tipoId), 'desligado na versão 1');
  await v.update({ situacao });
  esquecerContratos();
  return versaoJson(v);
}

const ESQUEMA_DO_COLABORADOR = {
  type: 'object',
  required: ['id', 'nome', 'email', 'perfil'],
  properties: {
    id: { type: 'string' },
    nome: { type: 'string' },
    email: { type: 'string' },
    perfil: { type: 'string' },
    e_master: { type: 'boolean' },
  },
};

/**
 * DESIGN §10: the identity application's `colaborador.*` types, version 1, created once, and
 * owned by the application identity runs as now (passarTiposAoIdentity).
 */
export async function criarTiposDoIdentity(identificadorNoAuth: string): Promise<void> {
  const app = await Aplicativo.findOne({ where: { identificador_no_auth: identificadorNoAuth } });
  if (!app) return;
  for (const nome of TIPOS_DO_IDENTITY) {
    if (await TipoDeEvento.findOne({ where: comONome(nome), attributes: ['id'] })) continue;
    // the type and its version 1 together, or neither
    await banco('hub').transaction(async (transaction) => {
      const t = await TipoDeEvento.create({ nome, descricao: 'Evento de colaborador publicado pelo identity', aplicativo_id: app.id }, { transaction });
      await VersaoDeEvento.create({ tipo_de_evento_id: t.id, versao: 1, esquema: ESQUEMA_DO_COLABORADOR, situacao: 'ativa' }, { transaction });
    });
  }
  await passarTiposAoIdentity(app);
}

/**
 * identity given new credentials (IDENTITY_CLIENT_ID naming another application) takes its types
 * over: else every event it publishes would be refused as not the owner's, for good, since the
 * types can be neither deleted nor given another owner through the API.
 */
async function passarTiposAoIdentity(app: Aplicativo): Promise<void> {
  const [passados] = await TipoDeEvento.update({ aplicativo_id: app.id }, { where: { [Op.and]: [comONome(TIPOS_DO_IDENTITY), { aplicativo_id: { [Op.ne]: app.id } }] } });
  if (!passados) return;
  log.warn({ aplicativo_id: app.id, tipos: passados }, 'tipos colaborador.* passados ao aplicativo atual do identity');
  esquecerContratos();
}

