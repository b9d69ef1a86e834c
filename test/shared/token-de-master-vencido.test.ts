import { Job } from 'bullmq';
import { redis } from '../../lib/redis';
import { processarHubAplicativoSync } from '../../jobs/hub-aplicativo-sync';
import { processarIntranetColaboradorSync } from '../../jobs/intranet-colaborador-sync';
import { chaveDoToken, DefinicaoDeFila } from '../../queues/fila';
import { filaHubAplicativoSync } from '../../queues/hub-aplicativo-sync';
import { filaIntranetColaboradorSync } from '../../queues/intranet-colaborador-sync';
import { cliente } from '../helpers/http';
import { identityDe } from '../helpers/identity';
import { iniciarSuite, SuiteDeTeste } from '../helpers/suite';

/**
 * The syncs before a master's listing (SPEC 4.4 rule 3, 4.5 rule 2) act with the token of a master
 * who listed. A token outlives its holder's demotion or removal (8 hours): the other services still
 * take it as master, identity re-reads the user and refuses it (403, 401). Such a listing must not
 * spoil the sync a real master asked for just before, nor the next ones. No worker runs here: the
 * test runs the queue's processor itself once both listings have queued (shared) their job.
 */

let suite: SuiteDeTeste;
let identity: ReturnType<typeof identityDe>;
beforeAll(async () => {
  suite = await iniciarSuite(['identity', 'intranet', 'hub'], {
    workers: false,
    env: { ACESSO_ESPERA_SYNC_MS: '200', HUB_ESPERA_SYNC_MS: '200' },
  });
  identity = identityDe(suite.url.identity);
});
afterAll(() => suite.encerrar());

const sufixo = () => Math.random().toString(16).slice(2, 10);

/** A master's token whose holder identity no longer takes as master: demoted, or removed. */
async function tokenVencido(como: 'rebaixado' | 'removido'): Promise<string> {
  const { usuario, token } = await identity.criarUsuarioLogado({ e_master: true });
  const admin = await identity.admin();
  const res =
    como === 'rebaixado'
      ? await identity.api.patch(`/usuario/${usuario.id}`, { token: admin, body: { e_master: false } })
      : await identity.api.del(`/usuario/${usuario.id}`, { token: admin });
  expect(res.status).toBeLessThan(300);
  return token;
}

async function recomecar(def: DefinicaoDeFila) {
  await redis('produtor').del(chaveDoToken(def));
}

const MODOS = [['demoted', 'rebaixado'] as const, ['removed', 'removido'] as const];

describe.each(MODOS)('a master %s in identity, token still valid', (_rotulo, como) => {
  test('intranet: listing after a real master does not spoil the collaborator sync, nor the next one', async () => {
    await recomecar(filaIntranetColaboradorSync);
    const intranet = cliente(suite.url.intranet);
    const admin = await identity.admin();
    const vencido = await tokenVencido(como);
    const novo = await identity.criarUsuario({ senha: undefined, nome: `Novo ${sufixo()}` });

    expect((await intranet.get('/colaborador', { token: admin })).status).toBe(200);
    // the token still says master: the intranet lists for it, and its listing joins the queued sync
    expect((await intranet.get('/colaborador', { token: vencido })).status).toBe(200);

    await processarIntranetColaboradorSync({ updateProgress: async () => undefined } as unknown as Job);
    const filtro = await intranet.get('/colaborador/filtro', { token: admin, query: { email: novo.email } });
    expect(filtro.body.map((c: any) => c.auth_id)).toEqual([novo.id]);

    // the same holder lists again, alone: the sync still runs, with the token identity took
    const outro = await identity.criarUsuario({ senha: undefined, nome: `Outro ${sufixo()}` });
    expect((await intranet.get('/colaborador', { token: vencido })).status).toBe(200);
    await processarIntranetColaboradorSync({ updateProgress: async () => undefined } as unknown as Job);
    const depois = await intranet.get('/colaborador/filtro', { token: admin, query: { email: outro.email } });
    expect(depois.body.map((c: any) => c.auth_id)).toEqual([outro.id]);
  });

  test('hub: listing after a real master does not spoil the application sync', async () => {
    await recomecar(filaHubAplicativoSync);
    const hub = cliente(suite.url.hub);
    const admin = await identity.admin();
    const vencido = await tokenVencido(como);
    const app = await identity.api.post('/aplicativo', { token: admin, body: { nome: `App ${sufixo()}` } });
    expect(app.status).toBe(201);

    expect((await hub.get('/aplicativo', { token: admin })).status).toBe(200);
    expect((await hub.get('/aplicativo', { token: vencido })).status).toBe(200);

    await processarHubAplicativoSync({ data: { doChamador: true } } as Job);
    const locais = (await hub.get('/aplicativo/filtro', { token: admin })).body as any[];
    expect(locais.map((a) => a.identificador_no_auth)).toContain(app.body.id);
  });
});
