import { col, Op, QueryTypes, Transaction, where, WhereOptions } from 'sequelize';
import { config } from '../../config';
import { banco, repetirEmConflito } from '../../lib/database';
import { leituraPorIdEmLotes } from '../../lib/lotes';
import { Cargo, Funcao, Setor, Usuario } from '../../models/identity';
import { PerfilDeUsuario } from '../../models/identity/usuario';
import { iso } from '../../models/shared/base';
import { conflito, naoEncontrado, proibido, referenciaInvalida } from '../shared/errors';
import { contem, offset, PaginaNumerada } from '../shared/paginacao';
import { Principal } from '../shared/principal';
import { enfileirar, registrarEvento, TipoDeEventoDeColaborador } from './outbox';
import { hashDeSenha } from './senhas';
import { titularMudou } from './titulares';

/** SPEC §2 Usuario, exactly. */
export interface UsuarioJson {
  id: string;
  nome: string;
  email: string;
  perfil: PerfilDeUsuario;
  e_master: boolean;
  master_pelo_ambiente: boolean;
  email_verificado: boolean;
  dois_fatores_ativo: boolean;
  tem_senha: boolean;
  criado_em: string;
  atualizado_em: string;
  bloqueado_ate: string | null;
  ultimo_login_em: string | null;
  cargo: string | null;
  cargo_id: string | null;
  funcao: string | null;
  funcao_id: string | null;
  setor: string | null;
  setor_id: string | null;
  imagem: string | null;
}

export const masterPeloAmbiente = (email: string) => config().identity.masterEmails.includes(email.toLowerCase());
export const eMaster = (u: Pick<Usuario, 'master' | 'email'>) => u.master || masterPeloAmbiente(u.email);

/** What a Usuario is made of: a model instance, or a row read by hand (usuarioPorId). */
type CamposDoUsuario = Pick<
  Usuario,
  | 'id' | 'nome' | 'email' | 'perfil' | 'master' | 'email_verificado' | 'dois_fatores_ativo' | 'senha_hash'
  | 'criado_em' | 'atualizado_em' | 'bloqueado_ate' | 'ultimo_login_em' | 'cargo_id' | 'funcao_id' | 'setor_id' | 'imagem'
> & { setor?: { nome: string } | null; cargo?: { nome: string } | null; funcao?: { nome: string } | null };

export function usuarioJson(u: CamposDoUsuario): UsuarioJson {
  const peloAmbiente = masterPeloAmbiente(u.email);
  return {
    id: u.id,
    nome: u.nome,
    email: u.email,
    perfil: u.perfil,
    e_master: Boolean(u.master) || peloAmbiente,
    master_pelo_ambiente: peloAmbiente,
    email_verificado: Boolean(u.email_verificado),
    dois_fatores_ativo: Boolean(u.dois_fatores_ativo),
    tem_senha: Boolean(u.senha_hash),
    criado_em: iso(u.criado_em)!,
    atualizado_em: iso(u.atualizado_em)!,
    bloqueado_ate: iso(u.bloqueado_ate),
    ultimo_login_em: iso(u.ultimo_login_em),
    cargo: u.cargo?.nome ?? null,
    cargo_id: u.cargo_id,
    funcao: u.funcao?.nome ?? null,
    funcao_id: u.funcao_id,
    setor: u.setor?.nome ?? null,
    setor_id: u.setor_id,
    imagem: u.imagem,
  };
}

const comCadastros = [
  { model: Setor, as: 'setor', attributes: ['id', 'nome'] },
  { model: Cargo, as: 'cargo', attributes: ['id', 'nome'] },
  { model: Funcao, as: 'funcao', attributes: ['id', 'nome'] },
];

export interface FiltrosDeUsuario {
  busca?: string;
  perfil?: PerfilDeUsuario;
}

function filtrosWhere(f: FiltrosDeUsuario): WhereOptions {
  const e: WhereOptions[] = [];
  if (f.busca) e.push({ [Op.or]: [{ nome: { [Op.like]: contem(f.busca) } }, { email: { [Op.like]: contem(f.busca) } }] });
  if (f.perfil) e.push({ perfil: f.perfil });
  return e.length ? { [Op.and]: e } : {};
}

const ALFABETICA: [string, string][] = [
  ['nome', 'ASC'],
  ['id', 'ASC'],
];

/** SPEC 4.1: most recent first. */
export async function listarUsuarios(f: FiltrosDeUsuario, pagina: number, tamanho: number): Promise<PaginaNumerada<UsuarioJson>> {
  const where = filtrosWhere(f);
  const [total, linhas] = await Promise.all([
    Usuario.count({ where }),
    Usuario.findAll({
      where,
      include: comCadastros,
      order: [
        ['criado_em', 'DESC'],
        ['id', 'DESC'],
      ],
      offset: offset(pagina, tamanho),
      limit: tamanho,
    }),
  ]);
  return { itens: linhas.map(usuarioJson), pagina, tamanho, total };
}

/** SPEC 4.1: alphabetical autocomplete items. */
export async function autocompletarUsuarios(f: FiltrosDeUsuario, pagina: number, tamanho: number) {
  const where = filtrosWhere(f);
  const [total, linhas] = await Promise.all([
    Usuario.count({ where }),
    Usuario.findAll({ where, attributes: ['id', 'nome', 'email'], order: ALFABETICA, offset: offset(pagina, tamanho), limit: tamanho }),
  ]);
  return { itens: linhas.map((u) => ({ id: u.id, nome: u.nome, email: u.email })), pagina, tamanho, total };
}

/** SPEC 4.1: every match, alphabetical, no pagination. */
export async function filtrarUsuarios(f: FiltrosDeUsuario): Promise<UsuarioJson[]> {
  const linhas = await Usuario.findAll({ where: filtrosWhere(f), include: comCadastros, order: ALFABETICA });
  return linhas.map(usuarioJson);
}

async function existente(id: string): Promise<Usuario> {
  const u = await Usuario.findByPk(id, { include: comCadastros });
  if (!u) throw naoEncontrado('Usuário');
  return u;
}

/** Reads of users by id that arrive together share one statement (lib/lotes.ts). */
const usuariosPorId = leituraPorIdEmLotes<CamposDoUsuario & { setor_nome: string | null; cargo_nome: string | null; funcao_nome: string | null }>(
  () => banco('identity'),
  (marcas) => `SELECT u.*, s.nome AS setor_nome, c.nome AS cargo_nome, f.nome AS funcao_nome
       FROM usuario u
       LEFT JOIN setor s ON s.id = u.setor_id
       LEFT JOIN cargo c ON c.id = u.cargo_id
       LEFT JOIN funcao f ON f.id = u.funcao_id
      WHERE u.id IN (${marcas}) AND u.deletado_em IS NULL`,
);

/**
 * SPEC 4.1: a user by id (that a non-master reads only their own record, SPEC 5.3, is the route's
 * permission). The most frequent read of the suite: reads that arrive together share one statement.
 */
export async function usuarioPorId(id: string): Promise<UsuarioJson> {
  const linha = await usuariosPorId(id);
  if (!linha) throw naoEncontrado('Usuário');
  const nome = (n: string | null) => (n === null ? null : { nome: n });
  return usuarioJson({ ...linha, setor: nome(linha.setor_nome), cargo: nome(linha.cargo_nome), funcao: nome(linha.funcao_nome) });
}

export interface EntradaDeUsuario {
  nome?: string;
  email?: string;
  perfil?: PerfilDeUsuario;
  senha?: string;
  e_master?: boolean;
  setor_id?: string | null;
  cargo_id?: string | null;
  funcao_id?: string | null;
  imagem?: string | null;
}

/** Sector, position and function named in a body must exist (DESIGN §4: 422). */
async function conferirReferencias(e: EntradaDeUsuario): Promise<void> {
  const refs: [keyof EntradaDeUsuario, typeof Setor, string][] = [
    ['setor_id', Setor, 'Setor'],
    ['cargo_id', Cargo, 'Cargo'],
    ['funcao_id', Funcao, 'Função'],
  ];
  for (const [campo, modelo, nome] of refs) {
    const valor = e[campo];
    if (typeof valor === 'string' && !(await modelo.findByPk(valor, { attributes: ['id'] }))) {
      throw referenciaInvalida(campo, `${nome} não encontrado.`);
    }
  }
}

/**
 * The live user of an address (given in lower case, as the schemas leave it), by the unique key's
 * column: `email` itself compares without regard to accents (migration 0003).
 */
export const porEmail = (email: string): WhereOptions => where(col('email_unico'), email);

async function emailEmUso(email: string, excetoId?: string): Promise<void> {
  const outro = await Usuario.findOne({ where: porEmail(email), attributes: ['id'] });
  if (outro && outro.id !== excetoId) throw conflito('Já existe um usuário com este e-mail.');
}

/** A login's lock lifted and its count of failures restarted (a success, a new password, `unlock-login`). */
export const SEM_BLOQUEIO = { bloqueado_ate: null, falhas_de_login: 0, primeira_falha_de_login_em: null } as const;

/** Which `colaborador.*` event a change makes, if any (the profile may move in or out). */
function eventoDaMudanca(antes: PerfilDeUsuario | null, depois: PerfilDeUsuario | null): TipoDeEventoDeColaborador | null {
  const eraColaborador = antes === 'colaborador';
  const eColaborador = depois === 'colaborador';
  if (!eraColaborador && eColaborador) return 'colaborador.criado';
  if (eraColaborador && eColaborador) return 'colaborador.atualizado';
  if (eraColaborador && !eColaborador) return 'colaborador.removido';
  return null;
}

/**
 * Runs a user change in a transaction that also stores its `colaborador.*` event (outbox), then
 * enqueues the event once the transaction is committed. The user's row is read under lock: a
 * change racing another (a PATCH and a DELETE, two DELETEs) works on what the first one left, so a
 * deleted user is never changed again and each change makes the event it really made. `quem`, the
 * master making it, is read again in the transaction (FOR SHARE): a master demoted or removed by
 * a change committed meanwhile changes no one (403), so two masters demoting each other at once
 * cannot leave the suite without one. Those two lock each other's rows in opposite orders: the
 * loser of the deadlock runs again, and finds itself no longer master.
 */
async function mudarUsuario(
  id: string | null,
  quem: Principal | null,
  acao: (atual: Usuario | null, transaction: Transaction) => Promise<{ usuario: Usuario; visivel: boolean }>,
): Promise<Usuario> {
  const { usuario, eventos } = await repetirEmConflito('mudança de usuário', () =>
    banco('identity').transaction(async (transaction) => {
      const atual = id ? await Usuario.findByPk(id, { transaction, lock: transaction.LOCK.UPDATE }) : null;
      if (id && !atual) throw naoEncontrado('Usuário');
      if (quem) {
        const eu = await Usuario.findByPk(quem.sub, { attributes: ['id', 'master', 'email'], transaction, lock: transaction.LOCK.SHARE });
        if (!eu || !eMaster(eu)) throw proibido('Somente um usuário master.');
      }
      const antes = atual?.perfil ?? null;
      const { usuario: u, visivel } = await acao(atual, transaction);
      const tipo = visivel ? eventoDaMudanca(antes, u.deletado_em ? null : u.perfil) : null;
      // the answer and the event show the row as this transaction left it, with its cadastros
      await u.reload({ include: comCadastros, transaction, paranoid: false });
      return { usuario: u, eventos: tipo ? [await registrarEvento(tipo, { ...usuarioJson(u) }, transaction)] : [] };
    }),
  );
  // master, e-mail and password decide how identity takes the user's tokens (titulares.ts): told
  // before the events are queued, which may wait seconds on a slow Redis, the old token's taken meanwhile
  if (id) await titularMudou('usuario', id);
  await enfileirar(eventos);
  return usuario;
}

/**
 * DESIGN §3: a collaborator's `e_master` and `master_pelo_ambiente`, in the events too, follow
 * MASTER_EMAILS, which a restart may change while the user stays as it was. At start, each live
 * collaborator whose e-mail entered or left the list since the list last published gets
 * `colaborador.atualizado`, else subscribers keep the old value. The list published last is kept in
 * the database and read under lock: identity processes starting together publish each change once.
 * Returns how many events were stored.
 */
export async function publicarMastersDoAmbiente(): Promise<number> {
  const atuais = [...new Set(config().identity.masterEmails)].sort();
  // a PATCH locking its target's row, then its author's, may deadlock with this walk of several rows:
  // tried again, as every transaction that locks rows (else the API's start fails on it)
  const eventos = await repetirEmConflito('publicar masters do ambiente', () =>
    banco('identity').transaction(async (transaction) => {
      const guardados: string[] = [];
      const [publicada] = await banco('identity').query<{ emails: string }>('SELECT emails FROM master_emails_publicados WHERE id = 1 FOR UPDATE', {
        transaction,
        type: QueryTypes.SELECT,
      });
      const anteriores = JSON.parse(publicada.emails) as string[];
      const mudaram = [...atuais.filter((e) => !anteriores.includes(e)), ...anteriores.filter((e) => !atuais.includes(e))];
      if (!mudaram.length) return guardados;
      // under the rows' lock, as any change of them: a PATCH made meanwhile by a process still running
      // is stored before or after this event, never overtaken by an older copy of the user
      const travados = await Usuario.findAll({
        where: { perfil: 'colaborador', [Op.and]: [where(col('email_unico'), { [Op.in]: mudaram })] },
        attributes: ['id'],
        transaction,
        lock: transaction.LOCK.UPDATE,
      });
      const usuarios = await Usuario.findAll({ where: { id: travados.map((u) => u.id) }, include: comCadastros, order: [['id', 'ASC']], transaction });
      for (const u of usuarios) guardados.push(await registrarEvento('colaborador.atualizado', { ...usuarioJson(u) }, transaction));
      await banco('identity').query('UPDATE master_emails_publicados SET emails = ? WHERE id = 1', { replacements: [JSON.stringify(atuais)], transaction });
      return guardados;
    }),
  );
  await enfileirar(eventos);
  return eventos.length;
}

/**
 * `suite unlock-login`: the user's lock and count of failures cleared, as a new password clears
 * them, through the same change: a lock lifted is a `bloqueado_ate` subscribers see turn null
 * (colaborador.atualizado), in the same transaction. Answers whether it was locked.
 */
export async function desbloquearUsuario(id: string): Promise<boolean> {
  let estava = false;
  await mudarUsuario(id, null, async (u, transaction) => {
    estava = u!.bloqueado_ate !== null && u!.bloqueado_ate > new Date();
    u!.set(SEM_BLOQUEIO);
    const visivel = u!.changed('bloqueado_ate') === true;
    if (u!.changed()) await u!.save({ transaction });
    return { usuario: u!, visivel };
  });
  return estava;
}

/** `quem`: the master creating the user (none for the initial master, created at the first start). */
export async function criarUsuario(e: Required<Pick<EntradaDeUsuario, 'nome' | 'email' | 'perfil'>> & EntradaDeUsuario, quem: Principal | null = null) {
  await conferirReferencias(e);
  await emailEmUso(e.email);
  const senha_hash = e.senha ? await hashDeSenha(e.senha) : null;
  const u = await mudarUsuario(null, quem, async (_, transaction) => ({
    usuario: await Usuario.create(
      {
        nome: e.nome,
        email: e.email,
        perfil: e.perfil,
        master: e.e_master ?? false,
        senha_hash,
        setor_id: e.setor_id ?? null,
        cargo_id: e.cargo_id ?? null,
        funcao_id: e.funcao_id ?? null,
        imagem: e.imagem ?? null,
      },
      { transaction },
    ),
    visivel: true,
  }));
  return usuarioJson(u);
}

/** Columns of a user that are not in its shape (SPEC §2), so a change of them alone publishes nothing. */
const CAMPOS_QUE_NINGUEM_VE = new Set(['senha_hash', 'tokens_validos_desde', 'falhas_de_login', 'primeira_falha_de_login_em']);

export async function atualizarUsuario(id: string, e: EntradaDeUsuario, quem: Principal): Promise<UsuarioJson> {
  await existente(id);
  await conferirReferencias(e);
  if (e.email !== undefined) await emailEmUso(e.email, id);
  const mudancas: Record<string, unknown> = {};
  for (const campo of ['nome', 'email', 'perfil', 'setor_id', 'cargo_id', 'funcao_id', 'imagem'] as const) {
    if (e[campo] !== undefined) mudancas[campo] = e[campo];
  }
  if (e.e_master !== undefined) mudancas.master = e.e_master;
  // hashed before the row is locked: the hash is slow on purpose
  const senha_hash = e.senha !== undefined ? await hashDeSenha(e.senha) : undefined;
  const mudado = await mudarUsuario(id, quem, async (atual, transaction) => {
    const u = atual!;
    // a master taking their own master away, by the flag or by leaving the e-mail MASTER_EMAILS
    // names: the suite must keep a way in. Judged on the locked row, so two PATCHes of one's own
    // user (one clearing the flag, one changing the e-mail) cannot each pass on what the other left
    if (id === quem.sub && eMaster(u) && !eMaster({ master: e.e_master ?? u.master, email: e.email ?? u.email })) {
      throw conflito('Um usuário master não pode tirar de si mesmo o master (nem trocar o e-mail pelo qual a lista de masters do ambiente o faz master).');
    }
    u.set(mudancas);
    // a new password cuts off, at identity, every token of the user issued before (login.ts), and
    // lifts a login lock: the way a master lets in at once a user whom wrong attempts (anyone's: the
    // login is public) locked out
    if (senha_hash !== undefined) u.set({ senha_hash, tokens_validos_desde: new Date(), ...SEM_BLOQUEIO });
    // nothing collaborators see changed (a password replaced by another, with the failed logins it
    // clears, or no field at all): no event; a first password changes `tem_senha`, and a lock
    // lifted `bloqueado_ate`, which they see
    const temSenhaMudou = Boolean(u.previous('senha_hash')) !== Boolean(u.senha_hash);
    const visivel = temSenhaMudou || (u.changed() || []).some((campo) => !CAMPOS_QUE_NINGUEM_VE.has(campo));
    if (u.changed()) await u.save({ transaction });
    return { usuario: u, visivel };
  });
  return usuarioJson(mudado);
}

export async function deletarUsuario(id: string, quem: Principal): Promise<void> {
  await existente(id);
  if (id === quem.sub) throw conflito('Um usuário não pode remover a si mesmo.');
  await mudarUsuario(id, quem, async (atual, transaction) => {
    await atual!.destroy({ transaction });
    return { usuario: atual!, visivel: true };
  });
}
