import Joi from 'joi';
import { dadosInvalidos } from './errors';

/** How deep a JSON body may nest (MySQL's JSON documents stop at 100 too). */
export const PROFUNDIDADE_MAXIMA_DO_CORPO = 100;

/**
 * The keys from `de` down to `alvo`, which lies within PROFUNDIDADE_MAXIMA_DO_CORPO levels: worked
 * out only for the one value a walk over a body found at fault, so the walk builds no path.
 */
export function caminhoAte(de: unknown, alvo: object, nivel = 0): string[] | undefined {
  if (de === alvo) return [];
  if (typeof de !== 'object' || de === null || nivel >= PROFUNDIDADE_MAXIMA_DO_CORPO) return undefined;
  for (const [chave, filho] of Object.entries(de)) {
    const resto = caminhoAte(filho, alvo, nivel + 1);
    if (resto) return [chave, ...resto];
  }
  return undefined;
}

/**
 * joi's own message for a pattern rule quotes the expression, which tells a client nothing it can
 * act on: a rule without a message of its own says the value is out of form, by this one.
 */
const MENSAGENS_PADRAO = {
  'string.pattern.base': '{{#label}} não está no formato esperado',
  'string.pattern.invert.base': '{{#label}} não está no formato esperado',
};

const OPCOES_JOI: Joi.ValidationOptions = { abortEarly: false, convert: true, errors: { wrap: { label: false } }, messages: MENSAGENS_PADRAO };

/**
 * A schema with the suite's validation options set on it, once: joi merges options given to
 * `validate` on every call, but caches a schema's own. `ignorarDesconhecidos` drops unknown keys
 * (a query string) instead of refusing them (a body). These options override a schema's own root
 * options, so the suite's schemas set none there (options on nested schemas still apply).
 */
export function esquemaPronto(esquema: Joi.Schema, ignorarDesconhecidos = false): Joi.Schema {
  return esquema.prefs({ ...OPCOES_JOI, stripUnknown: ignorarDesconhecidos ? { objects: true } : false });
}

/**
 * Errors an answer lists, at most: a body of 1 MiB holds 100,000 unknown keys or wrong items, each
 * its own error (an answer of megabytes, and their comparison with one another took seconds).
 */
export const ERROS_LISTADOS = 100;

/** The value as `esquema` converts it, or a 400 listing the fields at fault (`parte` names the whole). */
export function validarCom<T>(esquema: Joi.Schema, valor: unknown, mensagem: string, parte = 'body'): T {
  const { value, error } = esquema.validate(valor);
  if (error) {
    // two rules of a field may say the same thing (every rule runs: abortEarly is off)
    const unicos = new Map<string, { campo: string; mensagem: string }>();
    for (const d of error.details) {
      const campo = d.path.length ? d.path.join('.') : parte;
      unicos.set(`${campo}\0${d.message}`, { campo, mensagem: d.message });
    }
    const erros = [...unicos.values()];
    const cortados = erros.length > ERROS_LISTADOS ? ` (${erros.length} erros; os primeiros ${ERROS_LISTADOS} abaixo)` : '';
    throw dadosInvalidos(`${mensagem}${cortados}`, erros.slice(0, ERROS_LISTADOS));
  }
  return value as T;
}
