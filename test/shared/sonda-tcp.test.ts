import { readFile } from 'node:fs/promises';
import type { Socket } from 'node:net';
import { createConnection } from 'mysql2/promise';
import { config } from '../../config';
import { abrirBanco, apagarBanco, banco, criarBanco, servidorDaUrl } from '../../lib/database';
import { encerrar } from '../../lib/lifecycle';
import { esperarRedis, novaConexaoRedis, redis } from '../../lib/redis';
import { SONDA_DA_CONEXAO_MS } from '../../lib/tcp';

/**
 * The suite's connections to MariaDB and Redis send TCP keep-alive probes after
 * SONDA_DA_CONEXAO_MS without traffic (lib/tcp.ts), not after the system's two hours: read from
 * the kernel's own table of this machine's TCP connections, the keep-alive timer of each.
 */

/**
 * Seconds until the next keep-alive probe of the established TCP connection `socket`, or null when
 * another timer runs. Matched by both ports: another connection may share the local one (to another
 * peer), and closed ones linger in TIME_WAIT.
 */
async function proximaSonda(socket: Socket): Promise<number | null> {
  const porta = (endereco: string) => parseInt(endereco.split(':').at(-1)!, 16);
  for (const arquivo of ['/proc/net/tcp', '/proc/net/tcp6']) {
    for (const linha of (await readFile(arquivo, 'utf8')).split('\n').slice(1)) {
      // sl local_address rem_address st tx_queue:rx_queue tr:tm->when ...; st 01 is established
      const campos = linha.trim().split(/\s+/);
      if (campos.length < 6 || campos[3] !== '01' || porta(campos[1]) !== socket.localPort || porta(campos[2]) !== socket.remotePort) continue;
      const [timer, quando] = campos[5].split(':');
      // timer 2 is keep-alive; its time in clock ticks, 100 a second
      return timer === '02' ? parseInt(quando, 16) / 100 : null;
    }
  }
  throw new Error(`no established TCP connection from local port ${socket.localPort} to ${socket.remotePort}`);
}

const esperado = SONDA_DA_CONEXAO_MS / 1000;
// a database reached through its Unix socket has no TCP to probe
const porTcp = !servidorDaUrl(config().mysqlUrl).socketPath;

afterAll(async () => {
  await apagarBanco('tracing');
  await encerrar();
});

(porTcp ? test : test.skip)('MariaDB: a connection of the services\' pools (mysql2, as MYSQL_URL gives it) and one of Sequelize', async () => {
  const direta = await createConnection(servidorDaUrl(config().mysqlUrl));
  try {
    await direta.query('SELECT 1');
    const segundos = await proximaSonda((direta as unknown as { connection: { stream: Socket } }).connection.stream);
    expect(segundos).toBeGreaterThan(0);
    expect(segundos).toBeLessThanOrEqual(esperado);
  } finally {
    await direta.end();
  }

  await criarBanco('tracing');
  const sequelize = await abrirBanco('tracing', []);
  expect(sequelize).toBe(banco('tracing'));
  const conexao = (await sequelize.connectionManager.getConnection({ type: 'read' })) as unknown as { stream: Socket };
  try {
    const segundos = await proximaSonda(conexao.stream);
    expect(segundos).toBeGreaterThan(0);
    expect(segundos).toBeLessThanOrEqual(esperado);
  } finally {
    sequelize.connectionManager.releaseConnection(conexao as never);
  }
});

test('Redis: a producer\'s connection and a worker\'s', async () => {
  await esperarRedis('produtor');
  const worker = novaConexaoRedis('worker', 'teste-sonda');
  await worker.ping();
  for (const conexao of [redis('produtor'), worker]) {
    const segundos = await proximaSonda((conexao as unknown as { stream: Socket }).stream);
    expect(segundos).toBeGreaterThan(0);
    expect(segundos).toBeLessThanOrEqual(esperado);
  }
});
