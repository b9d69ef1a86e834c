import Ajv, { ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { dadosInvalidos } from '../shared/errors';

/** JSON Schemas of event versions (DESIGN §5), compiled once per version and kept. */
const ajv = new Ajv({ allErrors: true, strict: false });
addFormats(ajv);

const compilados = new Map<string, ValidateFunction>();

/** A schema must compile; otherwise the version is refused with the compiler's reason. */
export function conferirEsquema(esquema: Record<string, unknown>): void {
  try {
    ajv.compile(esquema);
  } catch (err) {
    throw dadosInvalidos('O esquema não é um JSON Schema válido.', [{ campo: 'esquema', mensagem: (err as Error).message }]);
  }
}

/** Validates an event's `dados`; 400 with every schema error. */
export function validarDados(chave: string, esquema: Record<string, unknown>, dados: unknown): void {
  let validar = compilados.get(chave);
  if (!validar) {
    validar = ajv.compile(esquema);
    compilados.set(chave, validar);
  }
  if (!validar(dados)) {
    throw dadosInvalidos(
      'Os dados não seguem o esquema da versão.',
      (validar.errors ?? []).map((e) => {
        // a missing property is reported at its parent by ajv: name the property itself
        const falta = e.keyword === 'required' ? `/${(e.params as { missingProperty: string }).missingProperty}` : '';
        return { campo: `dados${`${e.instancePath}${falta}`.replace(/\//g, '.')}`, mensagem: e.message ?? 'inválido' };
      }),
    );
  }
}
