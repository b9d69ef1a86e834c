import Joi from 'joi';
import parse from 'joi-to-json';
import { DESAFIO_DO_TOKEN_RECUSADO, DESAFIO_PADRAO, desafioDoTokenNaQuery } from './http-errors';
import { criaComLeitura, LIMITE_DO_CORPO, recebeJson, Rota } from './rotas';

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

/** RFC 7517 key set (GET /.well-known/jwks.json): each key's own members depend on its type (RSA, OKP). */
export const esquemaJwks = sempre({
  keys: Joi.array().items(
    Joi.object({ kty: Joi.string().required(), kid: Joi.string().required(), alg: Joi.string(), use: Joi.string() }).unknown(true),
  ),
}).label('Jwks');

/** SPEC §2 PaginaNumerada of `item`. */
export const paginaNumerada = (item: Joi.Schema) =>
  sempre({ itens: Joi.array().items(item), pagina: Joi.number().integer(), tamanho: Joi.number().integer(), total: Joi.number().integer() });

function esquemaJson(esquema: Joi.Schema): Record<string, unknown> {
  // joi-to-json reads nothing of a schema but its description
  const descricao = comRestricoesDeTexto(esquema.describe());
  const json = parse({ describe: () => descricao } as unknown as Joi.Schema, 'open-api-3.1');
  return semChavesDePadrao(aplicarRestricoes(json)) as Record<string, unknown>;
}

/** What joi-to-json cannot say of a string, carried through it on the node as this `x-` key. */
const RESTRICOES = 'x-restricoes-de-texto';

/**
 * A JSON Schema restriction a string's joi rules cannot state (a `.custom()` check), for its
 * `.meta()`: `{ maxLength: 255 }` where joi's `.max()`, which counts UTF-16 units, was not wanted.
 */
export const restricaoNoDocumento = (restricao: Record<string, unknown>) => ({ [RESTRICOES]: [restricao] });

/** A regular expression as joi's description writes it (`/source/flags`), in its two parts. */
function partesDaExpressao(texto: string): { fonte: string; bandeiras: string } {
  const fim = texto.lastIndexOf('/');
  return { fonte: texto.slice(1, fim), bandeiras: texto.slice(fim + 1) };
}

/**
 * What joi checks of a string and joi-to-json leaves out or gets wrong, said in JSON Schema:
 * - `.trim()` with a minimum length: joi counts the length after trimming, so a blank value is
 *   refused although `minLength` lets it through. The document adds a pattern: a non-space
 *   character (for a minimum of `n` over 1, two of them with at least `n - 2` characters between);
 *   a blank is still allowed where joi takes one as empty (`.allow('')`, `.empty('')`).
 * - `.pattern(re)`: joi-to-json keeps the last one only, writes a flag into the expression
 *   (`/\p{Cs}/u` → `\p{Cs}/u`) and ignores `invert`. Every pattern is given here instead, an
 *   inverted one as `not`; one with a flag JSON Schema has no way to say (any but `u`, the
 *   Unicode mode JSON Schema validators such as ajv match in) is left out of the document.
 * Walks joi's description (`describe()`), whose string nodes are `{ type: 'string', rules }`.
 */
function comRestricoesDeTexto(no: unknown): unknown {
  if (Array.isArray(no)) return no.map(comRestricoesDeTexto);
  if (!no || typeof no !== 'object') return no;
  const r: Record<string, any> = {};
  for (const [k, v] of Object.entries(no)) {
    // values (allowed, refused, examples, defaults) and metas are data, not schemas
    r[k] = ['allow', 'invalid', 'examples', 'metas', 'default'].includes(k) ? v : comRestricoesDeTexto(v);
  }
  if (r.type !== 'string' || !Array.isArray(r.rules)) return r;
  const regras = r.rules as { name: string; args?: Record<string, any> }[];
  const restricoes: Record<string, unknown>[] = [];
  const apara = regras.some((g) => g.name === 'trim' && g.args?.enabled !== false);
  const minimo = Math.max(0, ...regras.filter((g) => g.name === 'min' || g.name === 'length').map((g) => Number(g.args?.limit) || 0));
  if (apara && minimo > 0) {
    const nucleo = minimo === 1 ? '\\S' : `\\S[\\s\\S]{${minimo - 2},}\\S`;
    const vazioAceito = (r.allow ?? []).includes('') || (r.flags?.empty?.allow ?? []).includes('');
    restricoes.push({ pattern: vazioAceito ? `^\\s*$|${nucleo}` : nucleo });
  }
  for (const g of regras.filter((g) => g.name === 'pattern')) {
    const { fonte, bandeiras } = partesDaExpressao(String(g.args?.regex));
    if (/[^u]/.test(bandeiras)) continue;
    restricoes.push(g.args?.options?.invert ? { not: { pattern: fonte } } : { pattern: fonte });
  }
  r.rules = regras.filter((g) => g.name !== 'pattern');
  // those given by the schema's own meta (restricaoNoDocumento) first, all in one meta
  const metas = (r.metas ?? []) as Record<string, unknown>[];
  const daMeta = metas.flatMap((m) => (m[RESTRICOES] as Record<string, unknown>[] | undefined) ?? []);
  if (daMeta.length || restricoes.length) r.metas = [...metas.filter((m) => !(RESTRICOES in m)), { [RESTRICOES]: [...daMeta, ...restricoes] }];
  return r;
}

/** Each string's restrictions (comRestricoesDeTexto): each on the node itself while its keyword is free there, the rest in `allOf`. */
function aplicarRestricoes(no: unknown): unknown {
  if (Array.isArray(no)) return no.map(aplicarRestricoes);
  if (!no || typeof no !== 'object') return no;
  const { [RESTRICOES]: restricoes, ...resto } = no as Record<string, unknown>;
  const r = Object.fromEntries(Object.entries(resto).map(([k, v]) => [k, aplicarRestricoes(v)])) as Record<string, any>;
  for (const restricao of (restricoes as Record<string, unknown>[] | undefined) ?? []) {
    const chaves = Object.keys(restricao);
    if (chaves.length === 1 && r[chaves[0]] === undefined) r[chaves[0]] = restricao[chaves[0]];
    else r.allOf = [...(r.allOf ?? []), restricao];
  }
  return r;
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

/** `a`, `a e b`, `a, b e c` */
const lista = (itens: string[]) => (itens.length < 2 ? itens.join('') : `${itens.slice(0, -1).join(', ')} e ${itens.at(-1)}`);
const emCodigo = (texto: string) => `\`${texto}\``;
/** The space and the visible ASCII characters: those a replacement may take from a typed parameter. */
const IMPRIMIVEIS = Array.from({ length: 0x7f - 0x20 }, (_, i) => String.fromCharCode(0x20 + i));

/**
 * What a parameter's text may carry beyond the canonical form its schema states, since joi converts
 * it before checking it (`.trim()`, `.uppercase()`/`.lowercase()`, `.replace()`): one sentence for
 * its description, or undefined. Described, not encoded in the schema (docs/decisoes.md).
 */
function tolerancias(esquema: Joi.Schema): string | undefined {
  type Troca = { pattern: { regex: string }; replacement: string };
  const { type, rules = [], replacements = [] } = esquema.describe() as { type: string; rules?: { name: string; args?: any }[]; replacements?: Troca[] };
  if (type !== 'string') return undefined;
  // the characters each replacement takes (a mask's, a decimal comma), and what it puts in their place
  const trocas = replacements.map(({ pattern: { regex }, replacement }) => {
    const { fonte, bandeiras } = partesDaExpressao(regex);
    // without `g`, under which test() would go on from its last match
    const expressao = new RegExp(fonte, bandeiras.replace('g', ''));
    return { de: IMPRIMIVEIS.filter((c) => expressao.test(c)), para: replacement };
  });
  const retirados = trocas.filter((t) => !t.para).flatMap((t) => t.de);
  const partes: string[] = [];
  if (retirados.includes(' ')) partes.push('espaços');
  else if (rules.some((g) => g.name === 'trim' && g.args?.enabled !== false)) partes.push('espaços em volta');
  if (rules.some((g) => g.name === 'case')) partes.push('maiúsculas ou minúsculas');
  const mascara = retirados.filter((c) => c !== ' ').map(emCodigo);
  if (mascara.length) partes.push(`os caracteres de máscara ${lista(mascara)}`);
  for (const { de, para } of trocas.filter((t) => t.para)) partes.push(`${lista(de.map(emCodigo))} no lugar de ${emCodigo(para)}`);
  return partes.length ? `Também aceita ${lista(partes)}.` : undefined;
}

function parametros(esquema: Joi.ObjectSchema | undefined, onde: 'path' | 'query' | 'header') {
  if (!esquema) return [];
  const json = esquemaJson(esquema) as { properties?: Record<string, Record<string, unknown>>; required?: string[] };
  return Object.entries(json.properties ?? {}).map(([nome, schema]) => {
    const { description, ...resto } = onde === 'path' ? umSegmento(schema) : schema;
    const doParametro = esquema.extract(nome);
    const tolerado = tolerancias(doParametro);
    const descricao = description && tolerado ? `${String(description).replace(/\.?$/, '.')} ${tolerado}` : (description ?? tolerado);
    return {
      name: nome,
      in: onde,
      required: onde === 'path' || (json.required ?? []).includes(nome),
      // `nome=` (OpenAPI's form style for an empty value): joi takes it, as an absent one mostly
      ...(onde === 'query' && !doParametro.validate('').error ? { allowEmptyValue: true } : {}),
      ...(descricao ? { description: descricao } : {}),
      schema: resto,
    };
  });
}

/**
 * A path parameter is the one string a client writes in its place. Express 5 hands a `*name`
 * wildcard to the route as its segments (an array), which the route's schema accepts besides the
 * string: that form is the server's own, not the client's, and is left out of the document.
 */
function umSegmento(schema: Record<string, unknown>): Record<string, unknown> {
  const alternativas = schema.anyOf as Record<string, unknown>[] | undefined;
  if (!alternativas) return schema;
  const texto = alternativas.filter((a) => a.type !== 'array');
  if (texto.length !== 1) return schema;
  const { anyOf: _, ...resto } = schema;
  return { ...resto, ...texto[0] };
}


/**
 * The error answers of a route, each with the problem shape (DESIGN §4): those every route of its
 * kind gives, then its own (`outrasRespostas`, which may say more of one of these).
 */
function respostasDeErro(rota: Rota) {
  const r: Record<string, unknown> = {};
  const problema = (descricao: string) => ({
    description: descricao,
    content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problema' } } },
  });
  // a route that validates nothing and reads no body has nothing to refuse as malformed
  if (rota.validar || rota.cabecalhos || recebeJson(rota)) r['400'] = problema('Entrada inválida');
  if (rota.acesso !== 'publico') {
    r['401'] = problema('Token ausente, inválido ou expirado');
    r['403'] = problema('Sem permissão');
  }
  if (/[:*]/.test(rota.caminho) && !rota.sem404) r['404'] = problema('Não encontrado');
  // any body is parsed, but only one a client is told to send may pass the limit
  if (recebeJson(rota) && rota.validar?.body) r['413'] = problema(`Corpo maior que o limite (${(rota.limiteDoCorpo ?? LIMITE_DO_CORPO) / 1024 / 1024} MiB)`);
  if (recebeJson(rota)) r['415'] = problema('Corpo em outro Content-Type que não JSON, ou em codificação não suportada');
  for (const [status, descricao] of Object.entries(rota.outrasRespostas ?? {})) r[status] = problema(descricao);
  // what a 401 asks for (api/shared/http-errors.ts): a bearer token, or the route's own credential;
  // a public route refusing the credentials of its body (a login) sends the bearer challenge all the same
  if (r['401']) {
    const semToken = rota.acesso === 'publico' && !rota.tokenNaQuery;
    const comToken = rota.acesso !== 'publico';
    const descricao = semToken
      ? 'O desafio de todo 401 dos serviços; esta rota não recebe token: as credenciais vão no corpo'
      : comToken
        ? 'Bearer; com error="invalid_token" quando o token enviado foi recusado (vencido, revogado, inválido: RFC 6750 §3.1)'
        : 'O que a rota pede para autenticar';
    const schema = comToken ? { type: 'string', enum: [DESAFIO_PADRAO, DESAFIO_DO_TOKEN_RECUSADO] } : { type: 'string', const: rota.tokenNaQuery ? desafioDoTokenNaQuery(rota.tokenNaQuery) : DESAFIO_PADRAO };
    (r['401'] as Record<string, unknown>).headers = { 'WWW-Authenticate': { description: descricao, required: true, schema } };
  }
  // the database, Redis or (checking a token) the identity service out of reach
  if (!rota.semDependencias) r['503'] ??= problema('Uma dependência do serviço está indisponível; tente de novo');
  // every 423, 429 and 503 says when to try again (api/shared/http-errors.ts, limite.ts)
  for (const status of ['423', '429', '503']) {
    if (!r[status]) continue;
    const podeFaltar = status === '503' && rota.semRetryAfterQuando;
    const descricao = `Segundos a esperar antes de tentar de novo${podeFaltar ? `; ausente ${podeFaltar}` : ''}`;
    (r[status] as Record<string, unknown>).headers = {
      'Retry-After': { description: descricao, required: !podeFaltar, schema: { type: 'integer', minimum: 1 } },
    };
  }
  return r;
}

/** The success answer of a route: its status and what it carries. */
function respostaDeSucesso(rota: Rota, rotas: Rota[]): Record<string, unknown> {
  if (rota.semSucesso) return {};
  const status = String(rota.status ?? (rota.resposta || rota.respostaBinaria ? 200 : 204));
  const local = criaComLeitura(rota, rotas) && { headers: { Location: { description: 'Onde ler o registro criado', required: true, schema: { type: 'string' } } } };
  if (rota.resposta) return { [status]: { description: 'Sucesso', ...local, content: { 'application/json': { schema: esquemaJson(rota.resposta) } } } };
  if (rota.respostaBinaria) return { [status]: { description: 'Os bytes do arquivo', content: { '*/*': { schema: BINARIO } } } };
  return { [status]: { description: 'Sucesso, sem corpo' } };
}

const BINARIO = { type: 'string', format: 'binary' };

/**
 * HEAD of a GET route (Rota.documentarHead): Express runs the GET's handler and sends its status
 * and headers without the body, so the operation is the GET's, every answer without content.
 */
function operacaoHead(get: Record<string, any>): Record<string, unknown> {
  const respostas = Object.fromEntries(
    Object.entries<Record<string, unknown>>(get.responses).map(([status, { content: _, ...resposta }]) => [
      status,
      { ...resposta, description: `${resposta.description} (só os cabeçalhos)` },
    ]),
  );
  return {
    ...get,
    operationId: `${get.operationId}_cabecalhos`,
    summary: `Os cabeçalhos de GET, sem o corpo: ${get.summary}`,
    responses: respostas,
  };
}

const TOKENS = { usuario: 'de usuário', aplicativo: 'de aplicativo', usuario_ou_aplicativo: 'de usuário ou de aplicativo' } as const;

/**
 * Which token a route takes and whom its permission lets in, in words (a 403 otherwise): the
 * security scheme says only "bearer". Also in `x-acesso` and `x-permissao`, for tools.
 */
function quemAcessa(rota: Rota): string | undefined {
  if (rota.acesso === 'publico') return undefined;
  const permissao = rota.permissao?.descricao;
  return `Acesso: token ${TOKENS[rota.acesso]}${permissao ? `; ${permissao}` : ''}.`;
}

/** A request the service itself sends to an address it was given (a webhook): OpenAPI 3.1 `webhooks`. */
export interface WebhookDocumentado {
  resumo: string;
  descricao?: string;
  corpo: Joi.Schema;
  cabecalhos: Joi.ObjectSchema;
  /** by status (`2XX`, `default`), what each answer means to the sender */
  respostas: Record<string, string>;
}

function webhookOpenApi(w: WebhookDocumentado) {
  return {
    post: {
      summary: w.resumo,
      ...(w.descricao ? { description: w.descricao } : {}),
      parameters: parametros(w.cabecalhos, 'header'),
      requestBody: { required: true, content: { 'application/json': { schema: esquemaJson(w.corpo) } } },
      responses: Object.fromEntries(Object.entries(w.respostas).map(([status, descricao]) => [status, { description: descricao }])),
    },
  };
}

/** The OpenAPI 3.1 document of a service, built from the same joi schemas that validate requests. */
export function documentoOpenApi(
  info: { title: string; version: string; description?: string },
  rotas: Rota[],
  webhooks: Record<string, WebhookDocumentado> = {},
) {
  const paths: Record<string, Record<string, unknown>> = {};
  const esquemasDeSeguranca: Record<string, unknown> = { bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } };
  for (const rota of rotas) {
    const caminho = caminhoOpenApi(rota.caminho);
    const acesso = quemAcessa(rota);
    const descricao = [rota.descricao, acesso].filter(Boolean).join('\n\n');
    const operacao: Record<string, unknown> = {
      operationId: rota.operacao,
      summary: rota.resumo,
      ...(descricao ? { description: descricao } : {}),
      parameters: [...parametros(rota.validar?.params, 'path'), ...parametros(rota.validar?.query, 'query'), ...parametros(rota.cabecalhos, 'header')],
      responses: { ...respostaDeSucesso(rota, rotas), ...respostasDeErro(rota) },
    };
    if (rota.validar?.body) {
      operacao.requestBody = { required: true, content: { 'application/json': { schema: esquemaJson(rota.validar.body) } } };
    } else if (rota.corpoEmFluxo) {
      operacao.requestBody = { required: true, content: { '*/*': { schema: BINARIO } } };
    }
    if (rota.acesso !== 'publico') {
      operacao.security = [{ bearer: [] }];
      operacao['x-acesso'] = rota.acesso;
      if (rota.permissao?.descricao) operacao['x-permissao'] = rota.permissao.descricao;
    } else if (rota.tokenNaQuery) {
      // a token in the query (a webhook's): an API key in that parameter, said as its security
      // requirement (the parameter's own schema leaves it optional: a missing one gets the 401, not a 400)
      const esquema = `${rota.tokenNaQuery}_na_query`;
      operacao.security = [{ [esquema]: [] }];
      esquemasDeSeguranca[esquema] = { type: 'apiKey', in: 'query', name: rota.tokenNaQuery };
    }
    (paths[caminho] ??= {})[rota.metodo] = operacao;
    if (rota.metodo === 'get' && rota.documentarHead) paths[caminho].head = operacaoHead(operacao);
  }
  const nomesDosWebhooks = Object.keys(webhooks);
  return {
    openapi: '3.1.0',
    info,
    paths,
    ...(nomesDosWebhooks.length ? { webhooks: Object.fromEntries(nomesDosWebhooks.map((n) => [n, webhookOpenApi(webhooks[n])])) } : {}),
    components: {
      schemas: { Problema: PROBLEMA },
      securitySchemes: esquemasDeSeguranca,
    },
  };
}
