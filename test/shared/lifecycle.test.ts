import { spawn } from 'node:child_process';
import path from 'node:path';
import { aoEncerrar, emSegundoPlano, encerrar } from '../../lib/lifecycle';

/**
 * Work a request leaves running after its answer (emSegundoPlano) is waited for by the shutdown
 * before the queues and databases it uses close, within SHUTDOWN_GRACE_MS (2 s in the tests).
 */

test('the queues close only once the work left running has ended', async () => {
  const ordem: string[] = [];
  aoEncerrar('filas', 'fila de teste', async () => void ordem.push('filas fechadas'));
  emSegundoPlano(new Promise((r) => setTimeout(r, 300)).then(() => ordem.push('trabalho terminado')));
  emSegundoPlano(Promise.reject(new Error('a failure is the work’s own to log')));
  await encerrar();
  expect(ordem).toEqual(['trabalho terminado', 'filas fechadas']);
});

test('work that does not end holds the shutdown no longer than its grace period', async () => {
  let fechadas = false;
  aoEncerrar('filas', 'fila de teste', async () => void (fechadas = true));
  emSegundoPlano(new Promise(() => undefined));
  const inicio = Date.now();
  await encerrar();
  expect(fechadas).toBe(true);
  expect(Date.now() - inicio).toBeGreaterThanOrEqual(1900);
  expect(Date.now() - inicio).toBeLessThan(3500);
});

test('on SIGTERM the process exits with the code it had set: a command stopped before it succeeded exits non-zero', async () => {
  const saida = (codigo: string) =>
    new Promise<number | null>((resolve) => {
      const filho = spawn(
        process.execPath,
        ['-r', 'ts-node/register/transpile-only', '-e', `require('./lib/lifecycle').encerrarNoSinal(); ${codigo} setInterval(() => undefined, 1000); process.kill(process.pid, 'SIGTERM');`],
        { cwd: path.resolve(__dirname, '../..'), env: { ...process.env, LOG_LEVEL: 'silent' }, stdio: 'ignore' },
      );
      filho.on('exit', (c) => resolve(c));
    });
  expect(await saida('process.exitCode = 1;')).toBe(1);
  expect(await saida('')).toBe(0);
}, 30_000);
