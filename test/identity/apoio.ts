import { randomBytes } from 'node:crypto';
import { dormir } from '../helpers/espera';

/** What the identity test files share: unique data, the Usuario shape, timestamps and polling. */

/** A unique lowercase mark: names and e-mails carrying it isolate one test's data from the rest. */
export const marca = (prefixo = 'm') => `${prefixo}${randomBytes(5).toString('hex')}`;

/** SPEC §2 Usuario: every field, sorted. */
export const CAMPOS_DO_USUARIO = [
  'atualizado_em',
  'bloqueado_ate',
  'cargo',
  'cargo_id',
  'criado_em',
  'dois_fatores_ativo',
  'e_master',
  'email',
  'email_verificado',
  'funcao',
  'funcao_id',
  'id',
  'imagem',
  'master_pelo_ambiente',
  'nome',
  'perfil',
  'setor',
  'setor_id',
  'tem_senha',
  'ultimo_login_em',
];

/** DESIGN §4: RFC 3339 UTC. */
export const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

export const chavesOrdenadas = (o: object) => Object.keys(o).sort();

export { dormir, esperarAte } from '../helpers/espera';

/**
 * A token's `iat` counts whole seconds: waits until the clock enters the next one, so a token issued
 * before is of an earlier second than whatever comes after.
 */
export const proximoSegundo = () => dormir(1000 - (Date.now() % 1000));
