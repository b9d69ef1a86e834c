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

test('a rejection nothing handled is logged as a fatal line, and the process closes in order and exits 1', async () => {
  const filho = spawn(
    process.execPath,
    [
      '-r',
      'ts-node/register/transpile-only',
      '-e',
      `const l = require('./lib/lifecycle'); l.encerrarNoSinal();
       l.aoEncerrar('filas', 'fila de teste', async () => console.error('FECHADA'));
       setInterval(() => undefined, 1000);
       Promise.reject(new Error('esquecida')); Promise.reject(new Error('outra'));`,
    ],
    { cwd: path.resolve(__dirname, '../..'), env: { ...process.env, LOG_LEVEL: 'info' }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let saida = '';
  let erros = '';
  filho.stdout.on('data', (d) => (saida += d));
  filho.stderr.on('data', (d) => (erros += d));
  const codigo = await new Promise<number | null>((resolve) => filho.on('exit', resolve));
  expect(codigo).toBe(1);
  const fatais = saida.split('\n').filter(Boolean).map((l) => JSON.parse(l)).filter((l) => l.level === 60);
  expect(fatais.map((l) => [l.msg, l.err.message])).toEqual([
    ['rejeição não tratada', 'esquecida'],
    ['rejeição não tratada', 'outra'],
  ]);
  expect(fatais[0].err.stack).toContain('esquecida');
  // closed once, in order, though two failures came
  expect(erros.match(/FECHADA/g)).toHaveLength(1);
}, 30_000);

test('a failure during a close begun by SIGTERM still makes the exit code 1', async () => {
  const filho = spawn(
    process.execPath,
    [
      '-r',
      'ts-node/register/transpile-only',
      '-e',
      `const l = require('./lib/lifecycle'); l.encerrarNoSinal();
       l.aoEncerrar('filas', 'fila de teste', async () => { Promise.reject(new Error('ao fechar')); await new Promise((r) => setTimeout(r, 100)); });
       setInterval(() => undefined, 1000);
       process.kill(process.pid, 'SIGTERM');`,
    ],
    { cwd: path.resolve(__dirname, '../..'), env: { ...process.env, LOG_LEVEL: 'silent' }, stdio: 'ignore' },
  );
  expect(await new Promise<number | null>((resolve) => filho.on('exit', resolve))).toBe(1);
}, 30_000);
