import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { conferirEsquema, validarDados } from '../../api/hub/esquemas';

setFlagsFromString('--expose-gc');
const coletar = runInNewContext('gc') as () => void;

/** A large schema (about 0.5 MB) the strict check refuses, for its unknown keyword. */
const recusado = () => ({
  type: 'object',
  properties: Object.fromEntries(Array.from({ length: 2000 }, (_, i) => [`p${i}`, { type: 'string', description: 'x'.repeat(200) }])),
  desconhecida: 1,
});

describe('event version schemas', () => {
  it('refused schemas are not kept: checking many large ones leaves the heap where it was', () => {
    coletar();
    const antes = process.memoryUsage().heapUsed;
    for (let i = 0; i < 100; i++) expect(() => conferirEsquema(recusado())).toThrow();
    coletar();
    // kept, the hundred would hold about 60 MB
    expect((process.memoryUsage().heapUsed - antes) / 1e6).toBeLessThan(25);
  });

  it('a version changed since it was compiled is compiled again', () => {
    const numero = { type: 'object', properties: { n: { type: 'number' } } };
    const texto = { type: 'object', properties: { n: { type: 'string' } } };
    expect(() => validarDados('tipo:1', '1', () => numero, { n: 1 })).not.toThrow();
    expect(() => validarDados('tipo:1', '1', () => numero, { n: 'um' })).toThrow();
    expect(() => validarDados('tipo:1', '2', () => texto, { n: 'um' })).not.toThrow();
    expect(() => validarDados('tipo:1', '2', () => texto, { n: 1 })).toThrow();
  });

  it('a pattern runs in time linear in the text: a catastrophic one cannot hold the process (ReDoS)', () => {
    const esquema = { type: 'object', properties: { codigo: { type: 'string', pattern: '^(a+)+$' } }, patternProperties: { '^(x+)+y$': { type: 'number' } } };
    expect(() => conferirEsquema(esquema)).not.toThrow();
    const texto = `${'a'.repeat(30)}!`;
    const inicio = performance.now();
    expect(() => validarDados('redos:1', '1', () => esquema, { codigo: texto, [`${'x'.repeat(30)}!`]: 'n' })).toThrow();
    // the native engine takes seconds on this text, and twice as long per extra letter
    expect(performance.now() - inicio).toBeLessThan(500);
    expect(() => validarDados('redos:1', '1', () => esquema, { codigo: 'aaaa', xxy: 1 })).not.toThrow();
    expect(() => validarDados('redos:1', '1', () => esquema, { codigo: 'aab', xxy: 1 })).toThrow();
    expect(() => validarDados('redos:1', '1', () => esquema, { codigo: 'aaaa', xxy: 'um' })).toThrow();
  });

  it('JavaScript escapes in a pattern read as in JavaScript (\\u00e9)', () => {
    const nome = { type: 'string', pattern: '^[A-Za-z\\u00C0-\\u00FF ]+$' };
    expect(() => conferirEsquema(nome)).not.toThrow();
    expect(() => validarDados('escapes:1', '1', () => nome, 'José Antônio')).not.toThrow();
    expect(() => validarDados('escapes:1', '1', () => nome, 'José 2')).toThrow();
  });

  it('a new version with a pattern RE2 does not read (lookahead, back-reference) is refused; a stored one still validates', () => {
    const comLookahead = { type: 'string', pattern: '^(?=.*[0-9]).+$' };
    expect(() => conferirEsquema(comLookahead)).toThrow(
      expect.objectContaining({ tipo: 'dados_invalidos', erros: [{ campo: 'esquema', mensagem: expect.stringContaining('regexp') }] }),
    );
    expect(() => validarDados('antigo:1', '1', () => comLookahead, 'abc1')).not.toThrow();
    expect(() => validarDados('antigo:1', '1', () => comLookahead, 'abc')).toThrow();
  });
});
