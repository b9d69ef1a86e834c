import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { fullFormats } from 'ajv-formats/dist/formats';
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

  it("an error names the field as the publisher wrote it: a key's own / and ~ are not JSON pointer escapes", () => {
    const esquema = { type: 'object', properties: { 'a/b': { type: 'integer' }, 'c~d': { type: 'object', required: ['e/f'] } } };
    expect(() => conferirEsquema(esquema)).not.toThrow();
    expect(errosDe('ponteiro:1', esquema, { 'a/b': 'x', 'c~d': {} })?.erros).toEqual([
      { campo: 'dados.a/b', mensagem: 'must be integer' },
      { campo: 'dados.c~d.e/f', mensagem: "must have required property 'e/f'" },
    ]);
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

  it('such a pattern in a definition nothing refers to (which ajv never compiles) is refused the same way, not failed', () => {
    for (const esquema of [
      { type: 'object', definitions: { x: { type: 'string', pattern: '(?<=a)b' } } },
      { type: 'object', definitions: { x: { type: 'object', patternProperties: { '(?<=a)b': {} } } } },
    ]) {
      expect(() => conferirEsquema(esquema)).toThrow(
        expect.objectContaining({ tipo: 'dados_invalidos', erros: [{ campo: 'esquema', mensagem: expect.stringContaining('(?<=a)b') }] }),
      );
    }
  });
});

/** The errors validarDados refuses `dados` with, or null when it accepts them. */
function errosDe(versao: string, esquema: Record<string, unknown>, dados: unknown): { detalhe: string; erros: { campo: string; mensagem: string }[] } | null {
  try {
    validarDados(versao, '1', () => esquema, dados);
    return null;
  } catch (err) {
    const e = err as { message: string; erros: { campo: string; mensagem: string }[] };
    return { detalhe: e.message, erros: e.erros };
  }
}

describe('what one event may cost the hub, whatever its data or its schema', () => {
  it('uniqueItems over 40,000 objects takes a moment, not a minute (the pairwise comparison grows with the square); repeats are found whatever their key order', () => {
    const unicos = { type: 'array', uniqueItems: true };
    expect(() => conferirEsquema(unicos)).not.toThrow();
    const inicio = performance.now();
    expect(errosDe('unicos:1', unicos, Array.from({ length: 40_000 }, (_, i) => ({ a: i, b: [i, 'x'] })))).toBeNull();
    expect(performance.now() - inicio).toBeLessThan(5000);
    expect(errosDe('unicos:1', unicos, [{ a: 1, b: { c: [1, 2] } }, 7, { b: { c: [1, 2] }, a: 1 }])?.erros).toEqual([
      { campo: 'dados', mensagem: 'must NOT have duplicate items (items ## 2 and 0 are identical)' },
    ]);
    // values JSON tells apart are different items
    expect(errosDe('unicos:1', unicos, [1, '1', [1], { 0: 1 }, null, false, 0])).toBeNull();
    expect(errosDe('unicos:2', { type: 'object', properties: { l: { type: 'array', uniqueItems: true } } }, { l: [[1, 2], [1, 2]] })?.erros).toEqual([
      { campo: 'dados.l', mensagem: expect.stringContaining('duplicate items') },
    ]);
    expect(errosDe('unicos:3', { type: 'array', uniqueItems: false }, [1, 1])).toBeNull();
  });

  it('the url format runs in time linear in the text (its native expression grows with the square), with the same verdicts', () => {
    const comUrl = { type: 'object', properties: { site: { type: 'string', format: 'url' } } };
    expect(() => conferirEsquema(comUrl)).not.toThrow();
    const inicio = performance.now();
    expect(errosDe('url:1', comUrl, { site: `http://${'a:'.repeat(50_000)} ` })?.erros).toEqual([{ campo: 'dados.site', mensagem: 'must match format "url"' }]);
    // natively, seconds (and minutes for a whole body)
    expect(performance.now() - inicio).toBeLessThan(2000);
    const nativo = fullFormats.url as RegExp;
    const enderecos = [
      'http://example.com', 'https://sub.exemplo.com.br/caminho?q=1#x', 'ftp://arquivos.gov.br:2121/a', 'HTTPS://EXEMPLO.COM', 'http://usuário:senha@exemplo.com',
      'http://8.8.8.8/', 'http://10.0.0.1', 'http://127.0.0.1:8080', 'http://192.168.1.1', 'http://172.16.0.1', 'http://172.32.0.1', 'http://169.254.1.1', 'http://100.64.0.1',
      'http://a@10.0.0.1@b.com', 'http://localhost', 'http://exemplo', 'mailto:a@b.com', 'http://ex ample.com', 'http://exemplo.com:1', 'http://exemplo.com:123456',
      'http://münchen.de', 'http://-a.com', 'http://a-.com', 'http://223.1.1.1', 'http://224.1.1.1', 'http://1.1.1.255', '', 'http://',
      // a reserved address in the path, after an @: the native engine finds the parse without userinfo
      'http://example.com/a@10.0.0.1', 'http://8.8.8.8/x@10.0.0.1', 'http://u@ex.com:80/@127.0.0.1:8080', 'http://172.016.1.1', 'http://169.2540.1.1',
      // JavaScript's \s is Unicode: these spaces are refused where it says \S
      'http://a\u00a0b@ex.com', 'http://ex.com/\u2003', 'http://ex.com/\ufeff', 'http://ex.com/a\vb',
    ];
    for (const e of enderecos) expect([e, errosDe('url:1', comUrl, { site: e }) === null]).toEqual([e, nativo.test(e)]);
  });

  it('enum and const take time that grows with the value, not with the list; values compare as JSON, whatever their key order', () => {
    const nomes = Array.from({ length: 10_000 }, (_, i) => `municipio-${i}`);
    const lista = { type: 'array', items: { enum: nomes } };
    expect(() => conferirEsquema(lista)).not.toThrow();
    const inicio = performance.now();
    expect(errosDe('enum:1', lista, Array.from({ length: 40_000 }, (_, i) => nomes[(i * 7) % 10_000]))).toBeNull();
    // ajv's own comparison, one allowed value after another: 1.5 s on an idle machine
    expect(performance.now() - inicio).toBeLessThan(500);
    expect(errosDe('enum:1', lista, ['municipio-1', 'municipio-10000'])?.erros).toEqual([{ campo: 'dados.1', mensagem: 'must be equal to one of the allowed values' }]);
    const misto = { enum: [1, 'um', null, { a: 1, b: [1, 2] }] };
    for (const v of [1, 1.0, 'um', null, { b: [1, 2], a: 1 }]) expect(errosDe('enum:2', misto, v)).toBeNull();
    for (const v of ['1', 2, false, { a: 1 }, [1], { a: 1, b: [2, 1] }]) expect(errosDe('enum:2', misto, v)).not.toBeNull();
    const fixo = { type: 'array', items: { const: { tipo: 'x', n: [1, 2] } } };
    expect(errosDe('const:1', fixo, [{ n: [1, 2], tipo: 'x' }, { tipo: 'x', n: [1, 2] }])).toBeNull();
    expect(errosDe('const:1', fixo, [{ tipo: 'x', n: [1, 2] }, { tipo: 'x' }])?.erros).toEqual([{ campo: 'dados.1', mensagem: 'must be equal to constant' }]);
    expect(errosDe('const:2', { const: 0 }, 0)).toBeNull();
    expect(errosDe('const:2', { const: 0 }, '0')).not.toBeNull();
  });

  it('an event that could have a great many errors gets the first alone, at once and without the memory every one would take', () => {
    const obrigatorios = Array.from({ length: 20 }, (_, i) => `campo${i}`);
    const itens = { type: 'array', items: { type: 'object', required: obrigatorios } };
    coletar();
    const antes = process.memoryUsage().heapUsed;
    const inicio = performance.now();
    const r = errosDe('muitos:1', itens, Array.from({ length: 20_000 }, () => ({})));
    const pico = process.memoryUsage().heapUsed - antes;
    expect(r?.erros).toEqual([{ campo: 'dados.0.campo0', mensagem: "must have required property 'campo0'" }]);
    expect(r?.detalhe).toContain('o primeiro erro');
    // every error: 400,000 of them, 72 MB and most of a second
    expect(performance.now() - inicio).toBeLessThan(500);
    expect(pico / 1e6).toBeLessThan(20);
    // a small event still gets every one
    const poucos = errosDe('muitos:1', itens, [{}, { campo0: 1 }]);
    expect(poucos?.erros).toHaveLength(39);
    expect(poucos?.detalhe).toBe('Os dados não seguem o esquema da versão.');
    // the errors a schema may bring count each $ref as the schema it names: 13 levels doubling
    // (accepted: 8,192 schemas) give one empty object thousands, and 284 of them millions (18 s)
    const definitions: Record<string, unknown> = { d0: { type: 'object', required: ['x'] } };
    for (let i = 1; i <= 13; i++) definitions[`d${i}`] = { allOf: [{ $ref: `#/definitions/d${i - 1}` }, { $ref: `#/definitions/d${i - 1}` }] };
    const cadeia = { type: 'array', items: { $ref: '#/definitions/d13' }, definitions };
    expect(() => conferirEsquema(cadeia)).not.toThrow();
    const inicioDaCadeia = performance.now();
    expect(errosDe('muitos:2', cadeia, Array.from({ length: 284 }, () => ({})))?.erros).toHaveLength(1);
    expect(performance.now() - inicioDaCadeia).toBeLessThan(500);
    // a long list of allowed values brings one error per value, not one per entry: every error still looked for
    const municipio = { type: 'object', required: ['municipio', 'uf'], properties: { municipio: { enum: Array.from({ length: 10_000 }, (_, i) => `m${i}`) } } };
    expect(errosDe('muitos:3', municipio, { municipio: 'x' })?.erros.map((e) => e.campo)).toEqual(['dados.uf', 'dados.municipio']);
  });

  it("a property named as an object's built-in (constructor, toString) is the event's own: required, it must be sent; optional, it may be left out", () => {
    expect(errosDe('proprias:1', { type: 'object', required: ['constructor', 'toString'] }, {})?.erros.map((e) => e.campo)).toEqual(['dados.constructor', 'dados.toString']);
    expect(errosDe('proprias:1', { type: 'object', required: ['constructor', 'toString'] }, { constructor: 1, toString: 2 })).toBeNull();
    expect(errosDe('proprias:2', { type: 'object', properties: { constructor: { type: 'string' } } }, {})).toBeNull();
  });

  it('a schema whose refs double the work at each level is refused when the version is created', () => {
    const cadeia = (niveis: number) => {
      const definitions: Record<string, unknown> = { d0: { type: 'object' } };
      for (let i = 1; i <= niveis; i++) definitions[`d${i}`] = { allOf: [{ $ref: `#/definitions/d${i - 1}` }, { $ref: `#/definitions/d${i - 1}` }] };
      return { definitions, $ref: `#/definitions/d${niveis}` };
    };
    const inicio = performance.now();
    expect(() => conferirEsquema(cadeia(40))).toThrow(
      expect.objectContaining({ tipo: 'dados_invalidos', erros: [{ campo: 'esquema', mensagem: expect.stringContaining('100000 esquemas') }] }),
    );
    expect(performance.now() - inicio).toBeLessThan(5000);
    expect(() => conferirEsquema(cadeia(10))).not.toThrow();
    // values are not schemas: a `$ref` inside `const` or `examples` names nothing, however written
    expect(() => conferirEsquema({ type: 'object', const: { $ref: '#/%E0%A4%A' }, examples: [{ $ref: '#/definitions/x' }] })).not.toThrow();
  });

  it('a small schema whose many refs name one large definition is refused before it is compiled (ajv would copy the definition into each)', () => {
    const propriedades = (n: number, valor: (i: number) => unknown) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`p${i}`, valor(i)]));
    const leque = { definitions: { grande: { type: 'object', properties: propriedades(1000, () => ({ type: 'string' })) } }, type: 'object', properties: propriedades(1000, () => ({ $ref: '#/definitions/grande' })) };
    const inicio = performance.now();
    expect(() => conferirEsquema(leque)).toThrow(
      expect.objectContaining({ tipo: 'dados_invalidos', erros: [{ campo: 'esquema', mensagem: expect.stringContaining('100000 esquemas') }] }),
    );
    expect(performance.now() - inicio).toBeLessThan(1000);
  });

  it('nor can a schema get past that count: recursion (its cost grows with the depth of the data), refs by anchor or by another $id, a malformed pointer', () => {
    const recusado = (esquema: Record<string, unknown>, motivo: string) =>
      expect(() => conferirEsquema(esquema)).toThrow(expect.objectContaining({ tipo: 'dados_invalidos', erros: [{ campo: 'esquema', mensagem: expect.stringContaining(motivo) }] }));
    // two refs back to the root, side by side: each level of nesting of the data doubles the work
    recusado({ definitions: { n: { type: 'object', properties: { a: { allOf: [{ $ref: '#/definitions/n' }, { $ref: '#/definitions/n' }] } } } }, $ref: '#/definitions/n' }, 'recursivos');
    expect(() => conferirEsquema({ $id: 'http://exemplo.test/r', type: 'object', properties: { a: { allOf: [{ $ref: '#' }, { $ref: '#' }] } } })).toThrow(
      expect.objectContaining({ tipo: 'dados_invalidos' }),
    );
    recusado({ definitions: { no: { type: 'object', properties: { filhos: { type: 'array', items: { $ref: '#/definitions/no' } } } } }, $ref: '#/definitions/no' }, 'recursivos');
    const porAncora: Record<string, unknown> = { definitions: { d0: { $id: '#d0', type: 'object' }, d1: { $id: '#d1', allOf: [{ $ref: '#d0' }, { $ref: '#d0' }] } }, $ref: '#d1' };
    expect(() => conferirEsquema(porAncora)).toThrow(expect.objectContaining({ tipo: 'dados_invalidos' }));
    recusado({ $id: 'http://exemplo.test/s', definitions: { d: { type: 'object' } }, $ref: 'http://exemplo.test/s#/definitions/d' }, 'só referências dentro do esquema');
    recusado({ definitions: { x: { $ref: '#/%E0%A4%A' }, y: { type: 'string' } }, type: 'object' }, 'ponteiro JSON');
    // a long chain of refs (a 0.8 MB body) is refused with its reason, not walked until the stack overflows
    const corrente = (elos: number) => ({
      definitions: Object.fromEntries(Array.from({ length: elos }, (_, i) => [`a${i}`, i === elos - 1 ? { type: 'string' } : { $ref: `#/definitions/a${i + 1}` }])),
      $ref: '#/definitions/a0',
    });
    recusado(corrente(20_000), 'mais de 1000 esquemas um dentro do outro');
    expect(() => conferirEsquema(corrente(400))).not.toThrow();
    // a root $id is fine, as are refs by pointer to a shared definition
    expect(() => conferirEsquema({ $id: 'http://exemplo.test/ok', definitions: { cep: { type: 'string' } }, properties: { a: { $ref: '#/definitions/cep' }, b: { $ref: '#/definitions/cep' } } })).not.toThrow();
  });

  it('a pattern too large for RE2 to run cheaply on every character is refused when the version is created; the usual ones are not', () => {
    for (const padrao of [`${'.{0,1000}'.repeat(20)}[bc]d`, '.{0,1000}'.repeat(3)]) {
      // RE2 refuses to build it, or it would cost more than the sum allowed
      expect(() => conferirEsquema({ type: 'string', pattern: padrao })).toThrow(
        expect.objectContaining({ erros: [{ campo: 'esquema', mensagem: expect.stringMatching(/too large|instruções do RE2/) }] }),
      );
      expect(() => conferirEsquema({ type: 'object', patternProperties: { [padrao]: { type: 'number' } } })).toThrow(expect.objectContaining({ tipo: 'dados_invalidos' }));
    }
    // many patterns each under the cap, all applying to one string: their sum is held too
    const muitos = { type: 'string', allOf: Array.from({ length: 6 }, (_, i) => ({ pattern: `.{0,${990 + i}}[bc]d` })) };
    expect(() => conferirEsquema(muitos)).toThrow(expect.objectContaining({ erros: [{ campo: 'esquema', mensagem: expect.stringContaining('somam') }] }));
    expect(() => conferirEsquema({ type: 'object', properties: { c: { type: 'string', pattern: '^.{1,255}$' }, d: { type: 'string', pattern: '^.{0,1000}$' } }, patternProperties: { '^x_[a-z]{1,50}$': { type: 'number' } } })).not.toThrow();
  });

  it('text that is not well-formed Unicode (a lone surrogate) is refused wherever it is, before the schema; a well-formed pair (an emoji) is text like any other', () => {
    const livre = { type: 'object' };
    expect(errosDe('unicode:1', livre, { a: [{ b: 'ok' }, { c: 'x\ud800' }] })?.erros).toEqual([{ campo: 'dados.a.1.c', mensagem: expect.stringContaining('surrogate') }]);
    expect(errosDe('unicode:1', livre, { ['\udc00']: 1 })?.erros).toEqual([{ campo: 'dados', mensagem: expect.stringContaining('surrogate') }]);
    expect(errosDe('unicode:1', livre, { a: 'sorriso \u{1F600}', b: ['\ud83d\ude00'] })).toBeNull();
  });

  it('an answer lists the first 100 schema errors and says how many there were', () => {
    const r = errosDe('erros:1', { type: 'array', items: { type: 'string' } }, Array.from({ length: 5000 }, () => 0));
    expect(r?.erros).toHaveLength(100);
    expect(r?.erros[99]).toEqual({ campo: 'dados.99', mensagem: 'must be string' });
    expect(r?.detalhe).toContain('5000 erros');
  });
});
