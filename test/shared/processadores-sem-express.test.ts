import { ateOFim, compilado, emProcesso } from '../helpers/processo';

/**
 * Processors never import Express (they run in worker processes of their own): loading every
 * processor and queue, as `suite worker` does, loads no module of the express package. Types
 * imported from it are erased; a value imported by a module the processors reach would load it.
 */
test('loading the processors and their queues loads no module of Express', async () => {
  const r = await ateOFim(
    emProcesso([
      '-e',
      `require('reflect-metadata'); require(${JSON.stringify(compilado('jobs'))}); require(${JSON.stringify(compilado('queues'))});
       const express = Object.keys(require.cache).filter((m) => /[\\\\/]node_modules[\\\\/]express[\\\\/]/.test(m));
       console.log(JSON.stringify({ carregados: Object.keys(require.cache).length, express }));
       process.exit(0);`,
    ]),
  );
  expect(r.codigo).toBe(0);
  const { carregados, express } = JSON.parse(r.saida.trim().split('\n').at(-1)!);
  // the processors were loaded (hundreds of modules), and none of Express among them
  expect(carregados).toBeGreaterThan(100);
  expect(express).toEqual([]);
}, 60_000);
