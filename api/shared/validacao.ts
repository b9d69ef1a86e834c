import Joi from 'joi';
import { dadosInvalidos } from './errors';

const OPCOES_JOI: Joi.ValidationOptions = { abortEarly: false, convert: true, errors: { wrap: { label: false } } };

/**
 * A schema with the suite's validation options set on it, once: joi merges options given to
 * `validate` on every call, but caches a schema's own. `ignorarDesconhecidos` drops unknown keys
 * (a query string) instead of refusing them (a body). These options override a schema's own root
 * options, so the suite's schemas set none there (options on nested schemas still apply).
 */
export function esquemaPronto(esquema: Joi.Schema, ignorarDesconhecidos = false): Joi.Schema {
  return esquema.prefs({ ...OPCOES_JOI, stripUnknown: ignorarDesconhecidos ? { objects: true } : false });
}

/** The value as `esquema` converts it, or a 400 listing every field at fault (`parte` names the whole). */
export function validarCom<T>(esquema: Joi.Schema, valor: unknown, mensagem: string, parte = 'body'): T {
  const { value, error } = esquema.validate(valor);
  if (error) {
    throw dadosInvalidos(
      mensagem,
      error.details.map((d) => ({ campo: d.path.length ? d.path.join('.') : parte, mensagem: d.message })),
    );
  }
  return value as T;
}
