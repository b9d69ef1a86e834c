import type { IRouter, NextFunction, Request, RequestHandler, Response } from 'express';
import Joi from 'joi';
import './express';
import { emSegundoPlano } from '../../lib/lifecycle';
import { Autenticador, tokenDoCabecalho } from './auth';
import { dadosInvalidos, ErroDeDominio, naoAutenticado, proibido } from './errors';
import { DESAFIO_DO_TOKEN_RECUSADO, desafioDoTokenNaQuery, TIPO_NAO_JSON } from './http-errors';
import { caminhoAte, esquemaPronto, PROFUNDIDADE_MAXIMA_DO_CORPO, validarCom } from './validacao';
import { Principal } from './principal';

export type Metodo = 'get' | 'post' | 'patch' | 'put' | 'delete';

/** Who may call: nobody needs a token, a logged user, an application, or either. */
export type Acesso = 'publico' | 'usuario' | 'aplicativo' | 'usuario_ou_aplicativo';

/** Throws `proibido` when the principal may not run the operation; `descricao` says whom it lets in (the OpenAPI document). */
export type Permissao = ((principal: Principal, req: Request) => Promise<void> | void) & { descricao?: string };

/** `permissao`, with whom it lets in said in words for the OpenAPI document (`x-permissao`). */
export const descrita = (descricao: string, permissao: (principal: Principal, req: Request) => Promise<void> | void): Permissao =>
  Object.assign(permissao, { descricao });

/** A master's token only (the token's claim: DESIGN §3). */
export const somenteMaster = descrita('um master', (p) => {
  if (!p.master) throw proibido('Somente um usuário master.');
});

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
  /** request headers the handler reads and checks itself, for the OpenAPI document only */
  cabecalhos?: Joi.ObjectSchema;
  /**
   * success status: 200 by default when the route answers a body (`resposta` or
   * `respostaBinaria`), 204 otherwise (a handler that returns undefined answers 204 with no body)
   */
  status?: number;
  /** response schema, for the OpenAPI document only (what the handler returns is what is sent; undefined: 204) */
  resposta?: Joi.Schema;
  /** the handler writes the bytes of a file itself, of any media type (for the OpenAPI document) */
  respostaBinaria?: boolean;
  /**
   * A GET whose HEAD the OpenAPI document lists as an operation of its own (the same answers,
   * headers alone), where clients use it: Express answers HEAD on every GET route, but the document
   * names it only where it means something (a file's size and type before its bytes).
   */
  documentarHead?: boolean;
  /** the route never succeeds (POST /conversa): the OpenAPI document lists its errors only */
  semSucesso?: boolean;
  /**
   * error answers of this route beyond the ones the OpenAPI document gives each route by itself
   * (400, 401, 403, 404, 413, 503; see api/shared/openapi.ts), for the document: status → meaning
   */
  outrasRespostas?: Record<string, string>;
  /** the route reads neither database nor Redis (liveness, the document itself): it never answers 503 */
  semDependencias?: boolean;
  /** its path's parameters name nothing it could fail to find (a webhook's system authenticates instead: 401): no 404 */
  sem404?: boolean;
  /** a 503 of this route that must not be repeated carries no Retry-After (a publication without `id`): when that is */
  semRetryAfterQuando?: string;
  /**
   * middleware run before everything else, the reading of the body included (a rate limit on a
   * public route, a webhook's token): a request it refuses is answered without its body being read
   */
  antes?: RequestHandler[];
  /** middleware run once the body is read, before the route's checks (a webhook's signature over its bytes) */
  aposOCorpo?: RequestHandler[];
  /**
   * The handler reads the request body itself, as a stream (a file upload): the service's JSON
   * parser never touches it, whatever its Content-Type.
   */
  corpoEmFluxo?: boolean;
  /** The route never reads a body: none is parsed, so nothing a caller sends changes its answer. */
  semCorpo?: boolean;
  /** the JSON body's size limit in bytes, when not DESIGN §4's 1 MiB (a webhook whose sender writes larger ones) */
  limiteDoCorpo?: number;
  /**
   * The query parameter that carries this public route's credential (a webhook's token): its 401
   * asks for that one (desafioDoTokenNaQuery), not for a bearer token.
   */
  tokenNaQuery?: string;
  tratar: (req: Request, res: Response) => Promise<unknown> | unknown;
}

/**
 * What a JSON body may not hold, whatever its route: nesting past PROFUNDIDADE_MAXIMA_DO_CORPO
 * levels (anything that walks it recursively next, JSON.stringify included, would overflow the
 * stack and answer 500), a `__proto__` key (JSON.parse makes it an own key, which joi drops
 * without a word even where unknown fields are refused), and a number out of JSON's range
 * (`1e999` is parsed as Infinity, and stored or sent on as null). Walked with a list, not recursion.
 */
function conferirCorpo(corpo: unknown): void {
  // objects and arrays still to look at, and their levels (two lists: this runs on every body)
  const valores: object[] = [];
  const niveis: number[] = [];
  const guardar = (v: unknown, nivel: number, pai?: object, chave?: string | number) => {
    if (typeof v === 'object' && v !== null) (valores.push(v), niveis.push(nivel));
    else if (typeof v === 'number' && !Number.isFinite(v)) {
      const campo = pai === undefined ? 'body' : [...caminhoAte(corpo, pai)!, chave].join('.');
      throw dadosInvalidos('O corpo tem um número fora do alcance do JSON.', [{ campo, mensagem: 'número fora do alcance' }]);
    }
  };
  guardar(corpo, 0);
  while (valores.length) {
    const valor = valores.pop()!;
    const nivel = niveis.pop()!;
    if (nivel >= PROFUNDIDADE_MAXIMA_DO_CORPO) {
      throw dadosInvalidos(`O corpo passa de ${PROFUNDIDADE_MAXIMA_DO_CORPO} níveis.`, [{ campo: 'body', mensagem: 'aninhamento profundo demais' }]);
    }
    if (Array.isArray(valor)) {
      for (let i = 0; i < valor.length; i++) guardar(valor[i], nivel + 1, valor, i);
      continue;
    }
    if (Object.prototype.hasOwnProperty.call(valor, '__proto__')) {
      const campo = [...caminhoAte(corpo, valor)!, '__proto__'].join('.');
      throw dadosInvalidos('Dados inválidos.', [{ campo, mensagem: `"${campo}" não é permitido` }]);
    }
    for (const chave in valor) guardar((valor as Record<string, unknown>)[chave], nivel + 1, valor, chave);
  }
}

function validarParte(esquema: Joi.Schema | undefined, valor: unknown, parte: 'params' | 'query' | 'body') {
  if (!esquema) return parte === 'body' ? undefined : {};
  if (parte === 'body') conferirCorpo(valor);
  const mensagem = parte === 'body' && valor === undefined ? 'O corpo JSON é obrigatório.' : 'Dados inválidos.';
  return validarCom(esquema, valor ?? (parte === 'body' ? undefined : {}), mensagem, parte);
}

/** DESIGN §4: a JSON body over 1 MiB answers 413. */
export const LIMITE_DO_CORPO = 1024 * 1024;

/**
 * A JSON body whose declared length passes the limit is refused before the parser is called: the
 * parser would read it through to drop it, and a client that asked first (`Expect: 100-continue`)
 * would be told to send it all (lib/http-server.ts). The parser's own rules otherwise: a body of
 * another type is refused for its type, and a compressed one for what it inflates to.
 */
const recusarCorpoGrandeDemais =
  (limite: number): RequestHandler =>
  (req, _res, next) => {
    // as the parser reads it: none, or an empty one, is identity
    const semCodificacao = (req.headers['content-encoding'] || 'identity').toLowerCase() === 'identity';
    const grandeDemais = semCodificacao && req.is('application/json') && Number(req.headers['content-length']) > limite;
    next(grandeDemais ? Object.assign(new Error('request entity too large'), { type: 'entity.too.large', status: 413 }) : undefined);
  };

/** The parser's refusals of a body that are about the caller's input, not the server's limits. */
const ERROS_DO_CORPO_ADIADOS = new Set(['entity.parse.failed', 'encoding.unsupported', 'charset.unsupported']);

/**
 * A body that is not JSON, or in an encoding or charset the parser does not read, is refused only
 * after the caller is authenticated (DESIGN §10: 401 and 403 before the input's errors), by the
 * route's own checks or its `antes` (a webhook's token and signature). A body past the size limit
 * stops the request: at once when its length is declared (recusarCorpoGrandeDemais), else when the
 * parser has read that much.
 */
function adiarErroDoCorpo(corpoJson: RequestHandler): RequestHandler {
  return (req, res, next) =>
    corpoJson(req, res, (err?: unknown) => {
      if (err) {
        if (!ERROS_DO_CORPO_ADIADOS.has((err as { type?: string }).type ?? '')) return next(err);
        req.corpoIlegivel = err as Error;
      } else if (req.body === undefined && temCorpo(req)) {
        // a body the parser left alone, in another Content-Type (JSON only, DESIGN §4): unread, it
        // is no "missing body" either
        req.corpoIlegivel = Object.assign(new Error('content type not JSON'), { type: TIPO_NAO_JSON });
      }
      next();
    });
}

/** Whether the request carries a body at all (RFC 9110 §6.4.1: a length other than 0, or a transfer coding). */
const temCorpo = (req: Request) =>
  req.headers['transfer-encoding'] !== undefined || (req.headers['content-length'] !== undefined && req.headers['content-length'] !== '0');

/** The route reads a JSON body with the service's parser: not a GET, not a streamed body, not one it refuses to take. */
export const recebeJson = (rota: Rota) => rota.metodo !== 'get' && !rota.corpoEmFluxo && !rota.semCorpo;

/** A creation whose record is read at `<its path>/:id`: its 201 says where, in `Location` (RFC 9110 §15.3.2). */
export const criaComLeitura = (rota: Rota, rotas: Rota[]) =>
  rota.status === 201 && rotas.some((r) => r.metodo === 'get' && r.caminho === `${rota.caminho}/:id`);

/**
 * Order of checks (DESIGN §10): authentication (401), permission (403), validation (400); the
 * handler then answers 404/422. Unknown query parameters are ignored; unknown body fields are refused.
 */
export function montarRotas(router: IRouter, rotas: Rota[], autenticar: Autenticador, corpoJson: (limite: number) => RequestHandler): void {
  for (const rota of rotas) {
    const lerCriado = criaComLeitura(rota, rotas);
    const esquemas = {
      params: rota.validar?.params && esquemaPronto(rota.validar.params),
      query: rota.validar?.query && esquemaPronto(rota.validar.query, true),
      body: rota.validar?.body && esquemaPronto(rota.validar.body),
    };
    // the token before the body is read: a caller without a valid one gets its 401 without the
    // server parsing a body of up to its limit (nor, had it asked first, telling it to send one)
    const autenticacao: RequestHandler[] =
      rota.acesso === 'publico'
        ? []
        : [
            (req, _res, next) => {
              const token = tokenDoCabecalho(req.headers.authorization);
              if (!token) return next(naoAutenticado('Token ausente: envie Authorization: Bearer <token>.'));
              autenticar(token).then(
                (principal) => ((req.principal = principal), next()),
                (err: unknown) => {
                  if (err instanceof ErroDeDominio && err.tipo === 'nao_autenticado') req.desafio = DESAFIO_DO_TOKEN_RECUSADO;
                  next(err);
                },
              );
            },
          ];
    const pipeline = async (req: Request, res: Response, next: NextFunction) => {
      try {
        if (rota.acesso !== 'publico') {
          const principal = req.principal!;
          if (rota.acesso === 'usuario' && principal.tipo !== 'usuario') throw proibido('Esta operação exige um usuário.');
          if (rota.acesso === 'aplicativo' && principal.tipo !== 'aplicativo') {
            throw proibido('Esta operação exige um token de aplicativo.');
          }
          if (rota.permissao) await rota.permissao(principal, req);
        }
        if (req.corpoIlegivel) throw req.corpoIlegivel;
        req.entrada = {
          params: validarParte(esquemas.params, req.params, 'params'),
          query: validarParte(esquemas.query, req.query, 'query'),
          body: validarParte(esquemas.body, req.body, 'body'),
        };
        // a handler goes on when its client leaves (its batch, its commit): shutdown waits for it,
        // as for work after an answer, before closing the queues and databases it uses
        const trabalho = Promise.resolve(rota.tratar(req, res));
        emSegundoPlano(trabalho);
        const resultado = await trabalho;
        if (res.headersSent) return;
        if (resultado === undefined) res.status(204).end();
        else {
          const id = lerCriado && (resultado as { id?: unknown }).id;
          if (typeof id === 'string') res.setHeader('Location', `${req.baseUrl}${rota.caminho}/${encodeURIComponent(id)}`);
          res.status(rota.status ?? 200).json(resultado);
        }
      } catch (err) {
        next(err);
      }
    };
    // read after `antes`: a caller over its rate limit, or a webhook's without its token, does not
    // get its body read and parsed first
    const limite = rota.limiteDoCorpo ?? LIMITE_DO_CORPO;
    const corpo = recebeJson(rota) ? [recusarCorpoGrandeDemais(limite), adiarErroDoCorpo(corpoJson(limite))] : [];
    // the route's own challenge, for a 401 raised anywhere along it (tratadorDeErros)
    const desafioDaRota = rota.tokenNaQuery && desafioDoTokenNaQuery(rota.tokenNaQuery);
    const desafio: RequestHandler[] = desafioDaRota ? [(req, _res, next) => ((req.desafio = desafioDaRota), next())] : [];
    router[rota.metodo](rota.caminho, ...desafio, ...(rota.antes ?? []), ...autenticacao, ...corpo, ...(rota.aposOCorpo ?? []), pipeline);
  }
}

/** An answer carrying a credential (a token, a secret) is kept by no cache on its way (RFC 6749 §5.1). */
export function semCache<T>(res: Response, resposta: Promise<T>): Promise<T> {
  res.setHeader('Cache-Control', 'no-store');
  return resposta;
}
