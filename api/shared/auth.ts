import { createLocalJWKSet, createRemoteJWKSet, errors, ExportedJWKSCache, JSONWebKeySet, JWKSCacheInput, jwksCache, jwtVerify, JWTVerifyGetKey } from 'jose';
import { config } from '../../config';
import { CacheComPrazo } from '../../lib/cache';
import { comCausa } from '../../lib/erros';
import { logger, umaVezPorMinuto } from '../../lib/logger';
import { ErroDeDominio, naoAutenticado } from './errors';
import { Principal } from './principal';

export type Autenticador = (token: string) => Promise<Principal>;

const ALGORITMOS = ['RS256', 'EdDSA'];
const CACHE_MAXIMO = 5000;
/**
 * How long a verified token is taken on its word before its signature is checked again against
 * the key set as it is then: a key dropped from identity's set (rotated out, or leaked) stops
 * every token it signed within that, not only those never seen before.
 */
export const PRAZO_DO_TOKEN_VERIFICADO_MS = 60_000;

/**
 * Verifies identity tokens (RS256/EdDSA JWTs) against a key set and the identity issuer.
 * Verified tokens are remembered for PRAZO_DO_TOKEN_VERIFICADO_MS (or until they expire, if
 * sooner), so a client's repeated calls cost one map lookup instead of a signature check.
 */
export function criarAutenticador(chaves: JWTVerifyGetKey): Autenticador {
  const verificados = new CacheComPrazo<string, Principal>(() => PRAZO_DO_TOKEN_VERIFICADO_MS, CACHE_MAXIMO);
  return async (token) => {
    const guardado = verificados.obter(token);
    if (guardado) return guardado;
    let payload;
    try {
      let protectedHeader;
      ({ payload, protectedHeader } = await jwtVerify(token, chaves, {
        issuer: config().servicos.identity.url,
        algorithms: ALGORITMOS,
        requiredClaims: ['sub', 'exp', 'iat'],
      }));
      // an access token says JWT, or nothing: another kind of token (the hub's `webhook+jwt`) is
      // never one, whatever keys a misconfigured address would verify it with
      if (protectedHeader.typ !== undefined && protectedHeader.typ.toUpperCase() !== 'JWT') throw naoAutenticado();
    } catch (err) {
      // identity out of reach with no key known yet says nothing about the token: try again later
      if (err instanceof IdentityForaDoAlcance) {
        throw new ErroDeDominio('indisponivel', 'O serviço de identidade não respondeu; tente de novo.', undefined, { causa: err.cause });
      }
      throw naoAutenticado();
    }
    const tipo = payload.tipo;
    if (tipo !== 'usuario' && tipo !== 'aplicativo') throw naoAutenticado();
    const principal: Principal = {
      sub: String(payload.sub),
      tipo,
      master: tipo === 'usuario' && payload.master === true,
      nome: String(payload.nome ?? ''),
      email: typeof payload.email === 'string' ? payload.email : undefined,
      perfil: tipo === 'usuario' && (payload.perfil === 'colaborador' || payload.perfil === 'cliente') ? payload.perfil : undefined,
      emitidoEm: Number(payload.iat),
      token,
    };
    verificados.guardar(token, principal, Math.min(Number(payload.exp) * 1000, Date.now() + PRAZO_DO_TOKEN_VERIFICADO_MS));
    return principal;
  };
}

/** The identity key set could not be fetched (no answer, not a 200, not JSON) and none was known; the cause says why. */
class IdentityForaDoAlcance extends Error {}

/**
 * Whether a key lookup failed for want of the key set (network, identity's answer: an error, not
 * JSON, or JSON that is no key set, as a proxy's page of its own), not for the token.
 */
const faltouOConjunto = (err: unknown) =>
  err instanceof errors.JWKSTimeout || err instanceof errors.JWKSInvalid || !(err instanceof errors.JOSEError) || err.code === 'ERR_JOSE_GENERIC';

/** After a failed fetch of the key set, how long the last one is used without trying again. */
const PAUSA_APOS_FALHA_MS = 30_000;

/**
 * How long after it was fetched the last key set still verifies while identity is out of reach:
 * a key identity has dropped (rotated out, or leaked) must not sign its way into a service cut
 * off from identity for good. Past it, every token unseen in the last minute is a 503.
 */
export const IDADE_MAXIMA_DO_ULTIMO_CONJUNTO_MS = 24 * 3600_000;

/**
 * Identity's key set fetched and cached (jose fetches again after `validadeMs`, and on an unknown
 * kid). When a fetch fails, the set fetched last still verifies, for `idadeMaximaMs` after it was
 * fetched: a token signed with a known key stays good while identity is out of reach, instead of
 * every token unseen before getting a 401; and for PAUSA_APOS_FALHA_MS no request waits on another
 * fetch (up to 5 s against a host that does not answer). With no set known, or the last one too
 * old, the answer is 503 (IdentityForaDoAlcance). An unknown kid fetches the set again, but not
 * within `esperaEntreBuscasMs` of the last fetch (jose's cooldown: a flood of made-up kids costs
 * identity one fetch that often); within it, the kid is judged by the set held, so its token is a
 * bad one (401, DESIGN §4), as a forged token's is. Identity publishes a key before it signs with
 * it, so only a key put in without that (a key file replaced) meets this, for that long.
 */
export function chavesDoIdentity(
  url: URL,
  validadeMs = 10 * 60_000,
  idadeMaximaMs = IDADE_MAXIMA_DO_ULTIMO_CONJUNTO_MS,
  esperaEntreBuscasMs = 30_000,
): JWTVerifyGetKey {
  // jose writes the set and the time of its fetch here
  const buscado: Partial<ExportedJWKSCache> = {};
  const remotas = createRemoteJWKSet(url, { cooldownDuration: esperaEntreBuscasMs, cacheMaxAge: validadeMs, [jwksCache]: buscado as JWKSCacheInput });
  let falhouEm = -Infinity;
  let ultimaFalha: unknown;
  const avisarFalha = umaVezPorMinuto((err: Error) =>
    logger('auth').warn(
      { url: url.href, erro: comCausa(err), conjunto_de_ha_s: buscado.uat === undefined ? null : Math.round((Date.now() - buscado.uat) / 1000) },
      'o conjunto de chaves do identity não pôde ser buscado: os tokens são verificados pelo último buscado, se houver',
    ),
  );
  const dasUltimas: JWTVerifyGetKey = async (cabecalho, token) => {
    const ultimas = remotas.jwks();
    if (!ultimas) throw new IdentityForaDoAlcance('key set not fetched', { cause: ultimaFalha });
    if (Date.now() - (buscado.uat ?? 0) > idadeMaximaMs) throw new IdentityForaDoAlcance('last key set fetched too long ago', { cause: ultimaFalha });
    try {
      return await createLocalJWKSet(ultimas)(cabecalho, token);
    } catch (err) {
      // a key the last set lacks may be one identity has since added (restarted with a new key):
      // with its set out of reach, the token cannot be judged, and a client must not throw it away
      if (err instanceof errors.JWKSNoMatchingKey) throw new IdentityForaDoAlcance('key not in the last key set fetched', { cause: ultimaFalha });
      throw err;
    }
  };
  return async (cabecalho, token) => {
    // with no set known yet, every request tries: identity may just be starting
    if (remotas.jwks() && Date.now() - falhouEm < PAUSA_APOS_FALHA_MS) return dasUltimas(cabecalho, token);
    try {
      return await remotas(cabecalho, token);
    } catch (err) {
      if (!faltouOConjunto(err)) throw err;
      falhouEm = Date.now();
      ultimaFalha = err;
      // the last set still verifies for a day: without this, an address, name or certificate gone
      // wrong would show only when it runs out, as every new token's 503
      avisarFalha(err as Error);
      return dasUltimas(cabecalho, token);
    }
  };
}

/** Every service but identity: keys from identity's JWKS (chavesDoIdentity). */
export function autenticadorRemoto(): Autenticador {
  return criarAutenticador(chavesDoIdentity(new URL(`${config().servicos.identity.url}/.well-known/jwks.json`)));
}

/** The identity service verifies with its own key set, no HTTP round trip. */
export function autenticadorLocal(jwks: () => JSONWebKeySet): Autenticador {
  return criarAutenticador((header, token) => createLocalJWKSet(jwks())(header, token));
}

/** `Authorization: Bearer <token>`; anything else is no token. */
export function tokenDoCabecalho(valor: string | undefined): string | undefined {
  if (!valor) return undefined;
  const m = /^Bearer\s+([A-Za-z0-9\-_.]+)\s*$/i.exec(valor);
  return m?.[1];
}
