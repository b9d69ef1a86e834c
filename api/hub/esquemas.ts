import Ajv, { ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { RE2JS } from 're2js';
import { dadosInvalidos } from '../shared/errors';
import { caminhoAte, ERROS_LISTADOS } from '../shared/validacao';

/**
 * JSON Schemas of event versions (DESIGN §5, draft-07), compiled once per version and kept.
 * A new version is checked strictly: a keyword or format the validator does not know (a typo, a
 * 2019+ keyword such as `unevaluatedProperties`) refuses it instead of being silently ignored
 * (`example` is known, as an annotation). Stored versions compile as they were accepted, so one
 * from before the strict check still takes events. `addUsedSchema` off: a schema's `$id` is not
 * registered, so compiling it again (a new version, another process's change) never collides.
 */
const opcoes = { strict: false, addUsedSchema: false, ownProperties: true } as const;

/**
 * `uniqueItems` in time that grows with the array, not with its square: ajv compares every pair of
 * items that are not plain scalars, so 40,000 objects held a process for a minute. Two items are
 * the same JSON value when their canonical text (keys sorted) is the same.
 */
function semRepetidos(itens: unknown[]): [number, number] | null {
  const vistos = new Map<string, number>();
  for (const [i, item] of itens.entries()) {
    const chave = textoCanonico(item);
    const antes = vistos.get(chave);
    if (antes !== undefined) return [antes, i];
    vistos.set(chave, i);
  }
  return null;
}
const textoCanonico = (v: unknown): string =>
  JSON.stringify(v, (_chave, valor: unknown) =>
    valor && typeof valor === 'object' && !Array.isArray(valor)
      ? Object.fromEntries(Object.keys(valor).sort().map((k) => [k, (valor as Record<string, unknown>)[k]]))
      : valor,
  );

const uniqueItems = {
  keyword: 'uniqueItems',
  type: 'array',
  schemaType: 'boolean',
  errors: true,
  validate: function validar(unicos: boolean, itens: unknown[]): boolean {
    const par = unicos ? semRepetidos(itens) : null;
    (validar as { errors?: unknown[] }).errors = par
      ? [{ keyword: 'uniqueItems', message: `must NOT have duplicate items (items ## ${par[1]} and ${par[0]} are identical)`, params: { i: par[0], j: par[1] } }]
      : [];
    return !par;
  },
} as const;

/**
 * `enum` and `const` in time that grows with the value checked, not with the list: ajv compares
 * the value with each allowed one in turn, so an array of 10,000 items against an enum of 5,000
 * names took 0.6 s however valid. The allowed values' canonical texts go in a set once per
 * schema (kept while the schema is).
 */
const permitidosPorLista = new WeakMap<object, Set<string>>();
function permitido(lista: object, valores: unknown[], dado: unknown): boolean {
  let conjunto = permitidosPorLista.get(lista);
  if (!conjunto) permitidosPorLista.set(lista, (conjunto = new Set(valores.map(textoCanonico))));
  return conjunto.has(textoCanonico(dado));
}
const enumPorTexto = {
  keyword: 'enum',
  schemaType: 'array',
  errors: true,
  validate: function validar(valores: unknown[], dado: unknown): boolean {
    const ok = permitido(valores, valores, dado);
    (validar as { errors?: unknown[] }).errors = ok ? [] : [{ keyword: 'enum', message: 'must be equal to one of the allowed values', params: { allowedValues: valores } }];
    return ok;
  },
} as const;
const constPorTexto = {
  keyword: 'const',
  errors: true,
  validate: function validar(valor: unknown, dado: unknown, esquemaPai?: object): boolean {
    const ok = permitido(esquemaPai ?? [valor], [valor], dado);
    (validar as { errors?: unknown[] }).errors = ok ? [] : [{ keyword: 'const', message: 'must be equal to constant', params: { allowedValue: valor } }];
    return ok;
  },
} as const;

/**
 * The `url` format of ajv-formats on RE2: its native expression takes time that grows with the
 * square of the text (`http://` and 500,000 `a:` would hold the hub for minutes). The same
 * expression, written for RE2, which reads no look-ahead nor JavaScript's Unicode `\s`: the
 * addresses the look-aheads refused (10/8, 127/8, 169.254/16, 192.168/16, 172.16/12) are left
 * out of the address's own alternatives, and `\S` is spelled out as JavaScript reads it. Checked
 * against the native expression on every first two bytes of an address and 300,000 random texts:
 * the same verdicts.
 */
const ESPACO = String.raw`\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff`;
const NAO_ESPACO = `[^${ESPACO}]`;
const BYTE = String.raw`(?:1?\d{1,2}|2[0-4]\d|25[0-5])`;
/** the first two bytes of an address, none of the ranges above */
const INICIO_DO_IPV4 = [
  String.raw`(?:[1-9]|1[1-9]|[2-9]\d|1[013458]\d|12[0-689]|16[0-8]|17[013-9]|19[013-9]|2[01]\d|22[0-3])\.${BYTE}`,
  String.raw`169\.(?:1?\d{1,2}|2[0-4]\d|25[0-35])`,
  String.raw`172\.(?:\d|0\d|1[0-5]|3[2-9]|[4-9]\d|1\d\d|2[0-4]\d|25[0-5])`,
  String.raw`192\.(?:\d{1,2}|1[0-57-9]\d|16[0-79]|2[0-4]\d|25[0-5])`,
].join('|');
const IPV4 = String.raw`(?:${INICIO_DO_IPV4})\.${BYTE}\.(?:[1-9]\d?|1\d\d|2[0-4]\d|25[0-4])`;
const NOME = String.raw`(?:(?:[a-z0-9\u{00a1}-\u{ffff}]+-)*[a-z0-9\u{00a1}-\u{ffff}]+)(?:\.(?:[a-z0-9\u{00a1}-\u{ffff}]+-)*[a-z0-9\u{00a1}-\u{ffff}]+)*(?:\.(?:[a-z\u{00a1}-\u{ffff}]{2,}))`;
const URL_RE2 = RE2JS.compile(
  RE2JS.translateRegExp(String.raw`^(?:https?|ftp):\/\/(?:${NAO_ESPACO}+(?::${NAO_ESPACO}*)?@)?(?:${IPV4}|${NOME})(?::\d{2,5})?(?:\/${NAO_ESPACO}*)?$`),
  RE2JS.CASE_INSENSITIVE,
);
const ehUrl = (texto: string): boolean => URL_RE2.matcher(texto).matches();

/**
 * Every error of an event is looked for (ajv's allErrors) only while the errors it could have stay
 * few: ajv builds each one before the answer keeps the first hundred, and 20,000 empty objects
 * against one of 20 required properties built 400,000 (72 MB, 0.75 s; a whole body's worth,
 * gigabytes). The bound is the event's values times the schema's weight (pesoDoEsquema); past
 * it, the first error alone.
 */
const ERROS_POSSIVEIS_MAXIMO = 20_000;

/**
 * The schema's weight above: the errors one value may bring (percorrer). One whose refs a new
 * version may not hold (stored before the check) weighs past the bound.
 */
function pesoDoEsquema(esquema: unknown): number {
  try {
    return percorrer(esquema).erros;
  } catch {
    return ERROS_POSSIVEIS_MAXIMO + 1;
  }
}

/**
 * A validator instance keeps every schema it ever compiled (refused ones too, in its shared code
 * scope, which removeSchema does not empty): each compile gets an instance of its own, which goes
 * with the compiled function (about 0.1 ms to make).
 */
function novoValidador(estrito: boolean, todosOsErros = false): Ajv {
  const code = { regExp: estrito ? padraoLinear : padraoDeVersaoGuardada };
  const base = { ...opcoes, code, allErrors: todosOsErros };
  // a stored version's unknown format was accepted once: ignored, as then, without a console line per compile
  const ajv = new Ajv(estrito ? { ...base, strictSchema: true } : { ...base, logger: false });
  ajv.removeKeyword('uniqueItems').addKeyword(uniqueItems);
  ajv.removeKeyword('enum').addKeyword(enumPorTexto);
  ajv.removeKeyword('const').addKeyword(constPorTexto);
  addFormats(ajv);
  ajv.addFormat('url', ehUrl);
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

/**
 * RE2's time per character of the text grows with the pattern's compiled size: `.{0,1000}`
 * twenty times over (40,000 instructions) took half a minute on 20 KB. A new version's pattern
 * is held to this size (`^.{0,1000}$` is 2,004), and all of its patterns together to
 * TAMANHO_DOS_PADROES_MAXIMO; the patterns schemas use are tens to a few hundred (`^.{1,255}$`, 513).
 */
const TAMANHO_MAXIMO_DO_PADRAO = 5000;
const padraoLinear = Object.assign(
  (padrao: string) => {
    const compilado = re2(padrao);
    if (compilado.programSize() > TAMANHO_MAXIMO_DO_PADRAO) {
      throw new Error(`pattern "${padrao.slice(0, 100)}" is too large for the hub (${compilado.programSize()} RE2 instructions, at most ${TAMANHO_MAXIMO_DO_PADRAO})`);
    }
    return compilado;
  },
  { code: 'RE2JS.compile' },
);
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
const compilados = new Map<string, Compilado>();

interface Compilado {
  marca: string;
  /** stops at the first error */
  validar: ValidateFunction;
  /** with every error, compiled the first time an event small enough fails */
  todos?: ValidateFunction;
  esquema: Record<string, unknown>;
  peso: number;
}

/**
 * Schemas a validation may pass through, at most, counting each `$ref` as the schema it names:
 * refs that name a schema made of two refs to the one below, and so on, double the work at each
 * level (40 levels, a 4 KB schema, held every publication for hours), however small the data.
 */
const ESQUEMAS_PERCORRIDOS_MAXIMO = 100_000;

/**
 * Schemas one inside another, counting each $ref as a step: the walk below recurses once per step,
 * and a long chain of refs (a small body) would overflow the stack before the count above is made.
 */
const PROFUNDIDADE_MAXIMA = 1_000;

/** RE2 instructions of all of a schema's patterns together (each string meets every one that applies). */
const TAMANHO_DOS_PADROES_MAXIMO = 10_000;

/** Draft-07 keywords whose value is a schema, an array of schemas, or a map of names to schemas. */
const UM_ESQUEMA = ['additionalItems', 'additionalProperties', 'contains', 'propertyNames', 'if', 'then', 'else', 'not'];
const LISTA_DE_ESQUEMAS = ['allOf', 'anyOf', 'oneOf'];
const MAPA_DE_ESQUEMAS = ['properties', 'patternProperties', 'definitions', 'dependencies'];

/** The schemas a schema holds, keyword by keyword (`items` one or a list); values (`const`, `enum`, `default`, `examples`) are not schemas. */
function esquemasDentro(no: Record<string, unknown>): unknown[] {
  const dentro: unknown[] = [];
  for (const k of UM_ESQUEMA) if (k in no) dentro.push(no[k]);
  for (const k of LISTA_DE_ESQUEMAS) if (Array.isArray(no[k])) dentro.push(...(no[k] as unknown[]));
  for (const k of MAPA_DE_ESQUEMAS) if (no[k] && typeof no[k] === 'object') dentro.push(...Object.values(no[k] as object));
  if (Array.isArray(no.items)) dentro.push(...no.items);
  else if ('items' in no) dentro.push(no.items);
  return dentro;
}

const caro = (mensagem: string) => dadosInvalidos('O esquema custaria demais a cada evento.', [{ campo: 'esquema', mensagem }]);

/** What a validation may pass through in a schema (percorrer). */
interface Percurso {
  /** schemas, each `$ref` counted as the one it names (past ESQUEMAS_PERCORRIDOS_MAXIMO, one more) */
  esquemas: number;
  /** errors one value may bring at most: one per schema, and one per name it requires (past ERROS_POSSIVEIS_MAXIMO, one more) */
  erros: number;
}

/**
 * Walks a schema as a validation passes through it. Refs name a schema of this one by its JSON
 * pointer (`#/definitions/x`), resolved from the root, and never one that holds them (recursion:
 * two refs back up, side by side, double the work at each level of the data); a subschema's own
 * `$id` would make ajv resolve its refs otherwise, so there is none. Each ref counts as the schema
 * it names, remembered per node, so a doubling chain is counted in the time of its text.
 * `aoVisitar` sees each schema object once.
 */
function percorrer(raiz: unknown, aoVisitar: (esquema: Record<string, unknown>) => void = () => undefined): Percurso {
  const lembrados = new Map<object, Percurso>();
  const noCaminho = new Set<object>();
  const somar = (a: Percurso, b: Percurso): Percurso => ({
    esquemas: Math.min(ESQUEMAS_PERCORRIDOS_MAXIMO + 1, a.esquemas + b.esquemas),
    erros: Math.min(ERROS_POSSIVEIS_MAXIMO + 1, a.erros + b.erros),
  });
  const apontado = (ref: string): unknown => {
    if (ref !== '#' && !ref.startsWith('#/')) throw caro(`$ref "${ref.slice(0, 100)}": só referências dentro do esquema, como #/definitions/nome`);
    let alvo: unknown = raiz;
    for (const parte of ref === '#' ? [] : ref.slice(2).split('/')) {
      let chave: string;
      try {
        chave = decodeURIComponent(parte).replace(/~1/g, '/').replace(/~0/g, '~');
      } catch {
        throw caro(`$ref "${ref.slice(0, 100)}" não é um ponteiro JSON válido`);
      }
      alvo = alvo && typeof alvo === 'object' ? (alvo as Record<string, unknown>)[chave] : undefined;
    }
    return alvo;
  };
  const nomesExigidos = (esquema: Record<string, unknown>) =>
    (Array.isArray(esquema.required) ? esquema.required.length : 0) +
    (esquema.dependencies && typeof esquema.dependencies === 'object'
      ? Object.values(esquema.dependencies).reduce((n: number, d) => n + (Array.isArray(d) ? d.length : 0), 0)
      : 0);
  const visitar = (no: unknown, ehRaiz = false): Percurso => {
    if (!no || typeof no !== 'object' || Array.isArray(no)) return { esquemas: 0, erros: 0 };
    if (noCaminho.has(no)) throw caro('esquemas recursivos (um $ref para um esquema que o contém) não são aceitos');
    if (noCaminho.size >= PROFUNDIDADE_MAXIMA) throw caro(`mais de ${PROFUNDIDADE_MAXIMA} esquemas um dentro do outro (contando cada $ref como um passo)`);
    const lembrado = lembrados.get(no);
    if (lembrado) return lembrado;
    const esquema = no as Record<string, unknown>;
    if (!ehRaiz && '$id' in esquema) throw caro('$id só na raiz do esquema');
    noCaminho.add(no);
    aoVisitar(esquema);
    let p: Percurso = { esquemas: 1, erros: 1 + nomesExigidos(esquema) };
    for (const filho of esquemasDentro(esquema)) p = somar(p, visitar(filho));
    if (typeof esquema.$ref === 'string') p = somar(p, visitar(apontado(esquema.$ref)));
    noCaminho.delete(no);
    lembrados.set(no, p);
    return p;
  };
  return visitar(raiz, true);
}

/**
 * What one event may cost the schema, checked when a version is created: the schemas a validation
 * may pass through (percorrer), and the RE2 size of all its patterns together.
 */
function conferirCusto(raiz: unknown): void {
  let padroes = 0;
  const somarPadrao = (padrao: unknown) => {
    if (typeof padrao !== 'string') return;
    try {
      padroes += re2(padrao).programSize();
    } catch (err) {
      throw dadosInvalidos('O esquema não é um JSON Schema válido.', [{ campo: 'esquema', mensagem: `pattern "${padrao.slice(0, 100)}": ${(err as Error).message}` }]);
    }
  };
  const { esquemas } = percorrer(raiz, (esquema) => {
    somarPadrao(esquema.pattern);
    if (esquema.patternProperties && typeof esquema.patternProperties === 'object') Object.keys(esquema.patternProperties).forEach(somarPadrao);
  });
  if (esquemas > ESQUEMAS_PERCORRIDOS_MAXIMO) {
    throw caro(`uma validação passaria por mais de ${ESQUEMAS_PERCORRIDOS_MAXIMO} esquemas (contando cada $ref como o esquema que ele nomeia)`);
  }
  if (padroes > TAMANHO_DOS_PADROES_MAXIMO) {
    throw caro(`os padrões (pattern, patternProperties) somam ${padroes} instruções do RE2, mais que ${TAMANHO_DOS_PADROES_MAXIMO}`);
  }
}

/**
 * A schema must compile, and cost a bounded work per event; otherwise the version is refused with
 * the reason.
 */
export function conferirEsquema(esquema: Record<string, unknown>): void {
  // the cost first: ajv copies a ref's schema into every place that names it, so many refs to one
  // large definition would have it generate millions of checks before the count refused them
  conferirCusto(esquema);
  let validar: ValidateFunction;
  try {
    validar = novoValidador(true).compile(esquema);
  } catch (err) {
    throw dadosInvalidos('O esquema não é um JSON Schema válido.', [{ campo: 'esquema', mensagem: (err as Error).message }]);
  }
  // an async schema validates through a promise, which a synchronous check would take for success
  if ((validar as { $async?: boolean }).$async) throw dadosInvalidos('O esquema não é um JSON Schema válido.', [{ campo: 'esquema', mensagem: '$async não é aceito' }]);
}

const SURROGATE_SOLTO = /\p{Cs}/u;

/**
 * How many values `dados` holds, and the first text of it (a value or a key) that is not
 * well-formed Unicode, as its field (`dados.a.0`), or null. JSON can carry a lone surrogate
 * (`"\ud800"`), and it would reach every subscriber so: strict parsers refuse it, and each delivery
 * would end in the error queue. Walked with a list of the objects still to look at, as every body
 * is (api/shared/rotas.ts): the field's path is worked out only for the text found (caminhoAte), so
 * an event's walk builds none.
 */
function percorrerDados(dados: unknown): { valores: number; malFormado: string | null } {
  const campo = (onde: object, chave?: string) => ['dados', ...caminhoAte(dados, onde)!, ...(chave === undefined ? [] : [chave])].join('.');
  if (typeof dados === 'string') return { valores: 1, malFormado: SURROGATE_SOLTO.test(dados) ? 'dados' : null };
  let valores = 1;
  const pendentes: object[] = dados && typeof dados === 'object' ? [dados] : [];
  while (pendentes.length) {
    const valor = pendentes.pop()!;
    const ehLista = Array.isArray(valor);
    for (const chave in valor) {
      valores++;
      if (!ehLista && SURROGATE_SOLTO.test(chave)) return { valores, malFormado: campo(valor) };
      const filho = (valor as Record<string, unknown>)[chave];
      if (typeof filho === 'string') {
        if (SURROGATE_SOLTO.test(filho)) return { valores, malFormado: campo(valor, chave) };
      } else if (filho && typeof filho === 'object') pendentes.push(filho);
    }
  }
  return { valores, malFormado: null };
}

/**
 * Validates an event's `dados` against its version's schema (`versao` names the version, `marca`
 * its last change: a changed version compiles again, in place of the old; `esquema` is read only
 * then, since reading it parses the stored text); 400 with the schema's errors: every one
 * (the first hundred listed) while they can be few (ERROS_POSSIVEIS_MAXIMO), else the first. (A
 * number out of JSON's range, which a schema without `type` would let through, never gets here:
 * every body is refused with one, api/shared/rotas.ts.)
 */
export function validarDados(versao: string, marca: string, esquema: () => Record<string, unknown>, dados: unknown): void {
  const { valores, malFormado } = percorrerDados(dados);
  if (malFormado) {
    throw dadosInvalidos('Os dados têm texto que não é Unicode bem formado.', [{ campo: malFormado, mensagem: 'um surrogate solto (\\ud800 a \\udfff sem o seu par)' }]);
  }
  let compilado = compilados.get(versao);
  if (compilado?.marca !== marca) {
    const lido = esquema();
    compilado = { marca, validar: novoValidador(false).compile(lido), esquema: lido, peso: pesoDoEsquema(lido) };
    compilados.set(versao, compilado);
  }
  if (compilado.validar(dados)) return;
  const todos = valores * compilado.peso <= ERROS_POSSIVEIS_MAXIMO;
  let erros = compilado.validar.errors ?? [];
  if (todos) {
    compilado.todos ??= novoValidador(false, true).compile(compilado.esquema);
    compilado.todos(dados);
    erros = compilado.todos.errors ?? erros;
  }
  throw dadosInvalidos(
    !todos
      ? 'Os dados não seguem o esquema da versão (o primeiro erro abaixo: buscar todos custaria demais com este evento e este esquema).'
      : erros.length > ERROS_LISTADOS
        ? `Os dados não seguem o esquema da versão (${erros.length} erros; os primeiros ${ERROS_LISTADOS} abaixo).`
        : 'Os dados não seguem o esquema da versão.',
    erros.slice(0, ERROS_LISTADOS).map((e) => {
      // a missing, extra or misnamed property is reported at its parent by ajv: name the property itself
      const p = e.params as { missingProperty?: string; additionalProperty?: string; propertyName?: string };
      const propriedade = p.missingProperty ?? p.additionalProperty ?? p.propertyName;
      // the path is a JSON pointer: its `~1` and `~0` are a key's own `/` and `~`
      const caminho = e.instancePath.split('/').slice(1).map((parte) => parte.replace(/~1/g, '/').replace(/~0/g, '~'));
      return { campo: ['dados', ...caminho, ...(propriedade === undefined ? [] : [propriedade])].join('.'), mensagem: e.message ?? 'inválido' };
    }),
  );
}
