import { randomBytes } from 'node:crypto';
import IORedis from 'ioredis';
import { config } from '../../config';
import { encerrar } from '../../lib/lifecycle';
import { conferirConfiguracaoDoRedis, enderecoDoRedis, esperarRedis } from '../../lib/redis';
import { Registro } from '../helpers/registros';

/** What the redis component logs as a warning or at debug level. */
const mockRegistros: Registro[] = [];
jest.mock('../../lib/logger', () => jest.requireActual('../helpers/registros').loggerQueRegistra('redis', ['warn', 'debug'], () => mockRegistros));

/**
 * DESIGN §8: the suite's Redis keeps every key (maxmemory-policy noeviction, which BullMQ needs)
 * and an append-only file. A process checks both when it first reaches Redis, warns about each one
 * that differs, and starts anyway; a Redis that refuses CONFIG (a managed one) is not checked.
 */

const conexoes: IORedis[] = [];
const conectar = (opcoes: { username?: string; password?: string } = {}) => {
  const c = new IORedis(config().redisUrl, { maxRetriesPerRequest: 1, ...opcoes });
  conexoes.push(c);
  return c;
};
const avisosSobre = (configuracao: string) =>
  mockRegistros.filter((r) => r.nivel === 'warn' && (r.args[0] as { configuracao?: string }).configuracao === configuracao);

beforeEach(() => {
  mockRegistros.length = 0;
});
afterAll(async () => {
  // a connection of the removed ACL user is already closed: dropped, not asked to QUIT
  for (const c of conexoes) c.disconnect();
  await encerrar();
});

/**
 * Runs `fazer` with the test Redis's maxmemory-policy set to `politica`, then puts the one it had
 * back. The test Redis has no maxmemory: nothing is evicted whatever the policy.
 */
async function comPolitica(admin: IORedis, politica: string, fazer: () => Promise<unknown>): Promise<void> {
  const [, antes] = (await admin.config('GET', 'maxmemory-policy')) as string[];
  await admin.config('SET', 'maxmemory-policy', politica);
  try {
    await fazer();
  } finally {
    await admin.config('SET', 'maxmemory-policy', antes);
  }
}

test('a maxmemory-policy other than noeviction is named in a warning when the process reaches Redis, which it still uses', async () => {
  await comPolitica(conectar(), 'allkeys-lru', () => esperarRedis());
  expect(avisosSobre('maxmemory-policy')).toEqual([
    {
      nivel: 'warn',
      args: [
        { redis: enderecoDoRedis(), configuracao: 'maxmemory-policy', valor: 'allkeys-lru', esperado: 'noeviction' },
        expect.stringMatching(/^Redis com maxmemory-policy allkeys-lru, não noeviction: .*BullMQ/),
      ],
    },
  ]);
  // checked once a connection: a later wait for the same one reads nothing again
  mockRegistros.length = 0;
  await esperarRedis();
  expect(mockRegistros).toEqual([]);
});

test('noeviction gives no warning about it; the append-only file is warned about when it is off', async () => {
  const c = conectar();
  const [, appendonly] = (await c.config('GET', 'appendonly')) as string[];
  await comPolitica(c, 'noeviction', () => conferirConfiguracaoDoRedis(c));
  expect(avisosSobre('maxmemory-policy')).toEqual([]);
  expect(avisosSobre('appendonly')).toEqual(
    appendonly === 'yes' ? [] : [{ nivel: 'warn', args: [expect.objectContaining({ configuracao: 'appendonly', valor: appendonly, esperado: 'yes' }), expect.any(String)] }],
  );
});

test('a Redis that refuses CONFIG (a managed one) is not checked: a debug line, no warning, no error', async () => {
  const admin = conectar();
  const usuario = `suite-teste-${randomBytes(4).toString('hex')}`;
  const senha = randomBytes(16).toString('hex');
  // every command but CONFIG, as a managed Redis leaves its users
  await admin.call('ACL', 'SETUSER', usuario, 'on', `>${senha}`, '~*', '&*', '+@all', '-config');
  try {
    const gerenciado = conectar({ username: usuario, password: senha });
    await expect(gerenciado.config('GET', 'maxmemory-policy')).rejects.toThrow(/NOPERM/);
    // what would be warned about, were it read
    await comPolitica(admin, 'allkeys-lru', () => conferirConfiguracaoDoRedis(gerenciado));
  } finally {
    await admin.call('ACL', 'DELUSER', usuario);
  }
  expect(mockRegistros).toEqual([
    { nivel: 'debug', args: [expect.objectContaining({ err: expect.objectContaining({ message: expect.stringMatching(/NOPERM/) }) }), expect.stringContaining('CONFIG GET')] },
  ]);
});

test('a Redis older than 7.0 is named in a warning (the signed sales webhooks need SET NX GET); 7 and later are not', async () => {
  const real = conectar();
  const comVersao = (versao: string) =>
    new Proxy(real, { get: (alvo, p) => (p === 'info' ? async () => `# Server\r\nredis_version:${versao}\r\nredis_mode:standalone\r\n` : Reflect.get(alvo, p)) });
  await conferirConfiguracaoDoRedis(comVersao('6.2.14'));
  expect(mockRegistros.filter((r) => r.nivel === 'warn' && (r.args[0] as { versao?: string }).versao)).toEqual([
    { nivel: 'warn', args: [{ redis: enderecoDoRedis(), versao: '6.2.14', minima: '7.0' }, expect.stringMatching(/^Redis 6\.2\.14, anterior a 7\.0: .*SET NX GET/)] },
  ]);
  mockRegistros.length = 0;
  for (const versao of ['7.0.15', '7.2.4', '8.0.0']) await conferirConfiguracaoDoRedis(comVersao(versao));
  expect(mockRegistros.filter((r) => (r.args[0] as { versao?: string }).versao)).toEqual([]);
});
