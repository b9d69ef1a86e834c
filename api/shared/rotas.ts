import { IRouter, NextFunction, Request, RequestHandler, Response } from 'express';
import Joi from 'joi';
import './express';
import { Autenticador, tokenDoCabecalho } from './auth';
import { dadosInvalidos, naoAutenticado, proibido } from './errors';
import { esquemaPronto, validarCom } from './validacao';
import { Principal } from './principal';

export type Metodo = 'get' | 'post' | 'patch' | 'put' | 'delete';

/** Who may call: nobody needs a token, a logged user, an application, or either. */
export type Acesso = 'publico' | 'usuario' | 'aplicativo' | 'usuario_ou_aplicativo';

/** Throws `proibido` when the principal may not run the operation. */
export type Permissao = (principal: Principal, req: Request) => Promise<void> | void;

export interface Rota {
  metodo: Metodo;
  /** Express path, e.g. `/usuario/:id` */
  caminho: string;
  /** SPEC's operation name where SPEC gives one */
  operacao: string;
  resumo: string;
  /** longer text for the OpenAPI document (what a schema cannot say: a raw body, a binary answer) */
  descricao?: string;
  acesso: Acesso;
  permissao?: Permissao;
  validar?: { params?: Joi.ObjectSchema; query?: Joi.ObjectSchema; body?: Joi.Schema };
  /** success status (200 by default; a handler that returns undefined answers 204 with no body) */
  status?: number;
  /** response schema, for the OpenAPI document only */
  resposta?: Joi.Schema;
  /** error answers of this route beyond the usual ones (400, 401, 403, 404), for the OpenAPI document: status → meaning */
  outrasRespostas?: Record<string, string>;
  /** middleware run before everything else but the JSON body parser (e.g. a rate limit on a public route) */
  antes?: RequestHandler[];
  /**
   * The handler reads the request body itself, as a stream (a file upload): the service's JSON
   * parser never touches it, whatever its Content-Type.
   */
  corpoEmFluxo?: boolean;
  /** The route never reads a body: none is parsed, so nothing a caller sends changes its answer. */
  semCorpo?: boolean;
  /** the JSON body's size limit, when not DESIGN §4's 1 MiB (a webhook whose sender writes larger ones) */
  limiteDoCorpo?: string;
  tratar: (req: Request, res: Response) => Promise<unknown> | unknown;
}

/**
 * Where a JSON body has a `__proto__` key (JSON.parse makes it an own property), or undefined. Joi
 * drops such a key without a word, even where unknown fields are refused: it is refused here
 * instead, so that a typo or a probe never passes silently.
 */
function chaveProto(valor: unknown): string | undefined {
  if (typeof valor !== 'object' || valor === null) return undefined;
  if (Object.prototype.hasOwnProperty.call(valor, '__proto__')) return '__proto__';
  for (const chave in valor) {
    const achada = chaveProto((valor as Record<string, unknown>)[chave]);
    if (achada) return `${chave}.${achada}`;
  }
  return undefined;
}

function validarParte(esquema: Joi.Schema | undefined, valor: unknown, parte: 'params' | 'query' | 'body') {
  if (!esquema) return parte === 'body' ? undefined : {};
  const proto = parte === 'body' ? chaveProto(valor) : undefined;
  if (proto) throw dadosInvalidos('Dados inválidos.', [{ campo: proto, mensagem: `"${proto}" não é permitido` }]);
  const mensagem = parte === 'body' && valor === undefined ? 'O corpo JSON é obrigatório.' : 'Dados inválidos.';
  return validarCom(esquema, valor ?? (parte === 'body' ? undefined : {}), mensagem, parte);
}

/**
 * A body that is not JSON is refused only after the caller is authenticated (DESIGN §10: 401 before
 * 400), by the route's own checks or its `antes` (a webhook's token and signature). Other parser
 * errors (too large, unknown charset) stop the request at once.
 */
function adiarErroDeSintaxe(corpoJson: RequestHandler): RequestHandler {
  return (req, res, next) =>
    corpoJson(req, res, (err?: unknown) => {
      if ((err as { type?: string } | undefined)?.type !== 'entity.parse.failed') return next(err);
      req.corpoIlegivel = err as Error;
      next();
    });
}

/**
 * Order of checks (DESIGN §10): authentication (401), permission (403), validation (400); the
 * handler then answers 404/422. Unknown query parameters are ignored; unknown body fields are refused.
 */
export function montarRotas(router: IRouter, rotas: Rota[], autenticar: Autenticador, corpoJson: (limite?: string) => RequestHandler): void {
  for (const rota of rotas) {
    const esquemas = {
      params: rota.validar?.params && esquemaPronto(rota.validar.params),
      query: rota.validar?.query && esquemaPronto(rota.validar.query, true),
      body: rota.validar?.body && esquemaPronto(rota.validar.body),
    };
    const pipeline = async (req: Request, res: Response, next: NextFunction) => {
      try {
        if (rota.acesso !== 'publico') {
          const token = tokenDoCabecalho(req.headers.authorization);
          if (!token) throw naoAutenticado('Token ausente: envie Authorization: Bearer <token>.');
          const principal = await autenticar(token);
          if (rota.acesso === 'usuario' && principal.tipo !== 'usuario') throw proibido('Esta operação exige um usuário.');
          if (rota.acesso === 'aplicativo' && principal.tipo !== 'aplicativo') {
            throw proibido('Esta operação exige um token de aplicativo.');
          }
          req.principal = principal;
          if (rota.permissao) await rota.permissao(principal, req);
        }
        if (req.corpoIlegivel) throw req.corpoIlegivel;
        req.entrada = {
          params: validarParte(esquemas.params, req.params, 'params'),
          query: validarParte(esquemas.query, req.query, 'query'),
          body: validarParte(esquemas.body, req.body, 'body'),
        };
        const resultado = await rota.tratar(req, res);
        if (res.headersSent) return;
        if (resultado === undefined) res.status(204).end();
        else res.status(rota.status ?? 200).json(resultado);
      } catch (err) {
        next(err);
      }
    };
    // the body is parsed before anything else of the route (a webhook's signature covers its bytes)
    const corpo = rota.metodo === 'get' || rota.corpoEmFluxo || rota.semCorpo ? [] : [adiarErroDeSintaxe(corpoJson(rota.limiteDoCorpo))];
    router[rota.metodo](rota.caminho, ...corpo, ...(rota.antes ?? []), pipeline);
  }
}
