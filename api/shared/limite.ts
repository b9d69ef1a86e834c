import type { NextFunction, Request, RequestHandler, Response } from 'express';
import ipaddr from 'ipaddr.js';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { config } from '../../config';
import { redis } from '../../lib/redis';
import { enviarProblema } from './http-errors';

/** The OpenAPI meaning of a route's 429. */
export const LIMITE_EXCEDIDO = 'Limite de requisições por minuto deste endereço excedido; Retry-After diz em quantos segundos tentar de novo';

/**
 * Whom a limit counts: an IPv4 address (also written as IPv6, `::ffff:a.b.c.d`), or the /64 of
 * an IPv6 one, since a single client is given a whole /64 and could speak from a new address on
 * every call.
 */
export function chaveDoCliente(ip: string | undefined): string {
  if (!ip || !ipaddr.isValid(ip)) return ip ?? 'desconhecido';
  const endereco = ipaddr.process(ip);
  if (endereco.kind() === 'ipv4') return endereco.toString();
  return `${(endereco as ipaddr.IPv6).parts.slice(0, 4).map((p) => p.toString(16)).join(':')}::/64`;
}

/**
 * A count of `pontos` per `duracaoS` seconds by client key, named `nome`, in Redis so every process
 * shares it, with an in-memory count of the same size standing in while Redis is out of reach;
 * made at its first use (Redis is not opened before). On the producers' connection, which sends
 * each command as it comes, so a read of the count follows the increments sent before it;
 * `conexao` 'limites' for a count only ever incremented, whose commands may then be sent together
 * (lib/redis.ts).
 */
export function contagemPorEndereco(nome: string, pontos: number, duracaoS: number, conexao: 'limites' | 'produtor' = 'produtor'): () => RateLimiterRedis {
  let limitador: RateLimiterRedis | undefined;
  return () =>
    (limitador ??= new RateLimiterRedis({
      storeClient: redis(conexao),
      keyPrefix: `${config().queuePrefix}:limite:${nome}`,
      points: pontos,
      duration: duracaoS,
      insuranceLimiter: new RateLimiterMemory({ points: pontos, duration: duracaoS }),
    }));
}

/**
 * Per-client-address limit of a public route (DESIGN §10), counted in Redis so every process
 * shares it; while Redis is out of reach an in-memory limiter of the same size stands in.
 */
export function limitePorEndereco(nome: string, porMinuto: number): RequestHandler {
  const obter = contagemPorEndereco(nome, porMinuto, 60, 'limites');
  return async (req: Request, res: Response, next: NextFunction) => {
    try {
      await obter().consume(chaveDoCliente(req.ip));
      next();
    } catch (rej) {
      if (rej instanceof RateLimiterRes) {
        res.setHeader('Retry-After', String(Math.max(1, Math.ceil(rej.msBeforeNext / 1000))));
        enviarProblema(res, 429, 'limite_excedido', `Limite de ${porMinuto} requisições por minuto excedido.`);
        return;
      }
      next(rej);
    }
  };
}
