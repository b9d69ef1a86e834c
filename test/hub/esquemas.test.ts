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
    expect(() => validarDados('tipo:1', '1', numero, { n: 1 })).not.toThrow();
    expect(() => validarDados('tipo:1', '1', numero, { n: 'um' })).toThrow();
    expect(() => validarDados('tipo:1', '2', texto, { n: 'um' })).not.toThrow();
    expect(() => validarDados('tipo:1', '2', texto, { n: 1 })).toThrow();
  });
});
