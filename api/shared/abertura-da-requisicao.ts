import { randomUUID } from 'node:crypto';
import { NextFunction, Request, Response } from 'express';
import { logger } from '../../lib/logger';

/**
 * Every request: its id, from `X-Request-Id` (when sane) or a new one, echoed back and put on
 * every log line; and its access line when the answer is sent. One middleware for both, as each
 * layer the router walks costs every request.
 */
export function aberturaDaRequisicao(servico: string) {
  // an access line carries no secret (no header, no body, no query string): redaction, which
  // walks every line, is left to the other loggers
  const log = logger('http').child({ servico }, { redact: [] });
  return (req: Request, res: Response, next: NextFunction) => {
    const inicio = performance.now();
    const recebido = req.headers['x-request-id'];
    req.id = typeof recebido === 'string' && /^[A-Za-z0-9._-]{1,100}$/.test(recebido) ? recebido : randomUUID();
    res.setHeader('X-Request-Id', req.id);
    res.on('finish', () => {
      const url = req.originalUrl;
      const fimDoCaminho = url.indexOf('?');
      const dados = {
        request_id: req.id,
        metodo: req.method,
        rota: fimDoCaminho < 0 ? url : url.slice(0, fimDoCaminho),
        status: res.statusCode,
        ms: performance.now() - inicio,
      };
      if (res.statusCode >= 500) log.error(dados, 'requisição');
      else log.info(dados, 'requisição');
    });
    next();
  };
}
