import { aoComecarOEncerramento, aoEncerrar, emSegundoPlano, encerrar } from '../../lib/lifecycle';
import { esperarAte } from '../helpers/espera';
import { ateOFim, compilado, emProcesso } from '../helpers/processo';

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

test('a part opened after the shutdown under way reached its stage (a start still going on) is closed at once; one of a later stage in its turn', async () => {
  const fechados: string[] = [];
  let liberarOBanco: (() => void) | undefined;
  aoEncerrar('bancos', 'banco lento', () => new Promise<void>((r) => (liberarOBanco = r)));
  const encerramento = encerrar();
  await esperarAte(() => liberarOBanco !== undefined, 'the shutdown at the databases stage');
  // a server slow to close: the later stages wait for it, as for one closed in its turn
  aoEncerrar('http', 'servidor tardio', async () => {
    fechados.push('http começou');
    await new Promise((r) => setTimeout(r, 300));
    fechados.push('http');
  });
  aoEncerrar('workers', 'worker tardio', async () => void fechados.push('workers'));
  aoComecarOEncerramento(async () => void fechados.push('pausa do worker'));
  aoEncerrar('redis', 'redis tardio', async () => void fechados.push('redis'));
  expect(fechados).toEqual(['http começou', 'workers', 'pausa do worker']);
  liberarOBanco!();
  await encerramento;
  expect(fechados).toEqual(['http começou', 'workers', 'pausa do worker', 'http', 'redis']);
  // the shutdown over, a part opened now waits for the next one
  aoEncerrar('http', 'servidor depois', async () => void fechados.push('http depois'));
  expect(fechados).toHaveLength(5);
  await encerrar();
  expect(fechados).toHaveLength(6);
});

test('a closer or a start-of-shutdown action that throws at once is logged like one that rejects: the later stages still close', async () => {
  const fechados: string[] = [];
  const deImediato = (() => {
    throw new Error('falha de imediato');
  }) as () => Promise<unknown>;
  aoComecarOEncerramento(deImediato);
  aoEncerrar('filas', 'fila que falha de imediato', deImediato);
  aoEncerrar('redis', 'redis', async () => void fechados.push('redis'));
  await encerrar();
  expect(fechados).toEqual(['redis']);
});

/**
 * A node process running `codigo` after `const l = require(<lib/lifecycle, compiled>); l.encerrarNoSinal();`,
 * kept alive by a timer: its exit code and what it wrote.
 */
function processoCom(codigo: string, logLevel = 'silent'): Promise<{ codigo: number | null; saida: string; erros: string }> {
  return ateOFim(
    emProcesso(['-e', `const l = require(${JSON.stringify(compilado('lib/lifecycle'))}); l.encerrarNoSinal(); setInterval(() => undefined, 1000); ${codigo}`], { ...process.env, LOG_LEVEL: logLevel }),
  );
}

test('on SIGTERM the process exits with the code it had set: a command stopped before it succeeded exits non-zero', async () => {
  expect((await processoCom("process.exitCode = 1; process.kill(process.pid, 'SIGTERM');")).codigo).toBe(1);
  expect((await processoCom("process.kill(process.pid, 'SIGTERM');")).codigo).toBe(0);
}, 30_000);

test('a rejection nothing handled is logged as a fatal line, and the process closes once and exits 1', async () => {
  const { codigo, saida, erros } = await processoCom(
    `l.aoEncerrar('filas', 'fila de teste', async () => console.error('FECHADA'));
     Promise.reject(new Error('esquecida')); Promise.reject(new Error('outra'));`,
    'info',
  );
  expect(codigo).toBe(1);
  const fatais = saida.split('\n').filter(Boolean).map((l) => JSON.parse(l)).filter((l) => l.level === 60);
  // both logged; in which order Node reports two rejections of one tick is Node's affair
  expect(fatais.map((l) => [l.msg, l.err.message]).sort()).toEqual([
    ['rejeição não tratada', 'esquecida'],
    ['rejeição não tratada', 'outra'],
  ]);
  expect(fatais.find((l) => l.err.message === 'esquecida').err.stack).toContain('esquecida');
  // closed once, though two failures came
  expect(erros.match(/FECHADA/g)).toHaveLength(1);
}, 30_000);

test('a failure during a close begun by SIGTERM still makes the exit code 1', async () => {
  const { codigo } = await processoCom(
    `l.aoEncerrar('filas', 'fila de teste', async () => { Promise.reject(new Error('ao fechar')); await new Promise((r) => setTimeout(r, 100)); });
     process.kill(process.pid, 'SIGTERM');`,
  );
  expect(codigo).toBe(1);
}, 30_000);

test('a second signal during the close (a Ctrl-C reaching npm and the process it passes it on to) lets the close finish and exit 0', async () => {
  const { codigo, erros } = await processoCom(
    `l.aoEncerrar('filas', 'fila de teste', async () => { await new Promise((r) => setTimeout(r, 300)); console.error('FECHADA'); });
     process.kill(process.pid, 'SIGINT');
     setTimeout(() => process.kill(process.pid, 'SIGINT'), 50);
     setTimeout(() => process.kill(process.pid, 'SIGTERM'), 100);`,
  );
  expect(codigo).toBe(0);
  expect(erros.match(/FECHADA/g)).toHaveLength(1);
}, 30_000);

test('a signal given a while into the close is someone who will not wait: the process ends at once, exiting 1', async () => {
  const inicio = Date.now();
  const { codigo, erros } = await processoCom(
    `l.aoEncerrar('filas', 'fila de teste', async () => { await new Promise((r) => setTimeout(r, 4000)); console.error('FECHADA'); });
     process.kill(process.pid, 'SIGTERM');
     setTimeout(() => process.kill(process.pid, 'SIGINT'), 2000);`,
  );
  expect(codigo).toBe(1);
  expect(erros).not.toContain('FECHADA');
  expect(Date.now() - inicio).toBeLessThan(10_000);
}, 30_000);

test('a signal during a close a failure began lets that close finish (exit 1 all the same)', async () => {
  const { codigo, erros } = await processoCom(
    `l.aoEncerrar('filas', 'fila de teste', async () => { await new Promise((r) => setTimeout(r, 2500)); console.error('FECHADA'); });
     Promise.reject(new Error('esquecida'));
     setTimeout(() => process.kill(process.pid, 'SIGTERM'), 1500);`,
  );
  expect(codigo).toBe(1);
  expect(erros).toContain('FECHADA');
}, 30_000);

test('a close that never ends is cut short by the forced exit, whose log line names the part that held it', async () => {
  const { codigo, saida } = await processoCom(
    `l.aoEncerrar('bancos', 'banco de teste', () => new Promise(() => undefined));
     l.aoEncerrar('bancos', 'banco que fecha', async () => undefined);
     process.kill(process.pid, 'SIGTERM');`,
    'info',
  );
  expect(codigo).toBe(1);
  const forcada = saida.split('\n').filter(Boolean).map((l) => JSON.parse(l)).find((l) => l.msg === 'encerramento passou do prazo: saída forçada');
  expect(forcada).toMatchObject({ level: 50, fechando: ['banco de teste'] });
}, 30_000);
