import { redis } from '../../lib/redis';
import { chaveDoToken, DefinicaoDeFila, fila, tokenDaFila } from '../../queues/fila';
import { filaHubAplicativoSync } from '../../queues/hub-aplicativo-sync';
import { filaIntranetColaboradorSync } from '../../queues/intranet-colaborador-sync';
import { identityDe } from '../helpers/identity';
import { cliente } from '../helpers/http';
import { iniciarSuite, SuiteDeTeste } from '../helpers/suite';

/**
 * The syncs before a master's listing run as queue jobs (SPEC 4.4 rule 3, 4.5 rule 2, DESIGN §3):
 * the master's token must not be in a job's data, which the dashboard shows to anyone who opens it
 * (queues/fila.ts, tokenDaFila). No worker runs here, so the jobs stay waiting, as they would with
 * the queues' workers down.
 */

let suite: SuiteDeTeste;
beforeAll(async () => {
  suite = await iniciarSuite(['identity', 'intranet', 'hub'], {
    workers: false,
    env: { ACESSO_ESPERA_SYNC_MS: '300', HUB_ESPERA_SYNC_MS: '300' },
  });
});
afterAll(() => suite.encerrar());

test.each([
  ['intranet', '/colaborador', filaIntranetColaboradorSync],
  ['hub', '/aplicativo', filaHubAplicativoSync],
] as [string, string, DefinicaoDeFila][])(
  "%s: a master's listing queues its sync without the master's token in the job; the token waits apart, two minutes at most",
  async (servico, caminho, def) => {
    const admin = await identityDe(suite.url.identity).admin();
    expect((await cliente(suite.url[servico]).get(caminho, { token: admin })).status).toBe(200);
    const [job] = await fila(def).getJobs(['waiting']);
    expect(job).toBeDefined();
    expect(JSON.stringify(job.asJSON())).not.toContain(admin);
    const chave = chaveDoToken(def);
    expect(await tokenDaFila.ler(def)).toEqual([admin]);
    const ttl = await redis('produtor').ttl(chave);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(120);
  },
);
