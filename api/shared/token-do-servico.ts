import { config } from '../../config';
import { NomeDoServico } from '../../config/services';
import { CargasEmCurso } from '../../lib/cache';
import { credenciaisDe } from '../../lib/credenciais';
import { logger } from '../../lib/logger';
import { largarResposta } from '../../lib/resposta';

const log = logger('credenciais');

const guardados = new Map<NomeDoServico, { clientId: string; token: string; renovarEm: number }>();

/**
 * Credentials identity refused (a secret renewed at identity and not yet in this service's
 * settings) are not offered again for a minute: every copy or sync would otherwise ask, write the
 * same error line and use up the token requests identity allows per address, which the suite's
 * other services on the same host share.
 */
const recusadas = new Map<NomeDoServico, { credenciais: string; ate: number }>();
const PAUSA_APOS_RECUSA_MS = 60_000;

const recusa = (servico: NomeDoServico, configuracao: string) =>
  new Error(
    `identity refused the ${servico} service's credentials: the secret in ${configuracao} is not the application's current one ` +
      '(renewed by POST /aplicativo/{id}/segredo?); see "Renewing a suite service\'s secret" in the README',
  );

/**
 * A suite service's own application token (client credentials at identity, DESIGN §3), when its
 * secret is registered; undefined otherwise. Reused until a minute before it expires, or until three
 * quarters of its life for a shorter one (IDENTITY_TOKEN_APLICATIVO_SEGUNDOS may be 60): identity
 * limits /auth/token per client address (DESIGN §10), and a token per call would hit that limit.
 */
export async function tokenDoServico(servico: NomeDoServico): Promise<string | undefined> {
  const c = await credenciaisDe(servico);
  if (!c) return undefined;
  const guardado = guardados.get(servico);
  if (guardado?.clientId === c.clientId && guardado.renovarEm > Date.now()) return guardado.token;
  const credenciais = `${c.clientId}\n${c.clientSecret}`;
  const recusada = recusadas.get(servico);
  if (recusada?.credenciais === credenciais && recusada.ate > Date.now()) throw recusa(servico, c.configuracao);
  // callers at once (a worker's copies at its start, each hourly renewal) share one request: one
  // each would spend identity's per-address allowance, and log a refusal once per caller
  return pedidos.compartilhar(`${servico}\n${credenciais}`, () => pedirToken(servico, c, credenciais));
}

/** The token request under way for each service and the credentials it was made with. */
const pedidos = new CargasEmCurso<string, string>();

async function pedirToken(
  servico: NomeDoServico,
  c: NonNullable<Awaited<ReturnType<typeof credenciaisDe>>>,
  credenciais: string,
): Promise<string> {
  const res = await fetch(`${config().servicos.identity.url}/auth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_id: c.clientId, client_secret: c.clientSecret }),
    signal: AbortSignal.timeout(5000),
  });
  if (!res.ok) largarResposta(res);
  if (res.status === 401) {
    recusadas.set(servico, { credenciais, ate: Date.now() + PAUSA_APOS_RECUSA_MS });
    const erro = recusa(servico, c.configuracao);
    log.error({ servico, client_id: c.clientId, configuracao: c.configuracao, erro: erro.message }, 'o identity recusou as credenciais do serviço');
    throw erro;
  }
  if (!res.ok) throw new Error(`identity answered ${res.status} to the ${servico} service's token request`);
  const { access_token, expires_in } = (await res.json()) as { access_token: string; expires_in: number };
  const vidaMs = expires_in * 1000;
  guardados.set(servico, { clientId: c.clientId, token: access_token, renovarEm: Date.now() + vidaMs - Math.min(60_000, vidaMs / 4) });
  return access_token;
}

/**
 * A token another service refused (401) is not reused: identity may have new keys. Given the
 * refused token, only that one is forgotten: a newer one asked for meanwhile stays.
 */
export function esquecerTokenDoServico(servico: NomeDoServico, recusado?: string): void {
  if (recusado === undefined || guardados.get(servico)?.token === recusado) guardados.delete(servico);
}
