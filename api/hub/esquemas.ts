import Ajv, { ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { RE2JS } from 're2js';
import { dadosInvalidos } from '../shared/errors';

/**
 * JSON Schemas of event versions (DESIGN §5, draft-07), compiled once per version and kept.
 * A new version is checked strictly: a keyword or format the validator does not know (a typo, a
 * 2019+ keyword such as `unevaluatedProperties`) refuses it instead of being silently ignored
 * (`example` is known, as an annotation). Stored versions compile as they were accepted, so one
 * from before the strict check still takes events. `addUsedSchema` off: a schema's `$id` is not
 * registered, so compiling it again (a new version, another process's change) never collides.
 */
const opcoes = { allErrors: true, strict: false, addUsedSchema: false } as const;

/**
 * A validator instance keeps every schema it ever compiled (refused ones too, in its shared code
 * scope, which removeSchema does not empty): each compile gets an instance of its own, which goes
 * with the compiled function (about 0.1 ms to make).
 */
function novoValidador(estrito: boolean): Ajv {
  const code = { regExp: estrito ? padraoLinear : padraoDeVersaoGuardada };
  // a stored version's unknown format was accepted once: ignored, as then, without a console line per compile
  const ajv = new Ajv(estrito ? { ...opcoes, code, strictSchema: true } : { ...opcoes, code, logger: false });
  addFormats(ajv);
  if (estrito) ajv.addVocabulary(['example']);
  return ajv;
}

/**
 * `pattern` and `patternProperties` run on RE2 (re2js), whose time grows with the text only, so no
 * pattern (`^(a+)+$`, say) can hold the hub on a crafted event (ReDoS); JavaScript's escapes
 * (`\u00e9`) are translated first. A new version whose pattern RE2 does not read (lookaround,
 * back-references) is refused; a stored one accepted before keeps the native engine for that
 * pattern only (docs/decisoes.md: the few classes the engines read differently).
 */
const re2 = (padrao: string) => RE2JS.compile(RE2JS.translateRegExp(padrao));
const padraoLinear = Object.assign(re2, { code: 'RE2JS.compile' });
const padraoDeVersaoGuardada = Object.assign(
  (padrao: string, u: string) => {
    try {
      return re2(padrao);
    } catch {
      return new RegExp(padrao, u);
    }
  },
  { code: 'padraoDeVersaoGuardada' },
);

/** Per version: the compiled schema, and which state of the version it compiled (its last change). */
const compilados = new Map<string, { marca: string; validar: ValidateFunction }>();

/** A schema must compile; otherwise the version is refused with the compiler's reason. */
export function conferirEsquema(esquema: Record<string, unknown>): void {
  let validar: ValidateFunction;
  try {
    validar = novoValidador(true).compile(esquema);
  } catch (err) {
    throw dadosInvalidos('O esquema não é um JSON Schema válido.', [{ campo: 'esquema', mensagem: (err as Error).message }]);
  }
  // an async schema validates through a promise, which a synchronous check would take for success
  if ((validar as { $async?: boolean }).$async) throw dadosInvalidos('O esquema não é um JSON Schema válido.', [{ campo: 'esquema', mensagem: '$async não é aceito' }]);
}

/**
 * Validates an event's `dados` against its version's schema (`versao` names the version, `marca`
 * its last change: a changed version compiles again, in place of the old; `esquema` is read only
 * then, since reading it parses the stored text); 400 with every schema
 * error. (A number out of JSON's range, which a schema without `type` would let through, never
 * gets here: every body is refused with one, api/shared/rotas.ts.)
 */
export function validarDados(versao: string, marca: string, esquema: () => Record<string, unknown>, dados: unknown): void {
  let compilado = compilados.get(versao);
  if (compilado?.marca !== marca) {
    compilado = { marca, validar: novoValidador(false).compile(esquema()) };
    compilados.set(versao, compilado);
  }
  const { validar } = compilado;
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
