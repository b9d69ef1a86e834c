import { ModelStatic, Transaction } from 'sequelize';
import { CacheComPrazo } from '../../../lib/cache';
import { ColaboradorBase } from '../../../models/shared/colaborador';
import { Acao, PerfilAcessoBase, Permissoes } from '../../../models/shared/perfil-acesso';
import { TokenRecusado } from '../../../queues/fila';
import { ErroDeDominio, proibido } from '../errors';
import { lerDoIdentitySeExistir } from '../leitura-do-identity';
import { Principal } from '../principal';
import { descrita, Permissao, somenteMaster } from '../rotas';

export const ACOES: Acao[] = ['ler', 'criar', 'editar', 'deletar'];
export const TODAS = 'todas' as const;

/** What someone holds: their permissions, or all of them (a master); what they may grant (conferirAlcance). */
export type Alcance = Permissoes | typeof TODAS;

/**
 * Whether every action of `permissoes` is one `de` holds too (a master holds them all). In the
 * areas `lidasPorQualquerAcao`, any action includes reading (SPEC 5.2: "where stated"); elsewhere
 * reading needs `ler` itself, as the routes check it.
 */
export function contidas(permissoes: Permissoes, de: Alcance, lidasPorQualquerAcao: ReadonlySet<string>): boolean {
  if (de === TODAS) return true;
  return Object.entries(permissoes).every(([area, acoes]) => {
    const tem = de[area] ?? [];
    return acoes.every((a) => tem.includes(a) || (a === 'ler' && tem.length > 0 && lidasPorQualquerAcao.has(area)));
  });
}

const naoConfirmado = () => proibido('O identity não confirma que você é master; entre de novo.');

/**
 * What a caller may grant, as the write that grants decides it: run inside that write's
 * transaction, it reads the caller's permissions again with shared locks, so a removal of them
 * committed after they were first read (alcanceParaConceder) is seen, and one committing meanwhile
 * waits for the grant, instead of being undone by a grant made on what it removed.
 */
export type Autoridade = (transaction: Transaction) => Promise<Alcance>;

/** Checks that a grant sits within what its author holds (`conferirAlcance` of a ControleDeAcesso). */
export type ConferirAlcance = (permissoes: Permissoes, de: Alcance) => void;

export interface ControleDeAcesso {
  permissoesDe(principal: Principal): Promise<Alcance>;
  /**
   * What the caller may grant, read afresh, once `acao` in `area` (the route's own permission) is
   * confirmed on that fresh reading too: a grant outlives the request, so it is never made on
   * authority that may have been taken away (a master's word in a token issued before a demotion,
   * permissions cached before another process removed them). 403 at once when lacking; the write
   * reads them once more in its transaction (Autoridade).
   */
  alcanceParaConceder(principal: Principal, acao: Acao, area: string): Promise<Autoridade>;
  /**
   * Whether identity says the person `authId` is master now, asked with a master caller's token
   * (only a master may read someone else there, SPEC 4.1). One identity no longer has is no
   * master (the next master listing removes them); without identity's answer, 503.
   */
  masterNoIdentity(principal: Principal, authId: string): Promise<boolean>;
  /**
   * A master caller that identity still takes as master, for a change that outlives the request (a
   * credential written): the token's word holds for its 8 hours after a demotion. 403 when identity
   * says no; without its answer, 503.
   */
  masterConfirmado: Permissao;
  /** permission `acao` in `area` */
  pode(acao: Acao, area: string): Permissao;
  /**
   * As `pode`, with a master's word confirmed by identity (as `masterConfirmado`): for a change whose
   * effect outlives the token (a hub subscription sends data to its address for good).
   */
  podeComMasterConfirmado(acao: Acao, area: string): Permissao;
  /** permission `acao` in at least one of the areas (SPEC 4.3/4.4: `ler` in one of several) */
  podeEmAlguma(acao: Acao, ...areas: string[]): Permissao;
  /** any action in any of the areas grants read (SPEC 5.2); only areas declared so */
  lerEmQualquer(...areas: string[]): Permissao;
  /**
   * Who administers access grants no more than they hold: a profile created, changed, deleted or
   * linked, and the one a collaborator loses, must sit within the caller's own permissions.
   */
  conferirAlcance: ConferirAlcance;
  /** forget cached permissions: of one person, or of everyone (a profile changed) */
  invalidar(authId?: string): void;
}

/**
 * Permissions of a caller (DESIGN §3): a master has all; otherwise those of the profile linked to
 * the caller's local collaborator record (`auth_id` = token `sub`). Lookups are cached at most
 * `cacheSegundos`; changes made in this process invalidate the cache at once.
 */
export function criarControleDeAcesso(
  Colaborador: ModelStatic<ColaboradorBase>,
  PerfilAcesso: ModelStatic<PerfilAcessoBase>,
  cacheSegundos: () => number,
  lidasPorQualquerAcao: ReadonlySet<string>,
): ControleDeAcesso {
  const cache = new CacheComPrazo<string, Permissoes>(() => cacheSegundos() * 1000);

  /** `transaction`: read in it with shared locks, which a change of them then waits for */
  async function buscar(authId: string, transaction?: Transaction): Promise<Permissoes> {
    const travar = transaction && { transaction, lock: transaction.LOCK.SHARE };
    const colaborador = await Colaborador.findOne({ where: { auth_id: authId, ativo: true }, attributes: ['id', 'perfil_acesso_id'], ...travar });
    if (!colaborador?.perfil_acesso_id) return {};
    const perfil = await PerfilAcesso.findByPk(colaborador.perfil_acesso_id, { attributes: ['id', 'permissoes'], ...travar });
    return perfil?.permissoes ?? {};
  }

  async function permissoesDe(principal: Principal): Promise<Alcance> {
    if (principal.master) return TODAS;
    if (principal.tipo !== 'usuario') return {};
    // a client is no collaborator, whatever record a service kept from when they were one (it
    // goes at the next master listing; the token says it now)
    if (principal.perfil === 'cliente') return {};
    return cache.obterOuCarregar(principal.sub, () => buscar(principal.sub));
  }

  /**
   * A token's `master` holds for its 8 hours wherever it is only verified; identity, which reads the
   * holder's row (a demoted master's token is no master's there, a removed one's is refused), says
   * whether it still holds. Without identity's word nothing is granted (503).
   */
  async function confirmarMaster(principal: Principal): Promise<void> {
    if (!(await eMasterNoIdentity(principal.sub, principal.token))) throw naoConfirmado();
  }

  /** A token identity refuses is no master's there: the caller goes by their profile instead. */
  const semTokenNaoEMaster = (err: unknown): false => {
    if (err instanceof ErroDeDominio && err.tipo === 'proibido') return false;
    throw err;
  };

  /** identity's word on `authId` (GET /usuario/{id} with `token`): false for no such user */
  async function eMasterNoIdentity(authId: string, token: string): Promise<boolean> {
    let usuario: { e_master?: unknown } | null;
    try {
      usuario = await lerDoIdentitySeExistir(`/usuario/${encodeURIComponent(authId)}`, token);
    } catch (err) {
      // the caller's token refused: whoever asks is no master there (now)
      if (err instanceof TokenRecusado) throw naoConfirmado();
      throw new ErroDeDominio('indisponivel', 'O identity não confirmou quem é master; tente de novo.', undefined, { causa: err });
    }
    return usuario?.e_master === true;
  }

  function pode(acao: Acao, area: string): Permissao {
    return descrita(`${acao} na área ${area} (ou master)`, async (principal) => {
      const p = await permissoesDe(principal);
      if (p !== TODAS && !p[area]?.includes(acao)) throw proibido(`Exige a permissão ${acao} na área ${area}.`);
    });
  }

  return {
    permissoesDe,
    async alcanceParaConceder(principal, acao, area) {
      if (principal.master) {
        // identity's word is asked before the write (no lock waits on it); a master demoted
        // meanwhile is what the token rule leaves (docs/decisoes.md)
        await confirmarMaster(principal);
        return async () => TODAS;
      }
      const ler = async (transaction?: Transaction) => {
        const frescas = principal.tipo !== 'usuario' || principal.perfil === 'cliente' ? {} : await buscar(principal.sub, transaction);
        if (!frescas[area]?.includes(acao)) throw proibido(`Exige a permissão ${acao} na área ${area}.`);
        return frescas;
      };
      await ler();
      return ler;
    },
    masterConfirmado: descrita('um master, confirmado no identity', async (principal, req) => {
      somenteMaster(principal, req);
      await confirmarMaster(principal);
    }),
    async masterNoIdentity(principal, authId) {
      if (!principal.master) throw new Error('só um master lê outra pessoa no identity');
      return eMasterNoIdentity(authId, principal.token);
    },
    pode,
    podeComMasterConfirmado: (acao, area) => {
      const daArea = pode(acao, area);
      return descrita(`${acao} na área ${area} (ou master, confirmado no identity)`, async (principal, req) => {
        // a master identity no longer confirms goes by their profile, as any collaborator
        if (principal.master && (await eMasterNoIdentity(principal.sub, principal.token).catch(semTokenNaoEMaster))) return;
        await daArea({ ...principal, master: false }, req);
      });
    },
    podeEmAlguma: (acao, ...areas) =>
      descrita(`${acao} na área ${areas.join(' ou ')} (ou master)`, async (principal) => {
        const p = await permissoesDe(principal);
        if (p !== TODAS && !areas.some((a) => p[a]?.includes(acao))) {
          throw proibido(`Exige a permissão ${acao} na área ${areas.join(' ou ')}.`);
        }
      }),
    lerEmQualquer: (...areas) => {
      // a read by any action that profiles were not checked against would let one grant `ler` unheld
      const fora = areas.filter((a) => !lidasPorQualquerAcao.has(a));
      if (fora.length) throw new Error(`áreas não declaradas como lidas por qualquer ação: ${fora.join(', ')}`);
      return descrita(`qualquer permissão na área ${areas.join(' ou ')} (ou master)`, async (principal) => {
        const p = await permissoesDe(principal);
        if (p !== TODAS && !areas.some((a) => (p[a]?.length ?? 0) > 0)) {
          throw proibido(`Exige alguma permissão na área ${areas.join(' ou ')}.`);
        }
      });
    },
    conferirAlcance(permissoes, de) {
      if (!contidas(permissoes, de, lidasPorQualquerAcao)) throw proibido('O perfil tem permissões que você não tem.');
    },
    invalidar(authId) {
      cache.esquecer(authId);
    },
  };
}
