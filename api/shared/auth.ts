import { createLocalJWKSet, createRemoteJWKSet, JSONWebKeySet, jwtVerify, JWTVerifyGetKey } from 'jose';
import { config } from '../../config';
import { CacheComPrazo } from '../../lib/cache';
import { naoAutenticado } from './errors';
import { Principal } from './principal';

export type Autenticador = (token: string) => Promise<Principal>;

const ALGORITMOS = ['RS256', 'EdDSA'];
const CACHE_MAXIMO = 5000;

/**
 * Verifies identity tokens (RS256/EdDSA JWTs) against a key set and the identity issuer.
 * Verified tokens are remembered until they expire, so a client's repeated calls cost one map
 * lookup instead of a signature check.
 */
export function criarAutenticador(chaves: JWTVerifyGetKey): Autenticador {
  const verificados = new CacheComPrazo<string, Principal>(() => 0, CACHE_MAXIMO);
  return async (token) => {
    const guardado = verificados.obter(token);
    if (guardado) return guardado;
    let payload;
    try {
      ({ payload } = await jwtVerify(token, chaves, {
        issuer: config().servicos.identity.url,
        algorithms: ALGORITMOS,
        requiredClaims: ['sub', 'exp', 'iat'],
      }));
    } catch {
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
      token,
    };
    verificados.guardar(token, principal, Number(payload.exp) * 1000);
    return principal;
  };
}

/** Every service but identity: keys fetched from identity's JWKS and cached (jose refetches on an unknown kid). */
export function autenticadorRemoto(): Autenticador {
  const url = new URL(`${config().servicos.identity.url}/.well-known/jwks.json`);
  return criarAutenticador(createRemoteJWKSet(url, { cooldownDuration: 30_000, cacheMaxAge: 10 * 60_000 }));
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
