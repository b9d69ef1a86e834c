import { randomBytes } from 'node:crypto';
import { cliente } from './http';
import { identityDe } from './identity';

export type Permissoes = Record<string, string[]>;

/**
 * The access module of a service (DESIGN §3) as its clients use it: a master's listing that
 * registers identity's collaborators, profiles, links, and logged-in people with a given profile.
 */
export function acessoDe(urlDoIdentity: string, urlDoServico: string) {
  const identity = identityDe(urlDoIdentity);
  const api = cliente(urlDoServico);
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

  async function criarPerfil(permissoes: Permissoes, nome = `Perfil ${randomBytes(4).toString('hex')}`) {
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

  return { identity, api, admin, sincronizar, colaboradorDe, criarPerfil, vincular, pessoa };
}
