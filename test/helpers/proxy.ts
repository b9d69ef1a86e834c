import net from 'node:net';

/**
 * A TCP proxy to a real server (the database, Redis) that can go down as a stopped server does:
 * every connection dropped, and a new one dropped as soon as it is made, until it comes back.
 */
export function proxyQueCai(host: string, porta: number) {
  const sockets = new Set<net.Socket>();
  let fora = false;
  const servidor = net.createServer((cliente) => {
    if (fora) return void cliente.destroy();
    const real = net.connect(porta, host);
    cliente.pipe(real).pipe(cliente);
    for (const s of [cliente, real]) {
      sockets.add(s);
      s.on('error', () => [cliente, real].forEach((x) => x.destroy())).on('close', () => {
        sockets.delete(s);
        [cliente, real].forEach((x) => x.destroy());
      });
    }
  });
  return {
    /** The proxy's port on 127.0.0.1. */
    abrir: () => new Promise<number>((r) => servidor.listen(0, '127.0.0.1', () => r((servidor.address() as net.AddressInfo).port))),
    cair: () => {
      fora = true;
      sockets.forEach((s) => s.destroy());
    },
    voltar: () => {
      fora = false;
    },
    fechar: () => {
      sockets.forEach((s) => s.destroy());
      return new Promise<void>((r) => servidor.close(() => r()));
    },
  };
}
