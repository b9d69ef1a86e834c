import { config } from '../../config';
import { largarResposta } from '../../lib/resposta';
import { TokenRecusado } from '../../queues/fila';

/**
 * Identity answered a GET with an error other than a refused token (404: no such record), which is
 * the service's failure (500), not the caller's: `statusDoIdentity` says what identity answered.
 */
export class RespostaDeErroDoIdentity extends Error {
  constructor(
    readonly statusDoIdentity: number,
    mensagem: string,
  ) {
    super(mensagem);
  }
}

/**
 * GET of an identity route on behalf of `token` (a master's, or a service's own), 10 s at most.
 * A token identity refuses (401, 403: it reads the holder's row, so a token still saying master
 * is refused once its holder was removed or demoted) throws TokenRecusado, on which a queue's
 * stored tokens are tried in turn (queues/fila.ts); any other error answer throws
 * RespostaDeErroDoIdentity, and identity unreachable or late a plain Error.
 */
export async function lerDoIdentity<T>(caminho: string, token: string): Promise<T> {
  const res = await fetch(`${config().servicos.identity.url}${caminho}`, {
    headers: { authorization: `Bearer ${token}`, accept: 'application/json' },
    signal: AbortSignal.timeout(10_000),
  });
  if (res.ok) return (await res.json()) as T;
  largarResposta(res);
  const rota = caminho.split('?')[0];
  if (res.status === 401 || res.status === 403) throw new TokenRecusado(res.status, `identity refused the token (${res.status}) to GET ${rota}`);
  throw new RespostaDeErroDoIdentity(res.status, `identity answered ${res.status} to GET ${rota}`);
}

/**
 * lerDoIdentity of a record that may be gone: null only when identity answers 404 (no such record,
 * or deleted); any other failure throws as lerDoIdentity does, never taken for a deletion.
 */
export async function lerDoIdentitySeExistir<T>(caminho: string, token: string): Promise<T | null> {
  try {
    return await lerDoIdentity<T>(caminho, token);
  } catch (err) {
    if (err instanceof RespostaDeErroDoIdentity && err.statusDoIdentity === 404) return null;
    throw err;
  }
}
