import { resetConfig } from '../../config';
import { encerrar } from '../../lib/lifecycle';
import { enderecoDoRedis, esperarRedis } from '../../lib/redis';
import { portaLivre } from '../helpers/processo';

/** Messages about Redis name its host and port, never the password of REDIS_URL (it reaches the logs). */

afterAll(async () => {
  await encerrar();
  // ioredis leaves the timer of a reconnection under way running after disconnect (about 2 s):
  // let it end here rather than hold the jest worker past its exit
  await new Promise((r) => setTimeout(r, 2200));
});

test('a Redis that does not answer is named by host and port only, with the reason of its last error', async () => {
  const porta = await portaLivre();
  process.env.REDIS_URL = `redis://:Senha-Secreta-1@127.0.0.1:${porta}`;
  resetConfig();
  expect(enderecoDoRedis()).toBe(`127.0.0.1:${porta}`);
  const erro = await esperarRedis('produtor', 300).then(() => undefined, (e: Error) => e);
  expect(erro?.message).toBe(`Redis did not answer at 127.0.0.1:${porta}: connect ECONNREFUSED 127.0.0.1:${porta}`);
  expect(JSON.stringify(erro, Object.getOwnPropertyNames(erro))).not.toContain('Senha-Secreta-1');
});
