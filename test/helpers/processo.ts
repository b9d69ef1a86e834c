import { ChildProcess, ChildProcessByStdio, spawn } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { Readable } from 'node:stream';

const RAIZ = path.resolve(__dirname, '../..');

/** A module of the suite as jest's global setup compiled it for this run (`compilado('lib/lifecycle')`). */
export function compilado(modulo: string): string {
  if (!process.env.SUITE_TESTES_DIR) throw new Error('no compiled suite: tests run under jest, whose global setup compiles it');
  return path.join(process.env.SUITE_TESTES_DIR, 'compilado', modulo);
}

/**
 * `node <args>` from the project's root, its output piped; the suite's code runs compiled
 * (`compilado`), and finds its packages in the project's node_modules through NODE_PATH.
 */
export function emProcesso(args: string[], env: NodeJS.ProcessEnv = process.env): ChildProcessByStdio<null, Readable, Readable> {
  const NODE_PATH = [path.join(RAIZ, 'node_modules'), env.NODE_PATH].filter(Boolean).join(path.delimiter);
  return spawn(process.execPath, args, { cwd: RAIZ, env: { ...env, NODE_PATH }, stdio: ['ignore', 'pipe', 'pipe'] });
}

/** A suite command as an operator runs it, compiled as `npm start` runs it: `['worker', 'hub-entrega']`. */
export const comandoDaSuite = (args: string[], env: NodeJS.ProcessEnv = process.env) => emProcesso([compilado('suite.js'), ...args], env);

/**
 * A process run to its end: its exit code, and what it wrote on stdout and on stderr (on `close`,
 * once both are read to their end: `exit` may come before the last of them).
 */
export function ateOFim(filho: ChildProcessByStdio<null, Readable, Readable>): Promise<{ codigo: number | null; saida: string; erros: string }> {
  let saida = '';
  let erros = '';
  filho.stdout.on('data', (d) => (saida += d));
  filho.stderr.on('data', (d) => (erros += d));
  return new Promise((resolve) => filho.on('close', (codigo) => resolve({ codigo, saida, erros })));
}

/** Ports this test file was given: the system may hand a closed one out again at once. */
const dadas = new Set<number>();

/**
 * A loopback port free right now, for a server a test starts later (a child process's API), and
 * never one given before in this file: two of a test's servers once got the same one. Drawn below
 * the system's ephemeral range (32768 and up on Linux), which every `listen(0)` and outgoing
 * connection of the other test worker takes from: one of those could take a port between this
 * answer and the test's own listen.
 */
export async function portaLivre(): Promise<number> {
  for (;;) {
    const porta = 20_000 + Math.floor(Math.random() * 12_000);
    if (dadas.has(porta)) continue;
    const s = net.createServer();
    const livre = await new Promise<boolean>((r) => {
      s.once('error', () => r(false));
      s.listen(porta, '127.0.0.1', () => r(true));
    });
    if (!livre) continue;
    await new Promise((r) => s.close(r));
    dadas.add(porta);
    return porta;
  }
}

/** Waits until `url/pronto` answers 200; fails at once, with its output, if `filho` exits first. */
export async function esperarPronto(url: string, filho?: { processo: ChildProcess; saida: string }, prazo = 60_000) {
  const fim = Date.now() + prazo;
  for (;;) {
    if (filho && filho.processo.exitCode !== null) throw new Error(`the process of ${url} exited (${filho.processo.exitCode}): ${filho.saida}`);
    try {
      if ((await fetch(`${url}/pronto`)).status === 200) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > fim) throw new Error(`${url} never became ready${filho ? `: ${filho.saida}` : ''}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
