import net from 'node:net';
import { resetConfig } from '../../config';
import { encerrar } from '../../lib/lifecycle';
import { esperarRedis, redis } from '../../lib/redis';

/**
 * A Redis (or a proxy in front of one) that connects but never answers CONFIG: the settings check
 * of esperarRedis gives up after its own short wait, and the process starts.
 */

/** Speaks just enough RESP for ioredis to connect (INFO, and +OK to the rest); CONFIG is left unanswered. */
function redisSemConfig(): Promise<{ porta: number; configs: number; fechar: () => void }> {
  const sockets: net.Socket[] = [];
  const estado = { configs: 0 };
  const srv = net.createServer((s) => {
    sockets.push(s);
    s.on('data', (d) => {
      for (const comando of d.toString().split('*').filter(Boolean)) {
        const nome = (comando.split('\r\n')[2] ?? '').toUpperCase();
        if (nome === 'INFO') {
          const info = 'redis_version:7.0.15\r\nloading:0\r\n';
          s.write(`$${Buffer.byteLength(info)}\r\n${info}\r\n`);
        } else if (nome === 'CONFIG') estado.configs++;
        else s.write('+OK\r\n');
      }
    });
  });
  return new Promise((ok) =>
    srv.listen(0, '127.0.0.1', () =>
      ok({
        porta: (srv.address() as net.AddressInfo).port,
        get configs() {
          return estado.configs;
        },
        fechar: () => (sockets.forEach((s) => s.destroy()), srv.close()),
      }),
    ),
  );
}

const urlAntes = process.env.REDIS_URL;
afterAll(() => {
  if (urlAntes === undefined) delete process.env.REDIS_URL;
  else process.env.REDIS_URL = urlAntes;
  resetConfig();
});

test('a Redis that never answers CONFIG GET does not hold up the start: esperarRedis returns within a few seconds', async () => {
  const falso = await redisSemConfig();
  process.env.REDIS_URL = `redis://127.0.0.1:${falso.porta}`;
  resetConfig();
  try {
    const inicio = Date.now();
    let limite: NodeJS.Timeout | undefined;
    const resultado = await Promise.race([
      esperarRedis('produtor', 1000).then(() => 'pronto'),
      new Promise((ok) => (limite = setTimeout(() => ok('ainda esperando'), 6000))),
    ]);
    clearTimeout(limite);
    expect(falso.configs).toBeGreaterThan(0);
    expect(resultado).toBe('pronto');
    expect(Date.now() - inicio).toBeLessThan(4000);
  } finally {
    // its CONFIG never answered, the connection is dropped rather than asked to QUIT
    redis('produtor').disconnect();
    await encerrar();
    falso.fechar();
  }
}, 15_000);
