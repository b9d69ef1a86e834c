import { ChildProcess } from 'node:child_process';
import net from 'node:net';

/** A loopback port free right now, for a server a test starts later (a child process's API). */
export async function portaLivre(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const porta = (s.address() as net.AddressInfo).port;
  await new Promise((r) => s.close(r));
  return porta;
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
