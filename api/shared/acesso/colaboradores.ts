import { ModelStatic, Op, WhereOptions } from 'sequelize';
import { repetirEmConflito } from '../../../lib/database';
import { leituraPorIdEmLotes } from '../../../lib/lotes';
import { iso } from '../../../models/shared/base';
import { ColaboradorBase } from '../../../models/shared/colaborador';
import { PerfilAcessoBase } from '../../../models/shared/perfil-acesso';
import { conflito, naoEncontrado, referenciaInvalida } from '../errors';
import { contem, PaginaCursor } from '../paginacao';
import { Autoridade, ConferirAlcance } from './permissoes';

/** GET /colaborador always answers pages of 50 (SPEC 4.5 rule 1). */
export const TAMANHO_DA_PAGINA = 50;

/** People registered per INSERT by a sync (tests lower it): each row a few hundred bytes, far under any packet limit. */
export const REGISTROS_POR_INSERT = { maximo: 1000 };

export interface ColaboradorJson {
  id: string;
  auth_id: string;
  nome: string;
  email: string;
  ativo: boolean;
  master: boolean;
  cargo: string | null;
  funcao: string | null;
  setor: string | null;
  telefone: string | null;
  perfil_acesso_id: string | null;
  perfil_acesso: string | null;
  criado_em: string;
  atualizado_em: string;
}

export interface FiltrosDeColaborador {
  busca?: string;
  nome?: string;
  email?: string;
  setor?: string;
  cargo?: string;
  ativo?: boolean;
  perfil_acesso_id?: string;
}

/** What the identity service says of a collaborator (SPEC §2 Usuario fields used here). */
/** What a mirror of identity's collaborators did: people registered, changed (or restored) and removed. */
export interface ResultadoDoEspelho {
  criados: number;
  atualizados: number;
  removidos: number;
}

/** How far a mirror got: identity's people looked at (`vistas`, `de`) and the counts so far. */
export interface ProgressoDoEspelho extends ResultadoDoEspelho {
  vistas: number;
  de: number;
}

export interface UsuarioDoIdentity {
  id: string;
  nome: string;
  email: string;
  e_master: boolean;
  setor?: string | null;
  cargo?: string | null;
  funcao?: string | null;
}

type ComPerfil = ColaboradorBase & { perfil?: PerfilAcessoBase | null };

/** What a Colaborador is made of: a model instance, or a row read by hand (porId). */
type CamposDoColaborador = Pick<
  ColaboradorBase,
  'id' | 'auth_id' | 'nome' | 'email' | 'ativo' | 'master' | 'cargo' | 'funcao' | 'setor' | 'telefone' | 'perfil_acesso_id' | 'criado_em' | 'atualizado_em'
> & { perfil?: { nome: string } | null };

export function colaboradorJson(c: CamposDoColaborador): ColaboradorJson {
  return {
    id: c.id,
    auth_id: c.auth_id,
    nome: c.nome,
    email: c.email,
    ativo: c.ativo,
    master: c.master,
    cargo: c.cargo,
    funcao: c.funcao,
    setor: c.setor,
    telefone: c.telefone,
    perfil_acesso_id: c.perfil_acesso_id,
    perfil_acesso: c.perfil?.nome ?? null,
    criado_em: iso(c.criado_em)!,
    atualizado_em: iso(c.atualizado_em)!,
  };
}

function filtrosWhere(f: FiltrosDeColaborador): WhereOptions {
  const e: WhereOptions[] = [];
  if (f.busca) e.push({ [Op.or]: [{ nome: { [Op.like]: contem(f.busca) } }, { email: { [Op.like]: contem(f.busca) } }] });
  if (f.nome) e.push({ nome: { [Op.like]: contem(f.nome) } });
  if (f.email) e.push({ email: { [Op.like]: contem(f.email) } });
  if (f.setor) e.push({ setor: { [Op.like]: contem(f.setor) } });
  if (f.cargo) e.push({ cargo: { [Op.like]: contem(f.cargo) } });
  if (f.ativo !== undefined) e.push({ ativo: f.ativo });
  if (f.perfil_acesso_id) e.push({ perfil_acesso_id: f.perfil_acesso_id });
  return e.length ? { [Op.and]: e } : {};
}

/**
 * Collaborators of one service (SPEC 4.5). `aoMudarPerfil` drops the cached permissions of the
 * person at once; other processes see the change within the cache time (5 minutes at most).
 */
export function criarColaboradores(
  Colaborador: ModelStatic<ColaboradorBase>,
  PerfilAcesso: ModelStatic<PerfilAcessoBase>,
  conferirAlcance: ConferirAlcance,
  aoMudarPerfil: (authId: string) => void,
) {
  const incluirPerfil = [{ model: PerfilAcesso, as: 'perfil', attributes: ['id', 'nome'], required: false }];
  const ORDEM: [string, string][] = [
    ['nome', 'ASC'],
    ['id', 'ASC'],
  ];

  /** Reads by id that arrive together share one statement (lib/lotes.ts). */
  const porIdEmLotes = leituraPorIdEmLotes<CamposDoColaborador & { perfil_nome: string | null }>(
    () => Colaborador.sequelize!,
    (marcas) => `SELECT c.*, p.nome AS perfil_nome
       FROM ${Colaborador.getTableName()} c
       LEFT JOIN ${PerfilAcesso.getTableName()} p ON p.id = c.perfil_acesso_id AND p.deletado_em IS NULL
      WHERE c.id IN (${marcas}) AND c.deletado_em IS NULL`,
  );

  /** Items after the cursor in (nome, id) order; an unknown cursor gives an empty page (SPEC 4.5 rule 1). */
  async function depoisDoCursor(cursor: string | undefined): Promise<WhereOptions | null> {
    if (!cursor) return {};
    const marco = await Colaborador.findByPk(cursor, { paranoid: false, attributes: ['id', 'nome'] });
    if (!marco) return null;
    return {
      [Op.or]: [{ nome: { [Op.gt]: marco.nome } }, { nome: marco.nome, id: { [Op.gt]: marco.id } }],
    };
  }

  async function paginaCursor<T>(
    where: WhereOptions,
    cursor: string | undefined,
    tamanho: number,
    mapear: (c: ComPerfil) => T,
    comPerfil: boolean,
  ): Promise<PaginaCursor<T>> {
    const depois = await depoisDoCursor(cursor);
    if (depois === null) return { itens: [], proximo_cursor: null, tamanho };
    const linhas = await Colaborador.findAll({
      where: { [Op.and]: [where, depois] },
      order: ORDEM,
      limit: tamanho + 1,
      include: comPerfil ? incluirPerfil : [],
    });
    const itens = linhas.slice(0, tamanho);
    const proximo = linhas.length > tamanho ? itens[itens.length - 1].id : null;
    return { itens: itens.map(mapear), proximo_cursor: proximo, tamanho };
  }

  async function identidadeDe(id: string): Promise<{ authId: string; master: boolean }> {
    const c = await Colaborador.findByPk(id, { attributes: ['auth_id', 'master'] });
    if (!c) throw naoEncontrado('Colaborador');
    return { authId: c.auth_id, master: c.master };
  }

  async function existente(id: string): Promise<ComPerfil> {
    const c = await Colaborador.findByPk(id, { include: incluirPerfil });
    if (!c) throw naoEncontrado('Colaborador');
    return c;
  }

  /**
   * Writes identity's data of one known collaborator, with the profile that goes with it, decided
   * from the row as it stands, locked: the sync read every row before it began, and a link made
   * since must be judged by the row it left. A person who is master loses the profile (SPEC 4.5
   * rule 7), one linked since included. One whose row still says master had none by that rule, not
   * by anyone's choice (a master's row refuses a link; a link made after identity said otherwise
   * cleared the row's flag), and takes `Acesso inicial`, as one registered anew (DESIGN §10), not a
   * person left with no area; decided from the sync's earlier read, a link made during the sync to
   * a master demoted before it was replaced by `Acesso inicial`.
   *
   * One back in identity is brought back; the profile they had may have been deleted while they
   * were away: then they come back with `Acesso inicial`. The profile is read FOR SHARE, so a
   * deletion under way (it locks the profile before counting its links) either finishes first or
   * counts this person. Locks taken as a link takes them (the person, then the profile); other
   * orders by other writers: run again on a deadlock.
   */
  function espelharUm(id: string, dados: Record<string, unknown>, acessoInicialId: string): Promise<void> {
    return repetirEmConflito('espelho de colaborador', () =>
      Colaborador.sequelize!.transaction(async (transaction) => {
        const linha = await Colaborador.findByPk(id, { paranoid: false, transaction, lock: transaction.LOCK.UPDATE });
        if (!linha) return;
        const mudancas: Record<string, unknown> = { ...dados };
        // a master's null already in `dados`; otherwise a row still saying master takes `Acesso inicial`
        if (mudancas.perfil_acesso_id === undefined && linha.master) mudancas.perfil_acesso_id = acessoInicialId;
        if (linha.deletado_em) {
          const perfilId = mudancas.perfil_acesso_id === undefined ? linha.perfil_acesso_id : null;
          if (perfilId && !(await PerfilAcesso.findByPk(perfilId, { attributes: ['id'], transaction, lock: transaction.LOCK.SHARE }))) {
            mudancas.perfil_acesso_id = acessoInicialId;
          }
          await linha.restore({ transaction });
        }
        await Colaborador.update(mudancas, { where: { id }, transaction });
      }),
    );
  }

  return {
    listar(f: Pick<FiltrosDeColaborador, 'nome' | 'setor' | 'cargo' | 'ativo'>, cursor?: string) {
      return paginaCursor(filtrosWhere(f), cursor, TAMANHO_DA_PAGINA, colaboradorJson, true);
    },

    autocompletar(busca: string | undefined, tamanho: number, cursor?: string) {
      return paginaCursor(filtrosWhere({ busca }), cursor, tamanho, (c) => ({ id: c.id, nome: c.nome, email: c.email }), false);
    },

    async filtrar(f: FiltrosDeColaborador): Promise<ColaboradorJson[]> {
      const linhas = await Colaborador.findAll({ where: filtrosWhere(f), order: ORDEM, include: incluirPerfil });
      return linhas.map(colaboradorJson);
    },

    async total(f: Pick<FiltrosDeColaborador, 'nome' | 'setor' | 'cargo' | 'ativo'>): Promise<{ total: number }> {
      return { total: await Colaborador.count({ where: filtrosWhere(f) }) };
    },

    /** The most frequent read: reads that arrive together share one statement. */
    async porId(id: string): Promise<ColaboradorJson> {
      const linha = await porIdEmLotes(id);
      if (!linha) throw naoEncontrado('Colaborador');
      const perfil = linha.perfil_nome === null ? null : { nome: linha.perfil_nome };
      return colaboradorJson({ ...linha, ativo: Boolean(linha.ativo), master: Boolean(linha.master), perfil });
    },

    /**
     * SPEC 4.5 rule 7: a listed profile or null; a master takes no profile. The local `master` flag
     * is only as fresh as the last master listing: `masterNoIdentity`, given when the caller may ask
     * identity about someone else, says whether the person is master there now.
     */
    async vincularPerfil(
      id: string,
      perfilAcessoId: string | null | undefined,
      autoridade: Autoridade,
      masterNoIdentity?: (authId: string) => Promise<boolean>,
    ): Promise<ColaboradorJson> {
      if (perfilAcessoId === undefined) return colaboradorJson(await existente(id));
      // undefined when identity was not asked: the local flag decides then
      let masterSegundoIdentity: boolean | undefined;
      // the local flag as it was when identity was asked
      let masterAoPerguntar: boolean | undefined;
      if (perfilAcessoId !== null && masterNoIdentity) {
        const { authId, master } = await identidadeDe(id);
        masterAoPerguntar = master;
        // a profile that does not exist is refused before identity is asked (DESIGN §10: 404, then
        // 422, then 409), identity away or not; read again under lock below
        if (!(await PerfilAcesso.findByPk(perfilAcessoId, { attributes: ['id'] }))) throw referenciaInvalida('perfil_acesso_id', 'Perfil de acesso não encontrado.');
        // asked before the row is locked, so no lock waits on identity (a person's auth_id never changes)
        masterSegundoIdentity = await masterNoIdentity(authId);
      }
      // the collaborator's row locked, the new profile read FOR SHARE: a profile deletion (which
      // locks it FOR UPDATE before counting its links) or a sync making the person master waits;
      // then the caller's authority, under shared locks too (a caller changing their own link
      // already holds their row). Locks taken in other orders by other writers: run again on a deadlock
      const colaborador = await repetirEmConflito('vínculo de perfil', () => Colaborador.sequelize!.transaction(async (transaction) => {
        const c = (await Colaborador.findByPk(id, { transaction, lock: transaction.LOCK.UPDATE })) as ComPerfil | null;
        if (!c) throw naoEncontrado('Colaborador');
        const alcance = await autoridade(transaction);
        let perfil: PerfilAcessoBase | null = null;
        if (perfilAcessoId !== null) {
          perfil = await PerfilAcesso.findByPk(perfilAcessoId, { transaction, lock: transaction.LOCK.SHARE });
          if (!perfil) throw referenciaInvalida('perfil_acesso_id', 'Perfil de acesso não encontrado.');
          // identity's answer of a moment ago is fresher than the flag of the last master listing,
          // both ways (made master since, or master no more), unless a listing made the person
          // master after the question
          const master = masterSegundoIdentity === undefined ? c.master : masterSegundoIdentity || (c.master && !masterAoPerguntar);
          if (master) throw conflito('Um colaborador master no identity não aceita perfil de acesso.');
          // the row learns it too, or the next listing, taking the person for a master demoted
          // since, would replace this profile with `Acesso inicial`
          if (masterSegundoIdentity === false) c.master = false;
          conferirAlcance(perfil.permissoes, alcance);
        }
        // the profile taken away must be one the caller could have given too
        // (shared lock: a change of it meanwhile waits, and is not what was checked)
        const atual = c.perfil_acesso_id
          ? await PerfilAcesso.findByPk(c.perfil_acesso_id, { attributes: ['id', 'permissoes'], transaction, lock: transaction.LOCK.SHARE })
          : null;
        if (atual) conferirAlcance(atual.permissoes, alcance);
        c.perfil_acesso_id = perfil?.id ?? null;
        await c.save({ transaction });
        c.perfil = perfil;
        return c;
      }));
      aoMudarPerfil(colaborador.auth_id);
      return colaboradorJson(colaborador);
    },

    /**
     * Mirrors the identity collaborators (SPEC 4.5 rule 2, DESIGN §10): registers the new ones
     * (masters without a profile, everyone else with `Acesso inicial`), updates changed ones and
     * marks as deleted those gone from identity. `aoProgredir` hears how many of identity's people
     * were looked at after each one updated (row by row: a mirror after many changes takes a
     * while), then the counts once the new ones are registered and the gone ones removed.
     */
    async espelhar(
      usuarios: UsuarioDoIdentity[],
      acessoInicialId: string,
      aoProgredir?: (p: ProgressoDoEspelho) => void,
    ): Promise<ResultadoDoEspelho> {
      const locais = await Colaborador.findAll({ paranoid: false });
      const porAuthId = new Map(locais.map((c) => [c.auth_id, c]));
      const vistos = new Set<string>();
      const resultado: ResultadoDoEspelho = { criados: 0, atualizados: 0, removidos: 0 };
      const novos: Record<string, unknown>[] = [];
      for (const [i, u] of usuarios.entries()) {
        vistos.add(u.id);
        const dados = {
          nome: u.nome,
          email: u.email,
          master: u.e_master,
          setor: u.setor ?? null,
          cargo: u.cargo ?? null,
          funcao: u.funcao ?? null,
          ativo: true,
        };
        const local = porAuthId.get(u.id);
        if (!local) {
          novos.push({ auth_id: u.id, ...dados, perfil_acesso_id: u.e_master ? null : acessoInicialId });
          continue;
        }
        const mudou = (Object.keys(dados) as (keyof typeof dados)[]).some((k) => local.get(k) !== dados[k]);
        if (mudou || local.deletado_em) {
          // a master loses any profile (SPEC 4.5 rule 7); only a return or a demotion decide from the
          // row, otherwise its master flag is the one read (only a sync sets it, one at a time; a
          // link only clears it)
          const mudancas = { ...dados, ...(u.e_master ? { perfil_acesso_id: null } : {}) };
          if (local.deletado_em || (local.master && !u.e_master)) await espelharUm(local.id, mudancas, acessoInicialId);
          else await Colaborador.update(mudancas, { where: { id: local.id } });
          aoMudarPerfil(local.auth_id);
          resultado.atualizados++;
          aoProgredir?.({ ...resultado, vistas: i + 1, de: usuarios.length });
        }
      }
      if (novos.length) {
        // in slices: a first sync of a large company (tens of thousands of people at once) in one
        // INSERT passed MariaDB's max_allowed_packet (16 MiB by default) and failed at every listing
        const n = REGISTROS_POR_INSERT.maximo;
        for (let i = 0; i < novos.length; i += n) {
          const fatia = novos.slice(i, i + n);
          await Colaborador.bulkCreate(fatia);
          // a refusal cached before the person was registered must not outlive the registration
          // (each slice's at once: a later slice that fails leaves the earlier ones registered)
          fatia.forEach((f) => aoMudarPerfil(f.auth_id as string));
        }
        resultado.criados = novos.length;
      }
      const sumidos = locais.filter((c) => !c.deletado_em && !vistos.has(c.auth_id));
      if (sumidos.length) {
        await Colaborador.destroy({ where: { id: sumidos.map((c) => c.id) } });
        sumidos.forEach((c) => aoMudarPerfil(c.auth_id));
        resultado.removidos = sumidos.length;
      }
      aoProgredir?.({ ...resultado, vistas: usuarios.length, de: usuarios.length });
      return resultado;
    },
  };
}

export type Colaboradores = ReturnType<typeof criarColaboradores>;
