import { config } from '../../config';
import { NomeDoServico } from '../../config/services';
import { credenciaisDe } from '../../lib/credenciais';

const guardados = new Map<NomeDoServico, { clientId: string; token: string; expiraEm: number }>();

/**
 * A suite service's own application token (client credentials at identity, DESIGN §3), when its
 * secret is registered; undefined otherwise. Reused until a minute before it expires: identity
 * limits /auth/token per client address (DESIGN §10), and a token per call would hit that limit.
 */
export async function tokenDoServico(servico: NomeDoServico): Promise<string | undefined> {
  const c = await credenciaisDe(servico);
  if (!c) return undefined;
  const guardado = guardados.get(servico);
  if (guardado?.clientId === c.clientId && guardado.expiraEm - 60_000 > Date.now()) return guardado.token;
  const res = await fetch(`${config().servicos.identity.url}/auth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_id: c.clientId, client_secret: c.clientSecret }),
    signal: AbortSignal.timeout(5000),
  });
  if (!res.ok) throw new Error(`identity refused the ${servico} service's credentials (${res.status})`);
  const { access_token, expires_in } = (await res.json()) as { access_token: string; expires_in: number };
  guardados.set(servico, { clientId: c.clientId, token: access_token, expiraEm: Date.now() + expires_in * 1000 });
  return access_token;
}

/** A token another service refused (401) is not reused: identity may have new keys. */
export function esquecerTokenDoServico(servico: NomeDoServico): void {
  guardados.delete(servico);
}
