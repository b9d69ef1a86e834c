import { NextFunction, Request, RequestHandler, Response } from 'express';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { config } from '../../config';
import { redis } from '../../lib/redis';
import { enviarProblema } from './http-errors';

/** The OpenAPI meaning of a route's 429. */
export const LIMITE_EXCEDIDO = 'Limite de requisições por minuto deste endereço excedido; Retry-After diz em quantos segundos tentar de novo';

/**
 * Per-client-address limit of a public route (DESIGN §10), counted in Redis so every process
 * shares it; while Redis is out of reach an in-memory limiter of the same size stands in.
 */
export function limitePorEndereco(nome: string, porMinuto: number): RequestHandler {
  let limitador: RateLimiterRedis | undefined;
  const obter = () =>
    (limitador ??= new RateLimiterRedis({
      storeClient: redis('produtor'),
      keyPrefix: `${config().queuePrefix}:limite:${nome}`,
      points: porMinuto,
      duration: 60,
      insuranceLimiter: new RateLimiterMemory({ points: porMinuto, duration: 60 }),
    }));
  return async (req: Request, res: Response, next: NextFunction) => {
    try {
      await obter().consume(req.ip ?? 'desconhecido');
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
