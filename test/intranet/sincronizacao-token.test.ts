import { config } from '../../config';
import { redis } from '../../lib/redis';
import { fila } from '../../queues/fila';
import { filaIntranetColaboradorSync } from '../../queues/intranet-colaborador-sync';
import { iniciarSuite, SuiteDeTeste } from '../helpers/suite';
import { intranetDe } from './apoio';

/**
 * The sync before a master's listing runs as a queue job (DESIGN §3): the master's token must not
 * be in the job's data, which the dashboard shows to anyone who opens it. No worker runs here, so
 * the job stays waiting, as it would with the queue's workers down.
 */

let suite: SuiteDeTeste;
beforeAll(async () => {
  suite = await iniciarSuite(['identity', 'intranet'], { workers: false, env: { ACESSO_ESPERA_SYNC_MS: '300' } });
});
afterAll(() => suite.encerrar());

test("a master's listing queues the sync without the master's token in the job; the token waits apart, for two minutes at most", async () => {
  const it = intranetDe(suite);
  const admin = await it.admin();
  expect((await it.api.get('/colaborador', { token: admin })).status).toBe(200);
  const [job] = await fila(filaIntranetColaboradorSync).getJobs(['waiting']);
  expect(job).toBeDefined();
  expect(JSON.stringify(job.asJSON())).not.toContain(admin);
  const chave = `${config().queuePrefix}:${filaIntranetColaboradorSync.nome}:token`;
  expect(await redis('produtor').get(chave)).toBe(admin);
  const ttl = await redis('produtor').ttl(chave);
  expect(ttl).toBeGreaterThan(0);
  expect(ttl).toBeLessThanOrEqual(120);
});
