import Joi from 'joi';
import parse from 'joi-to-json';
import { Rota } from './rotas';

const PROBLEMA = {
  type: 'object',
  required: ['type', 'title', 'status', 'detail', 'code'],
  properties: {
    type: { type: 'string' },
    title: { type: 'string' },
    status: { type: 'integer' },
    detail: { type: 'string' },
    code: { type: 'string' },
    request_id: { type: 'string' },
    errors: {
      type: 'array',
      items: { type: 'object', properties: { campo: { type: 'string' }, mensagem: { type: 'string' } } },
    },
  },
};

/**
 * An answer object whose fields are always sent (a nullable one as null): every key is required,
 * in nested objects too, and the OpenAPI document lists them in `required`; a field that may be
 * absent says `.optional()`. Documentation only: answers are not validated against it.
 */
export const sempre = (campos: Joi.PartialSchemaMap) => Joi.object(campos).prefs({ presence: 'required' });

/** SPEC §2 PaginaNumerada of `item`. */
export const paginaNumerada = (item: Joi.Schema) => sempre({ itens: Joi.array().items(item), pagina: Joi.number(), tamanho: Joi.number(), total: Joi.number() });

function esquemaJson(esquema: Joi.Schema): Record<string, unknown> {
  return semChavesDePadrao(parse(esquema, 'open-api-3.1')) as Record<string, unknown>;
}

/**
 * An object of free keys (joi `.pattern(/re/, valor)`) comes out of joi-to-json with its
 * `patternProperties` right, but also as a property named after the expression (`"/^/"`), which
 * no client sends: dropped.
 */
function semChavesDePadrao(no: unknown): unknown {
  if (Array.isArray(no)) return no.map(semChavesDePadrao);
  if (!no || typeof no !== 'object') return no;
  const r = Object.fromEntries(Object.entries(no).map(([k, v]) => [k, semChavesDePadrao(v)])) as Record<string, any>;
  if (r.patternProperties && r.properties) {
    for (const padrao of Object.keys(r.patternProperties)) delete r.properties[`/${padrao}/`];
  }
  return r;
}

/** `/usuario/:id` → `/usuario/{id}` */
export function caminhoOpenApi(caminho: string): string {
  // `:id` is one segment; `*resto` (Express 5) may span several, documented as one parameter
  return caminho.replace(/[:*]([A-Za-z0-9_]+)/g, '{$1}');
}

function parametros(esquema: Joi.ObjectSchema | undefined, onde: 'path' | 'query' | 'header') {
  if (!esquema) return [];
  const json = esquemaJson(esquema) as { properties?: Record<string, Record<string, unknown>>; required?: string[] };
  return Object.entries(json.properties ?? {}).map(([nome, schema]) => {
    const { description, ...resto } = schema;
    return {
      name: nome,
      in: onde,
      required: onde === 'path' || (json.required ?? []).includes(nome),
      ...(description ? { description } : {}),
      schema: resto,
    };
  });
}

function respostasDeErro(rota: Rota) {
  const r: Record<string, unknown> = {};
  const problema = (descricao: string) => ({
    description: descricao,
    content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problema' } } },
  });
  r['400'] = problema('Entrada inválida');
  if (rota.acesso !== 'publico') {
    r['401'] = problema('Token ausente, inválido ou expirado');
    r['403'] = problema('Sem permissão');
  }
  if (/[:*]/.test(rota.caminho)) r['404'] = problema('Não encontrado');
  for (const [status, descricao] of Object.entries(rota.outrasRespostas ?? {})) r[status] = problema(descricao);
  return r;
}

/** The OpenAPI 3.1 document of a service, built from the same joi schemas that validate requests. */
export function documentoOpenApi(info: { title: string; version: string; description?: string }, rotas: Rota[]) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const rota of rotas) {
    const caminho = caminhoOpenApi(rota.caminho);
    const status = String(rota.status ?? 200);
    const sucesso = rota.resposta
      ? { description: 'Sucesso', content: { 'application/json': { schema: esquemaJson(rota.resposta) } } }
      : { description: 'Sucesso' };
    const operacao: Record<string, unknown> = {
      operationId: rota.operacao,
      summary: rota.resumo,
      ...(rota.descricao ? { description: rota.descricao } : {}),
      parameters: [...parametros(rota.validar?.params, 'path'), ...parametros(rota.validar?.query, 'query'), ...parametros(rota.cabecalhos, 'header')],
      responses: { [status]: sucesso, ...respostasDeErro(rota) },
    };
    if (rota.validar?.body) {
      operacao.requestBody = { required: true, content: { 'application/json': { schema: esquemaJson(rota.validar.body) } } };
    }
    if (rota.acesso !== 'publico') operacao.security = [{ bearer: [] }];
    (paths[caminho] ??= {})[rota.metodo] = operacao;
  }
  return {
    openapi: '3.1.0',
    info,
    paths,
    components: {
      schemas: { Problema: PROBLEMA },
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } },
    },
  };
}
