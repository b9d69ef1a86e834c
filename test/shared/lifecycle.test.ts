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
