import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { NOMES_DOS_SERVICOS } from '../../config/services';
import { ateOFim, compilado, emProcesso } from '../helpers/processo';
import { limparDados } from '../helpers/suite';

/**
 * A one-shot command that has done its work and closed what it opened exits, even when something
 * still holds the event loop (a connection whose close could not finish, Redis away): here a timer
 * loaded before the suite stands for it. It used to hold the command, and whatever ran it, for ever.
 */

const dir = mkdtempSync(path.join(tmpdir(), 'comando-preso-'));
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  await limparDados(NOMES_DOS_SERVICOS);
});

test('`suite migrate` with a handle left open: done, it exits 0 within seconds, saying why', async () => {
  const preso = path.join(dir, 'preso.js');
  writeFileSync(preso, 'setInterval(() => undefined, 60_000);\n');
  const inicio = Date.now();
  const { codigo, erros } = await ateOFim(emProcesso(['--require', preso, compilado('suite.js'), 'migrate'], { ...process.env, LOG_LEVEL: 'warn' }));
  expect({ codigo, erros: erros.split('\n').filter((l) => l.includes('"level":5') || l.includes('"level":6')) }).toEqual({ codigo: 0, erros: [] });
  expect(erros).toContain('o comando terminou, mas algo ainda prendia o processo');
  expect(Date.now() - inicio).toBeLessThan(40_000);
}, 60_000);
