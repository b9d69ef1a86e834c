import { randomUUID } from 'node:crypto';
import express, { Express, NextFunction, Request, RequestHandler, Response } from 'express';
import Joi from 'joi';
import { config } from '../../config';
import { logger } from '../../lib/logger';
import { Autenticador } from './auth';
import { ErroDeDominio } from './errors';
import { naoEncontradoRota, tratadorDeErros } from './http-errors';
import { documentoOpenApi, sempre } from './openapi';
import { montarRotas, Rota } from './rotas';

export interface DefinicaoDoServico {
  nome: string;
  info: { title: string; version: string; description?: string };
  rotas: Rota[];
  autenticar: Autenticador;
  /** readiness: resolves when the database and Redis answer */
  pronto: () => Promise<void>;
  /** keep the raw bytes of JSON bodies in `req.corpoBruto` (webhooks whose HMAC covers them) */
  guardarCorpoBruto?: boolean;
}

/**
 * Every request: its id, from `X-Request-Id` (when sane) or a new one, echoed back and put on
 * every log line; and its access line when the answer is sent. One middleware for both, as each
 * layer the router walks costs every request.
 */
function aberturaDaRequisicao(servico: string) {
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

/** Routes every service serves (DESIGN §4): liveness, readiness and its OpenAPI document. */
function rotasDeServico(def: DefinicaoDoServico, documento: () => unknown): Rota[] {
  return [
    {
      metodo: 'get',
      caminho: '/saude',
      operacao: 'saude',
      resumo: 'Liveness',
      acesso: 'publico',
      semDependencias: true,
      resposta: sempre({ status: Joi.string().valid('ok') }),
      tratar: () => ({ status: 'ok' }),
    },
    {
      metodo: 'get',
      caminho: '/pronto',
      operacao: 'pronto',
      resumo: 'Readiness: banco e Redis respondem',
      acesso: 'publico',
      resposta: sempre({ status: Joi.string().valid('pronto') }),
      outrasRespostas: { '503': 'Banco de dados ou Redis sem resposta' },
      tratar: async () => {
        try {
          await def.pronto();
        } catch {
          throw new ErroDeDominio('indisponivel', 'Banco de dados ou Redis sem resposta.');
        }
        return { status: 'pronto' };
      },
    },
    {
      metodo: 'get',
      caminho: '/openapi.json',
      operacao: 'openapi',
      resumo: 'Documento OpenAPI 3.1',
      acesso: 'publico',
      semDependencias: true,
      resposta: Joi.object({ openapi: Joi.string().required(), info: Joi.object().unknown(true).required(), paths: Joi.object().unknown(true).required() })
        .unknown(true)
        .description('Este documento'),
      tratar: documento,
    },
  ];
}

/**
 * OPTIONS on a route's path answers 204 with the methods it takes in `Allow` (Express answers it by
 * itself only past the last layer, which here is the 404); an unknown path still gets the 404 problem.
 */
function responderOptions(app: Express, rotas: Rota[]): void {
  const metodos = new Map<string, Set<string>>();
  for (const r of rotas) {
    const doCaminho = metodos.get(r.caminho) ?? new Set<string>();
    doCaminho.add(r.metodo.toUpperCase());
    if (r.metodo === 'get') doCaminho.add('HEAD');
    metodos.set(r.caminho, doCaminho);
  }
  for (const [caminho, lista] of metodos) {
    const allow = [...lista].sort().join(', ');
    app.options(caminho, (_req, res) => void res.set('Allow', allow).status(204).end());
  }
}

export function criarApp(def: DefinicaoDoServico): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  // X-Forwarded-For is believed only from the proxies named in TRUST_PROXY (per-address rate limits)
  app.set('trust proxy', config().trustProxy);
  app.use(aberturaDaRequisicao(def.nome));

  let cache: unknown;
  const todas: Rota[] = [...rotasDeServico(def, () => (cache ??= documentoOpenApi(def.info, todas))), ...def.rotas];
  // Routes sit on the app's own router, not a nested one, and the JSON parser runs only on the
  // routes that take a body: fewer layers for the router to walk on every request. A route that
  // streams its own body (a file upload) never gets the parser, whatever its Content-Type.
  const parsers = new Map<string, RequestHandler>();
  const corpoJson = (limite = '1mb') => {
    let parser = parsers.get(limite);
    if (!parser) {
      parser = express.json({ limit: limite, verify: def.guardarCorpoBruto ? (req: Request, _res, bytes) => void (req.corpoBruto = bytes) : undefined });
      parsers.set(limite, parser);
    }
    return parser;
  };
  montarRotas(app, todas, def.autenticar, corpoJson);
  responderOptions(app, todas);
  app.use(naoEncontradoRota());
  app.use(tratadorDeErros());
  return app;
}
