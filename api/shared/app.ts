import express, { Express, Request, RequestHandler } from 'express';
import Joi from 'joi';
import { match } from 'path-to-regexp';
import { config } from '../../config';
import { logger } from '../../lib/logger';
import { dentroDe } from '../../lib/lifecycle';
import { Autenticador } from './auth';
import { ErroDeDominio } from './errors';
import { enviarProblema, naoEncontradoRota, tratadorDeErros } from './http-errors';
import { documentoOpenApi, sempre, WebhookDocumentado } from './openapi';
import { aberturaDaRequisicao } from './abertura-da-requisicao';
import { montarRotas, Rota } from './rotas';

export interface DefinicaoDoServico {
  nome: string;
  info: { title: string; version: string; description?: string };
  rotas: Rota[];
  autenticar: Autenticador;
  /** readiness: resolves when the database and Redis answer */
  pronto: () => Promise<void>;
  /** the requests the service sends to addresses it is given, for its OpenAPI document */
  webhooks?: Record<string, WebhookDocumentado>;
  /** keep the raw bytes of JSON bodies in `req.corpoBruto` (webhooks whose HMAC covers them) */
  guardarCorpoBruto?: boolean;
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
          // a frozen server never answers, nor fails: the probe is told in time
          const conferencia = def.pronto();
          if (!(await dentroDe(conferencia, PRAZO_DA_PRONTIDAO_MS))) throw new Error(`sem resposta em ${PRAZO_DA_PRONTIDAO_MS} ms`);
          await conferencia;
        } catch (err) {
          // the answer names no part; the operator reads which one failed, and why, here
          logger('http').warn({ servico: def.nome, erro: (err as Error).message }, 'não está pronto');
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
 * A known path asked with a method none of its routes takes: OPTIONS answers 204, any other method
 * 405 (RFC 9110 §15.5.6), both with `Allow` naming the methods of every route whose path matches
 * (`/conversa/autocomplete` is also `/conversa/:id`). It runs only where no route answered, so the
 * routes' own requests never pay for it; an unknown path goes on to the 404.
 */
function metodosDoCaminho(rotas: Rota[]): RequestHandler {
  const porCaminho = new Map<string, Set<string>>();
  for (const r of rotas) {
    const metodos = porCaminho.get(r.caminho) ?? new Set<string>();
    metodos.add(r.metodo.toUpperCase());
    if (r.metodo === 'get') metodos.add('HEAD');
    porCaminho.set(r.caminho, metodos);
  }
  // matched as Express's router does (any case, an optional trailing slash); the parameters' values
  // are not needed, so they are not decoded
  const caminhos = [...porCaminho].map(([caminho, metodos]) => ({ casa: match(caminho, { decode: false }), metodos }));
  return (req, res, next) => {
    const aceitos = new Set<string>();
    for (const { casa, metodos } of caminhos) if (casa(req.path)) for (const m of metodos) aceitos.add(m);
    if (!aceitos.size) return next();
    const allow = [...aceitos].sort().join(', ');
    res.set('Allow', allow);
    if (req.method === 'OPTIONS') return void res.status(204).end();
    enviarProblema(res, 405, 'metodo_nao_permitido', `Este caminho não aceita ${req.method}; aceita ${allow}.`);
  };
}

/** How long readiness waits for its dependencies before answering 503. */
export const PRAZO_DA_PRONTIDAO_MS = 2000;

export function criarApp(def: DefinicaoDoServico): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  // X-Forwarded-For is believed only from the proxies named in TRUST_PROXY (per-address rate limits)
  app.set('trust proxy', config().trustProxy);
  app.use(aberturaDaRequisicao(def.nome));

  let cache: unknown;
  const todas: Rota[] = [...rotasDeServico(def, () => (cache ??= documentoOpenApi(def.info, todas, def.webhooks))), ...def.rotas];
  // Routes sit on the app's own router, not a nested one, and the JSON parser runs only on the
  // routes that take a body: fewer layers for the router to walk on every request. A route that
  // streams its own body (a file upload) never gets the parser, whatever its Content-Type.
  const parsers = new Map<number, RequestHandler>();
  const corpoJson = (limite: number) => {
    let parser = parsers.get(limite);
    if (!parser) {
      parser = express.json({ limit: limite, verify: def.guardarCorpoBruto ? (req: Request, _res, bytes) => void (req.corpoBruto = bytes) : undefined });
      parsers.set(limite, parser);
    }
    return parser;
  };
  montarRotas(app, todas, def.autenticar, corpoJson);
  app.use(metodosDoCaminho(todas));
  app.use(naoEncontradoRota());
  app.use(tratadorDeErros());
  return app;
}
