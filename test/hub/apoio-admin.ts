import { randomBytes } from 'node:crypto';
import { cliente } from '../helpers/http';
import { identityDe } from '../helpers/identity';
import { SuiteDeTeste } from '../helpers/suite';

/** What the hub's administration tests share: unique names, exact shapes and the calls a client makes. */

/** A tag no other test uses; it fits in application names and in event type names (`<tag>.criado`). */
export const unico = (rotulo = 'T') => `${rotulo}${randomBytes(4).toString('hex')}`;

/** RFC 3339 in UTC with milliseconds (DESIGN §4). */
export const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

export const chaves = (o: object) => Object.keys(o).sort();

/** SPEC §2 Assinatura, exactly. */
export const CAMPOS_DA_ASSINATURA = [
  'id',
  'aplicativo_assinante_id',
  'aplicativo_assinante_nome',
  'tipo_de_evento_id',
  'tipo_de_evento_nome',
  'versao_do_esquema',
  'situacao_da_versao',
  'url_de_destino',
  'maximo_de_tentativas',
  'tempo_limite_em_segundos',
  'ativa',
  'entregas_na_fila_de_erro',
  'ultima_entrega_em',
  'criada_em',
  'atualizada_em',
].sort();

/** SPEC §2 Aplicativo of the hub, exactly. */
export const CAMPOS_DO_APLICATIVO = [
  'id',
  'nome',
  'descricao',
  'ativo',
  'identificador_no_auth',
  'quantidade_de_tipos_de_evento',
  'quantidade_de_assinaturas',
  'criado_em',
  'atualizado_em',
].sort();

/** DESIGN §10 event type, exactly. */
export const CAMPOS_DO_TIPO = ['id', 'nome', 'descricao', 'aplicativo_id', 'aplicativo_nome', 'versoes', 'criado_em', 'atualizado_em'].sort();

/** A schema any object matches; the admin tests never publish, so its content does not matter. */
export const ESQUEMA = { type: 'object', properties: { numero: { type: 'integer' } } };

/** A subscriber address: http is accepted for localhost (SPEC 4.3 rule 7); nothing is delivered in these tests. */
export const URL_LOCAL = 'http://localhost:9/webhook';

export type Permissoes = Record<string, string[]>;

/** (name) order of the database collation for the plain ASCII names these tests use. */
export const semCaixa = (a: string, b: string) => (a.toLowerCase() < b.toLowerCase() ? -1 : a.toLowerCase() > b.toLowerCase() ? 1 : 0);

/** The hub as its clients use it: applications come from identity, a master's listing syncs them. */
export function hubDe(suite: SuiteDeTeste) {
  const identity = identityDe(suite.url.identity);
  const api = cliente(suite.url.hub);
  const admin = () => identity.admin();

  /** A master's GET /aplicativo: the sync job runs and the listing waits for it (SPEC 4.4 rule 3). */
  async function sincronizar(token?: string) {
    const res = await api.get('/aplicativo', { token: token ?? (await admin()), query: { tamanho: 1000 } });
    if (res.status !== 200) throw new Error(`hub listing: ${res.status} ${res.text}`);
    return res.body as { itens: any[]; total: number };
  }

  /** An application registered in identity only (the hub sees it at its next listing). */
  async function criarNoIdentity(nome = unico('App '), descricao?: string | null) {
    const res = await identity.api.post('/aplicativo', { token: await admin(), body: { nome, descricao } });
    if (res.status !== 201) throw new Error(`identity app: ${res.status} ${res.text}`);
    return res.body;
  }

  /** The hub record of an identity application (`identificador_no_auth` = identity id), or undefined. */
  async function doHub(idNoIdentity: string) {
    const res = await api.get('/aplicativo/filtro', { token: await admin() });
    if (res.status !== 200) throw new Error(`hub filter: ${res.status} ${res.text}`);
    return (res.body as any[]).find((a) => a.identificador_no_auth === idNoIdentity);
  }

  /** Applications created in identity and synced into the hub; answers their hub records in the same order. */
  async function aplicativos(...nomes: string[]) {
    const criados: any[] = [];
    for (const nome of nomes) criados.push(await criarNoIdentity(nome));
    await sincronizar();
    const todos = (await api.get('/aplicativo/filtro', { token: await admin() })).body as any[];
    return criados.map((c) => {
      const local = todos.find((a) => a.identificador_no_auth === c.id);
      if (!local) throw new Error(`${c.nome} did not reach the hub`);
      return local;
    });
  }

  /** An event type of `aplicativoId` with `versoes` schema versions, all active. */
  async function criarTipo(aplicativoId: string, o: { nome?: string; descricao?: string; versoes?: number } = {}) {
    const token = await admin();
    const res = await api.post('/tipo_de_evento', {
      token,
      body: { nome: o.nome ?? `${unico('tipo')}.criado`, descricao: o.descricao, aplicativo_id: aplicativoId },
    });
    if (res.status !== 201) throw new Error(`create type: ${res.status} ${res.text}`);
    for (let i = 0; i < (o.versoes ?? 1); i++) {
      const v = await api.post(`/tipo_de_evento/${res.body.id}/versao`, { token, body: { esquema: ESQUEMA } });
      if (v.status !== 201) throw new Error(`create version: ${v.status} ${v.text}`);
    }
    return (await api.get(`/tipo_de_evento/${res.body.id}`, { token })).body;
  }

  async function mudarVersao(tipoId: string, versao: number, situacao: 'ativa' | 'depreciada' | 'desligada') {
    const res = await api.patch(`/tipo_de_evento/${tipoId}/versao/${versao}`, { token: await admin(), body: { situacao } });
    if (res.status !== 200) throw new Error(`version situation: ${res.status} ${res.text}`);
    return res.body;
  }

  async function criarAssinatura(campos: Record<string, unknown>) {
    const res = await api.post('/assinatura', { token: await admin(), body: { url_de_destino: URL_LOCAL, versao_do_esquema: 1, ...campos } });
    if (res.status !== 201) throw new Error(`create subscription: ${res.status} ${res.text}`);
    return res.body;
  }

  /** Every live subscription, in the filter's order (SPEC 4.3 rule 4). */
  async function todasAsAssinaturas(): Promise<any[]> {
    const res = await api.get('/assinatura/filtro', { token: await admin() });
    if (res.status !== 200) throw new Error(`subscription filter: ${res.status} ${res.text}`);
    return res.body;
  }

  /**
   * Logged-in identity collaborators registered in the hub by a master's GET /colaborador, one per
   * entry: undefined keeps `Acesso inicial` (read in every area), otherwise a new hub profile with
   * those permissions is linked.
   */
  async function pessoas(...lista: (Permissoes | undefined)[]) {
    const token = await admin();
    const logados: { usuario: any; token: string }[] = [];
    for (let i = 0; i < lista.length; i++) logados.push(await identity.criarUsuarioLogado());
    const sync = await api.get('/colaborador', { token });
    if (sync.status !== 200) throw new Error(`hub collaborator listing: ${sync.status} ${sync.text}`);
    const locais = (await api.get('/colaborador/filtro', { token })).body as any[];
    return Promise.all(
      lista.map(async (permissoes, i) => {
        const { usuario } = logados[i];
        const colaborador = locais.find((c) => c.auth_id === usuario.id);
        if (!colaborador) throw new Error(`${usuario.email} was not registered in the hub`);
        if (permissoes) {
          const perfil = await api.post('/perfil_acesso', { token, body: { nome: unico('Perfil '), permissoes } });
          if (perfil.status !== 201) throw new Error(`create profile: ${perfil.status} ${perfil.text}`);
          const link = await api.patch(`/colaborador/${colaborador.id}/perfil_acesso`, { token, body: { perfil_acesso_id: perfil.body.id } });
          if (link.status !== 200) throw new Error(`link profile: ${link.status} ${link.text}`);
        }
        return { ...logados[i], colaborador };
      }),
    );
  }

  return { identity, api, admin, sincronizar, criarNoIdentity, doHub, aplicativos, criarTipo, mudarVersao, criarAssinatura, todasAsAssinaturas, pessoas };
}

export type Hub = ReturnType<typeof hubDe>;
