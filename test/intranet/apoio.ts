import { randomBytes } from 'node:crypto';
import { acessoDe } from '../helpers/acesso';
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

export type { Permissoes } from '../helpers/acesso';

/** (nome, id) order of SPEC 4.5 rule 1, for names that compare the same in JS and in the database. */
export const porNomeEId = (a: { nome: string; id: string }, b: { nome: string; id: string }) =>
  a.nome < b.nome ? -1 : a.nome > b.nome ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0;

/** The intranet as its clients use it: identity users, a master's listing, profiles and links. */
export function intranetDe(suite: SuiteDeTeste) {
  const acesso = acessoDe(suite.url.identity, suite.url.intranet);

  async function acessoInicial() {
    const res = await acesso.api.get('/perfil_acesso/filtro', { token: await acesso.admin(), query: { nome: ACESSO_INICIAL } });
    return (res.body as any[]).find((p) => p.nome === ACESSO_INICIAL);
  }

  return { ...acesso, acessoInicial };
}

export type Intranet = ReturnType<typeof intranetDe>;
