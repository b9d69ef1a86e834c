import { config } from '../../config';
import { migrar } from '../../lib/database';
import { esperarRedis, redis } from '../../lib/redis';
import { MIGRACOES_LEADS } from '../../models/leads/migracoes';
import { bancoAntesDaMigracao } from '../helpers/migracoes';

/**
 * Migration 0006: the generation's Redis counter of before 0005, which nothing reads any more,
 * leaves Redis, once; run again (a database made again beside the same Redis), it does nothing.
 */
const banco = bancoAntesDaMigracao('leads', MIGRACOES_LEADS, '0006-geracao-antiga-fora-do-redis');
const chaveAntiga = () => `${config().queuePrefix}:leads:geracao`;

beforeAll(() => Promise.all([banco.abrir(), esperarRedis()]));
afterAll(() => banco.apagar());

test('0006 deletes the old generation key, and runs again on a Redis without it', async () => {
  await redis().set(chaveAntiga(), '7');
  // it and those after it
  const desde = MIGRACOES_LEADS.slice(MIGRACOES_LEADS.findIndex((m) => m.name === '0006-geracao-antiga-fora-do-redis')).map((m) => m.name);
  expect(await migrar('leads', MIGRACOES_LEADS)).toEqual(desde);
  expect(await redis().exists(chaveAntiga())).toBe(0);

  await banco.q("DELETE FROM schema_migracoes WHERE name = '0006-geracao-antiga-fora-do-redis'");
  expect(await migrar('leads', MIGRACOES_LEADS)).toEqual(['0006-geracao-antiga-fora-do-redis']);
});
