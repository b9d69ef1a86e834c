import type { NextFunction, Request, Response } from 'express';
import { ValidationError as ErroDoSequelize, UniqueConstraintError } from 'sequelize';
import { logger } from '../../lib/logger';
import { bancoIndisponivel } from '../../lib/database';
import { Problema, problema, tituloDoStatus } from '../../lib/problema';
import { ErroDeDominio, TipoDeErro } from './errors';

const STATUS: Record<TipoDeErro, number> = {
  dados_invalidos: 400,
  nao_autenticado: 401,
  proibido: 403,
  nao_encontrado: 404,
  conflito: 409,
  corpo_grande_demais: 413,
  codificacao_nao_suportada: 415,
  referencia_invalida: 422,
  idempotency_key_reusada: 422,
  bloqueado: 423,
  limite_excedido: 429,
  indisponivel: 503,
  em_andamento: 503,
};

/** Kinds that are not what their status's title says (a 422 is an invalid reference, DESIGN §4). */
const TITULO: Partial<Record<TipoDeErro, string>> = {
  idempotency_key_reusada: 'Idempotency-Key já usada',
};

/** The `WWW-Authenticate` challenge of a 401, but on a route whose token goes in its query (Rota.tokenNaQuery). */
export const DESAFIO_PADRAO = 'Bearer';
/**
 * The challenge of a route whose token goes in the query parameter `nome` (a webhook's), not in an
 * Authorization header: the answer does not ask for a bearer token (no registered HTTP scheme
 * carries a credential in the query string; RFC 9110 §11.6.1 still wants a challenge).
 */
export const desafioDoTokenNaQuery = (nome: string) => `Query-Token name="${nome}"`;
/**
 * The challenge of a 401 for a bearer token sent and refused (expired, revoked, forged): RFC 6750
 * §3.1's `invalid_token`, which tells a client to get a new token rather than send that one again.
 */
export const DESAFIO_DO_TOKEN_RECUSADO = 'Bearer error="invalid_token"';

/** The deferred error of a body sent in a Content-Type other than JSON (rotas.ts): 415. */
export const TIPO_NAO_JSON = 'content-type.not-json';

/** Seconds a 503 tells its caller to wait before trying again, when nothing more precise is known. */
export const ESPERA_APOS_INDISPONIVEL_S = 5;

export function enviarProblema(res: Response, status: number, code: string, detail: string, extra: Partial<Problema> = {}, semRetryAfter = false) {
  // a failure of the moment (a limit, a dependency) is never kept by a cache, whatever the route set
  if (status === 429 || status >= 500) res.removeHeader('Cache-Control');
  // a 503 says when to try again (RFC 9110 §15.6.4): what webhook senders and well-behaved clients wait for
  if (status === 503 && !semRetryAfter && !res.hasHeader('Retry-After')) res.setHeader('Retry-After', String(ESPERA_APOS_INDISPONIVEL_S));
  res.status(status).type('application/problem+json').send(JSON.stringify(problema(status, code, detail, extra)));
}

/**
 * How a stream piped into an answer fails when the client closed the connection first. Judged by
 * the error: an answer's only source here is a stored file, which fails with the disk's own codes
 * (an upstream's connection reset would pass for a client that left).
 */
const CLIENTE_SAIU = new Set(['ERR_STREAM_PREMATURE_CLOSE', 'ECONNRESET', 'EPIPE']);

/** Translates what reaches Express into an RFC 9457 problem; a 500 never shows internals. */
export function tratadorDeErros() {
  // eslint-disable-next-line @typescript-eslint/no-unused-vars
  return (err: unknown, req: Request, res: Response, _next: NextFunction) => {
    const requestId = String(req.id ?? '');
    if (res.headersSent) {
      // the answer was under way (a file streamed): the client sees it cut. A failure of ours (the
      // disk failing mid-read) is logged, or nobody would know; a client that left is not a failure
      if (!CLIENTE_SAIU.has((err as NodeJS.ErrnoException)?.code ?? '')) logger('http').error({ err, request_id: requestId }, 'resposta interrompida');
      res.destroy();
      return;
    }
    if (err instanceof ErroDeDominio) {
      const status = STATUS[err.tipo];
      if (typeof err.retryAfterSegundos === 'number') res.setHeader('Retry-After', String(err.retryAfterSegundos));
      // RFC 6750 §3, unless the route asks for something other than a bearer token (a webhook's)
      if (status === 401) res.setHeader('WWW-Authenticate', req.desafio ?? DESAFIO_PADRAO);
      // a 503 (a dependency out of reach) is the service's failure, not the caller's: logged, with the id to quote;
      // one for a request still being handled (em_andamento) is neither
      if (status >= 500 && err.tipo !== 'em_andamento') logger('http').error({ err, request_id: requestId }, 'dependência indisponível');
      const extra = { ...(TITULO[err.tipo] && { title: TITULO[err.tipo] }), ...(err.erros && { errors: err.erros }), ...(status >= 500 && { request_id: requestId }) };
      enviarProblema(res, status, err.tipo, err.message, extra, err.retryAfterSegundos === null);
      return;
    }
    if (err instanceof UniqueConstraintError) {
      enviarProblema(res, 409, 'conflito', 'Já existe um registro com estes dados.');
      return;
    }
    if (err instanceof ErroDoSequelize) {
      enviarProblema(res, 400, 'dados_invalidos', 'Dados inválidos.');
      return;
    }
    const e = err as { type?: string; status?: number; statusCode?: number; expose?: boolean };
    // body-parser errors: malformed JSON, oversized body, wrong charset
    if (e?.type === 'entity.parse.failed') return enviarProblema(res, 400, 'dados_invalidos', 'O corpo não é um JSON válido.');
    if (e?.type === 'entity.too.large') return enviarProblema(res, 413, 'corpo_grande_demais', 'O corpo passa do limite.');
    if (e?.type === TIPO_NAO_JSON) return enviarProblema(res, 415, 'tipo_nao_suportado', 'Envie o corpo em JSON (Content-Type: application/json).');
    if (e?.type === 'encoding.unsupported' || e?.type === 'charset.unsupported') {
      return enviarProblema(res, 415, 'codificacao_nao_suportada', 'Envie o corpo em JSON UTF-8, sem Content-Encoding ou com gzip, deflate ou br.');
    }
    // a 4xx the HTTP layer meant for the caller (http-errors' `expose`, as body-parser sets it; the
    // router's undecodable path parameter, a URIError). Any other error's status is no word of the
    // caller's request: an outgoing call's 404 or 401 surfacing here is the service's failure
    const statusHttp = e?.expose === true || err instanceof URIError ? (e.status ?? e.statusCode) : undefined;
    if (typeof statusHttp === 'number' && statusHttp >= 400 && statusHttp < 500) {
      return enviarProblema(res, statusHttp, 'requisicao_invalida', `${tituloDoStatus(statusHttp)}.`);
    }
    if (isIndisponivel(err)) {
      logger('http').error({ err, request_id: requestId }, 'dependência indisponível');
      return enviarProblema(res, 503, 'indisponivel', 'Uma dependência do serviço está indisponível; tente de novo.', {
        request_id: requestId,
      });
    }
    logger('http').error({ err, request_id: requestId }, 'erro interno');
    enviarProblema(res, 500, 'erro_interno', 'Erro interno. Informe o request_id ao suporte.', { request_id: requestId });
  };
}

/**
 * Database or Redis out of reach, or too busy to answer (a lock waited for past its limit: busy,
 * not broken): 503 rather than 500 (DESIGN §8: producers fail fast).
 */
function isIndisponivel(err: unknown): boolean {
  const nome = (err as Error)?.name ?? '';
  const msg = (err as Error)?.message ?? '';
  return (
    bancoIndisponivel(err) ||
    nome === 'MaxRetriesPerRequestError' ||
    // ioredis: no connection, or a producer's command unanswered past its deadline (lib/redis.ts)
    /Stream isn't writeable|Connection is closed|ECONNREFUSED|Command timed out/.test(msg)
  );
}

export function naoEncontradoRota() {
  return (req: Request, res: Response) => enviarProblema(res, 404, 'nao_encontrado', 'Rota não encontrada.');
}
