import { randomBytes } from 'node:crypto';
import { cliente } from '../helpers/http';
import { identityDe } from '../helpers/identity';
import { SuiteDeTeste } from '../helpers/suite';

/** A tag no other test uses: a test's names and e-mails carry it and its reads filter by it. */
export const unico = (rotulo = 'T') => `${rotulo}${randomBytes(4).toString('hex')}`;

/** RFC 3339 in UTC, as DESIGN §4 writes timestamps. */
export const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

/** The fields of SPEC §2 Colaborador, exactly. */
export const CAMPOS_DO_COLABORADOR = [
  'id',
  'auth_id',
  'nome',
  'email',
  'ativo',
  'master',
  'cargo',
  'funcao',
  'setor',
  'telefone',
  'perfil_acesso_id',
  'perfil_acesso',
  'criado_em',
  'atualizado_em',
].sort();

export const ACESSO_INICIAL = 'Acesso inicial';

export type Permissoes = Record<string, string[]>;

/** (nome, id) order of SPEC 4.5 rule 1, for names that compare the same in JS and in the database. */
export const porNomeEId = (a: { nome: string; id: string }, b: { nome: string; id: string }) =>
  a.nome < b.nome ? -1 : a.nome > b.nome ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0;

/** The intranet as its clients use it: identity users, a master's listing, profiles and links. */
export function intranetDe(suite: SuiteDeTeste) {
  const identity = identityDe(suite.url.identity);
  const api = cliente(suite.url.intranet);
  const admin = () => identity.admin();

  /** A master's GET /colaborador: the sync job runs and the listing waits for it (SPEC 4.5 rule 2). */
  async function sincronizar(query?: Record<string, string>) {
    const res = await api.get('/colaborador', { token: await admin(), query });
    if (res.status !== 200) throw new Error(`master listing: ${res.status} ${res.text}`);
    return res.body;
  }

  /** The local record of an identity user, found through the filter route (deleted ones are not found). */
  async function colaboradorDe(usuario: { id: string; email: string }) {
    const res = await api.get('/colaborador/filtro', { token: await admin(), query: { email: usuario.email } });
    if (res.status !== 200) throw new Error(`filter: ${res.status} ${res.text}`);
    return (res.body as any[]).find((c) => c.auth_id === usuario.id);
  }

  async function criarPerfil(permissoes: Permissoes, nome = unico('Perfil ')) {
    const res = await api.post('/perfil_acesso', { token: await admin(), body: { nome, permissoes } });
    if (res.status !== 201) throw new Error(`create profile: ${res.status} ${res.text}`);
    return res.body;
  }

  async function vincular(colaboradorId: string, perfilAcessoId: string | null) {
    const res = await api.patch(`/colaborador/${colaboradorId}/perfil_acesso`, {
      token: await admin(),
      body: { perfil_acesso_id: perfilAcessoId },
    });
    if (res.status !== 200) throw new Error(`link profile: ${res.status} ${res.text}`);
    return res.body;
  }

  /**
   * A logged-in identity collaborator registered by a master's listing. `permissoes` undefined
   * keeps `Acesso inicial`, which the listing gave; null removes the profile; otherwise a new
   * profile with them is linked.
   */
  async function pessoa(o: { permissoes?: Permissoes | null; campos?: Record<string, unknown> } = {}) {
    const { usuario, token } = await identity.criarUsuarioLogado(o.campos);
    await sincronizar();
    let colaborador = await colaboradorDe(usuario);
    if (!colaborador) throw new Error(`${usuario.email} was not registered by the master listing`);
    let perfil: any;
    if (o.permissoes === null) colaborador = await vincular(colaborador.id, null);
    else if (o.permissoes) {
      perfil = await criarPerfil(o.permissoes);
      colaborador = await vincular(colaborador.id, perfil.id);
    }
    return { usuario, token, colaborador, perfil };
  }

  async function acessoInicial() {
    const res = await api.get('/perfil_acesso/filtro', { token: await admin(), query: { nome: ACESSO_INICIAL } });
    return (res.body as any[]).find((p) => p.nome === ACESSO_INICIAL);
  }

  return { identity, api, admin, sincronizar, colaboradorDe, criarPerfil, vincular, pessoa, acessoInicial };
}

export type Intranet = ReturnType<typeof intranetDe>;
