import Joi from 'joi';

/**
 * Query parsing of SPEC §2 pages (DESIGN §4): `pagina`/`tamanho` must be integers (else 400);
 * below 1 becomes 1, above the route's cap becomes the cap. An integer too large for a number is
 * still an integer: it is adjusted like the others (to the cap, or to the largest safe one).
 */
export function inteiroAjustado(padrao: number, maximo = Number.MAX_SAFE_INTEGER) {
  return inteiroEscrito(Joi.number().unsafe().default(padrao), (v) => Math.max(1, Math.min(v, maximo)));
}

/**
 * An integer written as one: joi's number() also takes `3.0`, `1e3` and `0x10`, and with unsafe()
 * rounds `1.00000000000000001` to 1; a query's integer is digits only (DESIGN §4).
 */
export function inteiroEscrito(numero = Joi.number(), ajustar: (v: number) => number = (v) => v) {
  return numero.integer().custom((v: number, helpers) => {
    if (!Number.isInteger(v)) return v; // integer() has already said so
    if (!/^\s*[+-]?\d+\s*$/.test(String(helpers.original))) return helpers.error('number.integer');
    return ajustar(v);
  });
}

export const pagina = () => inteiroAjustado(1).description('Página, a partir de 1 (abaixo de 1 vira 1).');
export const tamanho = (padrao: number, maximo?: number) =>
  inteiroAjustado(padrao, maximo).description(
    `Itens por página (padrão ${padrao}${maximo ? `, máximo ${maximo}` : ', sem máximo'}; abaixo de 1 vira 1).`,
  );

/** Optional text filter: empty means absent. */
export const texto = (max = 200) => Joi.string().trim().max(max).empty('');
/** Optional boolean filter: empty or blank means absent, like the text filters. */
export const booleano = () => Joi.boolean().truthy('true').falsy('false').empty(Joi.string().allow('').pattern(/^\s+$/));
/** What an id looks like: at most 64 letters, digits, `-` and `_`. */
const FORMA_DO_ID = /^[A-Za-z0-9_-]{1,64}$/;
/**
 * An id, in lower case: the suite's ids are UUIDs written so, and one a client writes in capitals
 * (many do) must be stored and compared as the same id, whatever the column's collation.
 */
export const id = () =>
  Joi.string()
    .trim()
    .max(64)
    .pattern(FORMA_DO_ID)
    .lowercase()
    .messages({ 'string.pattern.base': '{{#label}} deve ter de 1 a 64 letras, dígitos, - ou _' });
/** The same test outside a schema (a hook that runs before the route's validation). */
export const ehId = (valor: string) => FORMA_DO_ID.test(valor);
/** An id as `id()` takes it, outside a schema (a check that runs before the route's validation). */
export const comoId = (valor: string) => valor.trim().toLowerCase();

export interface PaginaNumerada<T> {
  itens: T[];
  pagina: number;
  tamanho: number;
  total: number;
}

export interface PaginaCursor<T> {
  itens: T[];
  proximo_cursor: string | null;
  tamanho: number;
}

/**
 * Rows skipped before a page. Where `tamanho` has no maximum the product can pass what a number
 * writes as digits (1e21 would reach SQL as `1e+21`, a syntax error): past any table's size, it is
 * held at the largest safe integer, which still gives the empty page such a request asks for.
 */
export function offset(paginaAtual: number, tamanhoAtual: number): number {
  return Math.min((paginaAtual - 1) * tamanhoAtual, Number.MAX_SAFE_INTEGER);
}

/** `%` and `_` typed by a user are literal, not wildcards. */
export function contem(valor: string): string {
  return `%${valor.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}
