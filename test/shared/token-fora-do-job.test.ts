import { Cifra } from '../../lib/cifra';
import { banco } from '../../lib/database';
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
    expect((await tokenDaFila.ler(def)).map((t) => t.token)).toEqual([admin]);
    // sealed in Redis: nothing there is the token, nor any part of it a reader could use
    const guardados = await redis('produtor').zrange(chave, '0', '-1');
    expect(guardados).toHaveLength(1);
    for (const parte of admin.split('.')) expect(guardados[0]).not.toContain(parte);
    const ttl = await redis('produtor').ttl(chave);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(120);
  },
);

describe("the tokens' seal (a reader of Redis, a replica or a backup of its files, finds no master's token to use)", () => {
  const def = filaIntranetColaboradorSync;
  beforeEach(() => redis('produtor').del(chaveDoToken(def)));
  afterEach(() => redis('produtor').del(chaveDoToken(def)));

  test("its key is kept in the service's own database: any process of the service, reading it there, opens what another sealed", async () => {
    await tokenDaFila.guardar(def, 'um.token.qualquer');
    const [[linha]] = (await banco('intranet').query("SELECT valor FROM segredo_do_acesso WHERE nome = 'tokens-dos-chamadores'")) as [{ valor: string }[], unknown];
    const [guardado] = await redis('produtor').zrange(chaveDoToken(def), '0', '-1');
    expect(new Cifra(Buffer.from(linha.valor, 'utf8')).decifrar(guardado)).toBe('um.token.qualquer');
  });

  test('a token stored again is the same member, its lapse moved: one master listing again and again leaves one copy, not ten that push out every other master', async () => {
    for (let i = 0; i < 12; i++) await tokenDaFila.guardar(def, 'o.mesmo.master');
    // a later millisecond: two tokens stored in the same one lapse together, and their order is then the sealed forms'
    await new Promise((r) => setTimeout(r, 5));
    await tokenDaFila.guardar(def, 'outro.master.qualquer');
    expect(await redis('produtor').zcard(chaveDoToken(def))).toBe(2);
    expect((await tokenDaFila.ler(def)).map((t) => t.token)).toEqual(['outro.master.qualquer', 'o.mesmo.master']);
  });

  test('a token stored in clear (by an earlier version) or sealed under another key is dropped as it is read, never handed to a job', async () => {
    await tokenDaFila.guardar(def, 'o.token.selado');
    const chave = chaveDoToken(def);
    const outraChave = new Cifra(Buffer.from('outra chave')).cifrar('de.outro.lugar');
    await redis('produtor').zadd(chave, String(Date.now() + 60_000), 'em.claro.antigo', String(Date.now() + 60_000), outraChave);
    expect((await tokenDaFila.ler(def)).map((t) => t.token)).toEqual(['o.token.selado']);
    expect(await redis('produtor').zrange(chave, '0', '-1')).toHaveLength(1);
  });
});
