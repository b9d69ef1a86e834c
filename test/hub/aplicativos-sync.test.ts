import { rename } from 'node:fs/promises';
import { DelayedError, Job } from 'bullmq';
import path from 'node:path';
import { sincronizarAplicativos } from '../../api/hub/aplicativos';
import { esquecerTokenDoServico } from '../../api/shared/token-do-servico';
import { esquecerPublicadores } from '../../api/hub/eventos';
import { processarHubAplicativoSync } from '../../jobs/hub-aplicativo-sync';
import * as sincronizacao from '../../api/hub/sincronizacao';
import { config } from '../../config';
import { idDoAplicativoDe } from '../../lib/credenciais';
import { nomeDaTrava, novaConexao } from '../../lib/database';
import { EventoPendente } from '../../models/identity';
import { fila } from '../../queues/fila';
import { filaHubAplicativoSync } from '../../queues/hub-aplicativo-sync';
import { redis } from '../../lib/redis';
import { esperarAte, esperarOutraConexao } from '../helpers/espera';
import { esperarProblema } from '../helpers/http';
import { portaLivre } from '../helpers/processo';
import { iniciarSuite, SuiteDeTeste } from '../helpers/suite';
import { Hub, hubDe, unico, URL_LOCAL } from './apoio-admin';
import { identityPorRetransmissor } from '../helpers/retransmissor-do-identity';
import { Registro } from '../helpers/registros';
import { adiantarRelogio } from '../helpers/relogio';

const mockRegistros: Registro[] = [];
jest.mock('../../lib/logger', () => jest.requireActual('../helpers/registros').loggerQueRegistra('hub-aplicativos', ['error'], () => mockRegistros));

/**
 * The sync of the hub's applications with identity before GET /aplicativo (SPEC §3 Hub application
 * activity, SPEC 4.4 rule 3, SPEC 5.7, DESIGN §5). The hub reaches identity through a relay the
 * tests can break (test/helpers/retransmissor-do-identity.ts).
 */
const ESPERA_MS = 1000;
let suite: SuiteDeTeste;
let hub: Hub;
let admin: string;
let relay: Awaited<ReturnType<typeof identityPorRetransmissor>>;
const tag = unico('Sync');

beforeAll(async () => {
  suite = await iniciarSuite(['identity', 'hub'], { env: { HUB_ESPERA_SYNC_MS: String(ESPERA_MS) } });
  // identity's first events (the initial master's) reach the hub at start, and their publisher's
  // check syncs with the hub's own token: done before the tests count whose token reads identity
  await esperarAte(async () => (await EventoPendente.count({ where: { enviado_em: null } })) === 0, "identity's first events at the hub", 20_000);
  await esperarAte(async () => {
    const jobs = await fila(filaHubAplicativoSync).getJobCounts('active', 'waiting', 'delayed');
    return Object.values(jobs).every((n) => n === 0);
  }, 'their sync done', 20_000);
  relay = await identityPorRetransmissor(suite.url.identity);
  hub = hubDe(suite);
  admin = await hub.admin();
}, 90_000);
afterAll(async () => {
  await relay?.fechar();
  await suite.encerrar();
});
afterEach(() => {
  relay.mudar('normal');
  relay.mudarPorId('normal');
  relay.escondidos.clear();
  relay.perdidos.clear();
  relay.repetidos.clear();
  relay.soltar();
  config().servicos.identity.url = relay.endereco;
});

const ids = (xs: any[]) => xs.map((x) => x.id);
const doPayload = (token: string) => JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString('utf8'));
const listasNoIdentity = (desde: number) => relay.pedidos.slice(desde).filter((p) => p.metodo === 'GET' && p.caminho.startsWith('/aplicativo'));
/** The applications the hub read by id on identity since `desde` (confirming a departure). */
const lidosPorId = (desde: number) => relay.pedidos.slice(desde).filter((p) => p.metodo === 'GET' && /^\/aplicativo\/[^/?]+$/.test(p.caminho));
/** The Redis key a hub process sets after a sync that left a publisher refused, for the others to see within the minute. */
const recusadoNoHub = (identityId: string) => `${config().queuePrefix}:hub:recusado-apos-sincronizar:${identityId}`;
const doTag = async () => (await hub.api.get('/aplicativo/filtro', { token: admin, query: { nome: tag } })).body as any[];

describe('entering and following identity (SPEC §3 Hub application activity, SPEC 4.4 rule 3)', () => {
  test('a new identity application enters the hub, active, at the next listing, and only then', async () => {
    const nome = `${tag} Novo`;
    const noIdentity = await hub.criarNoIdentity(nome, 'Recém-chegado');
    expect(await hub.doHub(noIdentity.id)).toBeUndefined();
    const pagina = await hub.sincronizar();
    const local = pagina.itens.filter((a) => a.identificador_no_auth === noIdentity.id);
    expect(local).toEqual([
      expect.objectContaining({
        nome,
        descricao: 'Recém-chegado',
        ativo: true,
        identificador_no_auth: noIdentity.id,
        quantidade_de_tipos_de_evento: 0,
        quantidade_de_assinaturas: 0,
      }),
    ]);
  });

  test('a new application listed twice by identity (pages read while identity changed) enters once, and the rest of the sync goes on', async () => {
    const repetido = await hub.criarNoIdentity(`${tag} Repetido`);
    const outro = await hub.criarNoIdentity(`${tag} Repetido, o seguinte`);
    relay.repetidos.add(repetido.id);
    const pagina = await hub.sincronizar();
    expect(pagina.itens.filter((a) => a.identificador_no_auth === repetido.id)).toHaveLength(1);
    expect(await hub.doHub(outro.id)).toMatchObject({ ativo: true });
  });

  test('name and description follow identity at the next listing; the hub id and identificador_no_auth never change', async () => {
    const noIdentity = await hub.criarNoIdentity(`${tag} Antigo`, 'Descrição antiga');
    await hub.sincronizar();
    const antes = await hub.doHub(noIdentity.id);

    const patch = await hub.identity.api.patch(`/aplicativo/${noIdentity.id}`, {
      token: admin,
      body: { nome: `${tag} Renomeado`, descricao: 'Descrição nova' },
    });
    expect(patch.status).toBe(200);
    expect(await hub.doHub(noIdentity.id)).toMatchObject({ nome: `${tag} Antigo` }); // the filter does not sync
    await hub.sincronizar();
    const depois = await hub.doHub(noIdentity.id);
    expect(depois).toMatchObject({ id: antes.id, identificador_no_auth: noIdentity.id, nome: `${tag} Renomeado`, descricao: 'Descrição nova' });

    await hub.identity.api.patch(`/aplicativo/${noIdentity.id}`, { token: admin, body: { descricao: null } });
    await hub.sincronizar();
    expect(await hub.doHub(noIdentity.id)).toMatchObject({ id: antes.id, nome: `${tag} Renomeado`, descricao: null });
  });
});

describe('leaving identity (SPEC §3 Hub application activity)', () => {
  const sair = async (identityId: string) => {
    expect((await hub.identity.api.del(`/aplicativo/${identityId}`, { token: admin })).status).toBe(204);
    await hub.sincronizar();
  };

  test('an application that owns nothing is deleted: gone from the reads, 404 by id', async () => {
    const noIdentity = await hub.criarNoIdentity(`${tag} Sem nada`);
    await hub.sincronizar();
    const local = await hub.doHub(noIdentity.id);
    await sair(noIdentity.id);
    expect(await hub.doHub(noIdentity.id)).toBeUndefined();
    esperarProblema(await hub.api.get(`/aplicativo/${local.id}`, { token: admin }), 404);
  });

  /** An identity application synced into the hub, then deleted there (missing from one listing); `antes`, its hub record. */
  async function apagadaNoHub(nome: string) {
    const noIdentity = await hub.criarNoIdentity(nome);
    await hub.sincronizar();
    const antes = await hub.doHub(noIdentity.id);
    relay.escondidos.add(noIdentity.id);
    await hub.sincronizar();
    expect(await hub.doHub(noIdentity.id)).toBeUndefined();
    relay.escondidos.clear();
    return { noIdentity, antes };
  }

  test('an application deleted here that shows up in identity again comes back, with its hub id, and the sync goes on', async () => {
    const { noIdentity, antes } = await apagadaNoHub(`${tag} Volta`);
    const outro = await hub.criarNoIdentity(`${tag} Depois da volta`);
    await hub.sincronizar();
    expect(await hub.doHub(noIdentity.id)).toMatchObject({ id: antes.id, ativo: true });
    expect((await hub.api.get(`/aplicativo/${antes.id}`, { token: admin })).status).toBe(200);
    // the sync did not stop at the returning application
    expect(await hub.doHub(outro.id)).toMatchObject({ ativo: true });
  });

  test('an application coming back whose new name the database refuses stays deleted, not back under its old name: the return and its changes are one commit', async () => {
    const { noIdentity, antes } = await apagadaNoHub(`${tag} Volta recusada`);
    expect((await hub.identity.api.patch(`/aplicativo/${noIdentity.id}`, { token: admin, body: { nome: `${tag} Nome recusado` } })).status).toBe(200);

    const conexao = await novaConexao('hub');
    try {
      // the rename fails after the return (a database fault between the two writes)
      await conexao.query(`CREATE TRIGGER aplicativo_nome_recusado BEFORE UPDATE ON aplicativo FOR EACH ROW
        BEGIN IF NEW.nome LIKE '%Nome recusado%' THEN SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'nome recusado'; END IF; END`);
      await expect(sincronizarAplicativos(admin)).rejects.toThrow(/nome recusado/);
      const [linhas] = await conexao.query('SELECT nome, deletado_em FROM aplicativo WHERE id = ?', [antes.id]);
      expect(linhas).toEqual([{ nome: antes.nome, deletado_em: expect.any(Date) }]);
    } finally {
      await conexao.query('DROP TRIGGER IF EXISTS aplicativo_nome_recusado');
      await conexao.end();
    }
    await hub.sincronizar();
    expect(await hub.doHub(noIdentity.id)).toMatchObject({ id: antes.id, nome: `${tag} Nome recusado`, ativo: true });
  });

  test('a sync job waiting for another sync gives up the wait at shutdown, changing nothing, and goes back to the queue (the wait may outlast the grace)', async () => {
    const nova = await hub.criarNoIdentity(`${tag} Depois do encerramento`);
    const outra = await novaConexao('hub');
    try {
      // another process's sync under way
      await outra.query('SELECT GET_LOCK(?, 0)', [nomeDaTrava('hub', 'sincronizar-aplicativos')]);
      const parada = new AbortController();
      const inicio = Date.now();
      // the worker's job, as far as handing it back goes
      const devolvido: unknown[] = [];
      const job = { data: {}, moveToDelayed: async (...args: unknown[]) => void devolvido.push(...args) } as unknown as Job;
      const processando = processarHubAplicativoSync(job, 'token-do-worker', parada.signal);
      setTimeout(() => parada.abort(), 300);
      await expect(processando).rejects.toBeInstanceOf(DelayedError);
      expect(devolvido).toEqual([expect.any(Number), 'token-do-worker']);
      expect(Date.now() - inicio).toBeLessThan(5_000);
      expect(await hub.doHub(nova.id)).toBeUndefined();
    } finally {
      await outra.end();
    }
    await hub.sincronizar();
    expect(await hub.doHub(nova.id)).toMatchObject({ ativo: true });
  });

  test("a sync that waited for another's turn past its token's life reads identity with one asked for after the wait", async () => {
    const nova = await hub.criarNoIdentity(`${tag} Depois da vez`);
    // the hub's token held now, valid an hour
    await sincronizarAplicativos();
    const outra = await novaConexao('hub');
    let voltar = () => undefined as void;
    try {
      await outra.query('SELECT GET_LOCK(?, 0)', [nomeDaTrava('hub', 'sincronizar-aplicativos')]);
      const sincronizando = sincronizarAplicativos();
      await esperarOutraConexao(outra, 'the sync waiting for its turn', ['SELECT GET_LOCK%']);
      // the other sync ends when that hour has gone by (the clock moved, not waited)
      voltar = adiantarRelogio(2 * 3600_000);
      await outra.query('SELECT RELEASE_LOCK(?)', [nomeDaTrava('hub', 'sincronizar-aplicativos')]);
      expect(await sincronizando).not.toHaveProperty('ignorado');
      expect(await hub.doHub(nova.id)).toMatchObject({ ativo: true });
    } finally {
      voltar();
      await outra.end();
    }
  });

  test('an application that owns an event type becomes inactive and keeps its type', async () => {
    const noIdentity = await hub.criarNoIdentity(`${tag} Dono`);
    await hub.sincronizar();
    const local = await hub.doHub(noIdentity.id);
    const tipo = await hub.criarTipo(local.id);
    await sair(noIdentity.id);
    const res = await hub.api.get(`/aplicativo/${local.id}`, { token: admin });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ ativo: false, quantidade_de_tipos_de_evento: 1 });
    expect((await hub.api.get(`/tipo_de_evento/${tipo.id}`, { token: admin })).body).toMatchObject({ aplicativo_id: local.id });
    // a later listing keeps it so
    await hub.sincronizar();
    expect((await hub.api.get(`/aplicativo/${local.id}`, { token: admin })).body.ativo).toBe(false);
  });

  test('an application with subscriptions becomes inactive and keeps them', async () => {
    const [dono] = await hub.aplicativos(`${tag} Publicador`);
    const tipo = await hub.criarTipo(dono.id);
    const noIdentity = await hub.criarNoIdentity(`${tag} Assinante`);
    await hub.sincronizar();
    const local = await hub.doHub(noIdentity.id);
    const assinatura = await hub.criarAssinatura({ aplicativo_assinante_id: local.id, tipo_de_evento_id: tipo.id });
    await sair(noIdentity.id);
    expect((await hub.api.get(`/aplicativo/${local.id}`, { token: admin })).body).toMatchObject({ ativo: false, quantidade_de_assinaturas: 1 });
    expect((await hub.api.get(`/assinatura/${assinatura.id}`, { token: admin })).status).toBe(200);
  });

  test('an application whose types and subscriptions were all deleted owns nothing: it is deleted', async () => {
    const [dono] = await hub.aplicativos(`${tag} Publicador de antes`);
    const tipoAlheio = await hub.criarTipo(dono.id);
    const noIdentity = await hub.criarNoIdentity(`${tag} Tudo apagado`);
    await hub.sincronizar();
    const local = await hub.doHub(noIdentity.id);
    const proprio = await hub.criarTipo(local.id);
    const assinatura = await hub.criarAssinatura({ aplicativo_assinante_id: local.id, tipo_de_evento_id: tipoAlheio.id });
    expect((await hub.api.del(`/assinatura/${assinatura.id}`, { token: admin })).status).toBe(204);
    expect((await hub.api.del(`/tipo_de_evento/${proprio.id}`, { token: admin })).status).toBe(204);
    await sair(noIdentity.id);
    expect(await hub.doHub(noIdentity.id)).toBeUndefined();
    esperarProblema(await hub.api.get(`/aplicativo/${local.id}`, { token: admin }), 404);
  });

  test('an inactive application can neither subscribe nor own a new type: 422 (DESIGN §4)', async () => {
    const [dono] = await hub.aplicativos(`${tag} Outro publicador`);
    const tipo = await hub.criarTipo(dono.id);
    const noIdentity = await hub.criarNoIdentity(`${tag} Inativo`);
    await hub.sincronizar();
    const local = await hub.doHub(noIdentity.id);
    await hub.criarTipo(local.id);
    await sair(noIdentity.id);
    expect((await hub.api.get(`/aplicativo/${local.id}`, { token: admin })).body.ativo).toBe(false);

    const assinar = await hub.api.post('/assinatura', {
      token: admin,
      body: { aplicativo_assinante_id: local.id, tipo_de_evento_id: tipo.id, versao_do_esquema: 1, url_de_destino: URL_LOCAL },
    });
    expect(esperarProblema(assinar, 422).errors).toEqual([expect.objectContaining({ campo: 'aplicativo_assinante_id' })]);
    const tipoNovo = await hub.api.post('/tipo_de_evento', { token: admin, body: { nome: `${unico('t')}.x`, aplicativo_id: local.id } });
    expect(esperarProblema(tipoNovo, 422).errors).toEqual([expect.objectContaining({ campo: 'aplicativo_id' })]);
  });
});

describe('a departure is confirmed by identity first: its listing, read page by page while it changes, can miss an application still there', () => {
  test('missed by the listing but still there (a master’s listing): kept as it is, its name following its own answer, read with the master’s token', async () => {
    const noIdentity = await hub.criarNoIdentity(`${tag} Perdido`, 'Antes');
    await hub.sincronizar();
    const antes = await hub.doHub(noIdentity.id);
    await hub.identity.api.patch(`/aplicativo/${noIdentity.id}`, { token: admin, body: { nome: `${tag} Perdido, renomeado` } });

    relay.perdidos.add(noIdentity.id);
    const desde = relay.pedidos.length;
    await hub.sincronizar();
    expect(await hub.doHub(noIdentity.id)).toMatchObject({ id: antes.id, ativo: true, nome: `${tag} Perdido, renomeado`, descricao: 'Antes' });
    expect(lidosPorId(desde).map((p) => [p.caminho, p.autorizacao])).toEqual([[`/aplicativo/${noIdentity.id}`, `Bearer ${admin}`]]);
  });

  test('a non-master’s listing confirms with the hub’s own token: the one still there is kept, the one gone (404) leaves', async () => {
    const [pessoa] = await hub.pessoas(undefined);
    const perdido = await hub.criarNoIdentity(`${tag} Perdido pelo hub`);
    const saiu = await hub.criarNoIdentity(`${tag} Saiu, visto pelo hub`);
    await hub.sincronizar();

    relay.perdidos.add(perdido.id);
    relay.escondidos.add(saiu.id);
    const desde = relay.pedidos.length;
    expect((await hub.api.get('/aplicativo', { token: pessoa.token })).status).toBe(200);
    expect(await hub.doHub(perdido.id)).toMatchObject({ ativo: true });
    expect(await hub.doHub(saiu.id)).toBeUndefined();
    const lidos = lidosPorId(desde);
    expect(lidos.map((p) => p.caminho).sort()).toEqual([`/aplicativo/${perdido.id}`, `/aplicativo/${saiu.id}`].sort());
    for (const p of lidos) expect(doPayload(p.autorizacao!.replace(/^Bearer /, ''))).toMatchObject({ tipo: 'aplicativo', sub: await idDoAplicativoDe('hub') });
  });

  test.each([
    ['answering an error', 'erro'],
    ['dropping the connection', 'fora'],
    ['refusing the token', 'recusa'],
  ] as const)('identity %s on the confirmation: the missing applications stay as they are, the rest of the sync goes on, and a later sync confirms them', async (_caso, modo) => {
    const dono = await hub.criarNoIdentity(`${tag} Dono sem confirmação ${modo}`);
    const vazio = await hub.criarNoIdentity(`${tag} Vazio sem confirmação ${modo}`);
    await hub.sincronizar();
    const tipo = await hub.criarTipo((await hub.doHub(dono.id)).id);
    const antes = [await hub.doHub(dono.id), await hub.doHub(vazio.id)];

    relay.escondidos.add(dono.id);
    relay.escondidos.add(vazio.id);
    relay.mudarPorId(modo);
    const novo = await hub.criarNoIdentity(`${tag} Novo sem confirmação ${modo}`);
    const desde = relay.pedidos.length;
    await hub.sincronizar();
    expect([await hub.doHub(dono.id), await hub.doHub(vazio.id)]).toEqual(antes);
    expect(await hub.doHub(novo.id)).toMatchObject({ ativo: true });
    // the first failure leaves the others for the next sync too: one read by id, not one per application
    expect(lidosPorId(desde)).toHaveLength(1);

    relay.mudarPorId('normal');
    await hub.sincronizar();
    expect(await hub.doHub(dono.id)).toMatchObject({ ativo: false, quantidade_de_tipos_de_evento: 1 });
    expect(await hub.doHub(vazio.id)).toBeUndefined();
    expect((await hub.api.get(`/tipo_de_evento/${tipo.id}`, { token: admin })).status).toBe(200);
  });
});

describe('leaving identity while a subscription is being stored (SPEC §3 Hub application activity)', () => {
  test('the sync waits for the subscription and makes the application inactive instead of deleting it', async () => {
    const [dono] = await hub.aplicativos(`${tag} Dono da corrida`);
    const tipo = await hub.criarTipo(dono.id);
    const noIdentity = await hub.criarNoIdentity(`${tag} Assinando`);
    await hub.sincronizar();
    const local = await hub.doHub(noIdentity.id);

    // the test's connection stands for POST /assinatura midway: the application read FOR SHARE
    const conexao = await novaConexao('hub');
    try {
      await conexao.query('START TRANSACTION');
      await conexao.query('SELECT id FROM aplicativo WHERE id = ? LOCK IN SHARE MODE', [local.id]);
      relay.escondidos.add(noIdentity.id);
      const listagem = hub.sincronizar();
      await esperarOutraConexao(conexao, 'the sync waiting on the application', ['%FROM `aplicativo`%FOR UPDATE%', 'UPDATE `aplicativo`%']);
      await conexao.query(
        `INSERT INTO assinatura (id, aplicativo_assinante_id, tipo_de_evento_id, versao_do_esquema, url_de_destino, criada_em, atualizada_em)
          VALUES (UUID(), ?, ?, 1, ?, NOW(3), NOW(3))`,
        [local.id, tipo.id, URL_LOCAL],
      );
      await conexao.query('COMMIT');
      await listagem;
      const depois = await esperarAte(async () => {
        const [linhas] = await conexao.query('SELECT ativo, deletado_em FROM aplicativo WHERE id = ?', [local.id]);
        const [a] = linhas as { ativo: number; deletado_em: Date | null }[];
        return (!a.ativo || a.deletado_em) && a;
      }, 'the sync deciding');
      expect(depois).toEqual({ ativo: 0, deletado_em: null });
    } finally {
      await conexao.end();
    }
  });
});

describe('a publication by an application the hub does not know yet', () => {
  const publicar = (token: string) => hub.api.post('/eventos', { token, body: { tipo: `${tag.toLowerCase()}.nada`, versao: 1, dados: {} } });
  /** Standing for another hub process: one that shares only the database and Redis with this one. */
  const outroProcesso = () => esquecerPublicadores();

  test('makes the hub sync first: the application is known, and the publication goes on to its own checks', async () => {
    const app = await hub.identity.criarAplicativo(`${tag} Publica antes`);
    const desde = relay.pedidos.length;
    const res = await publicar(app.token);
    // past the publisher's check (403 for an unknown one): the type does not exist
    expect(res.status).toBe(422);
    expect(listasNoIdentity(desde).length).toBeGreaterThanOrEqual(1);
    expect(await hub.doHub(app.id)).toMatchObject({ ativo: true });
    // only a refusal is remembered
    expect(await redis().exists(recusadoNoHub(app.id))).toBe(0);
  });

  test.each([
    ['answering an error', 'erro'],
    ['dropping connections', 'fora'],
    ['slower than the wait (HUB_ESPERA_SYNC_MS)', 'lento'],
  ] as const)('identity %s when a new application first publishes: 503 with Retry-After, nothing stored, no refusal kept; with identity back, it publishes', async (_caso, modo) => {
    const app = await hub.identity.criarAplicativo(`${tag} Publica com o identity ${modo}`);
    relay.mudar(modo);
    const desde = relay.pedidos.length;
    try {
      const res = await publicar(app.token);
      esperarProblema(res, 503);
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
      // the sync did ask identity, and the hub still does not know the application
      expect(listasNoIdentity(desde).length).toBeGreaterThanOrEqual(1);
      expect(await hub.doHub(app.id)).toBeUndefined();
      expect(await redis().exists(recusadoNoHub(app.id))).toBe(0);
    } finally {
      relay.mudar('normal');
      relay.soltar();
    }
    // the next publication syncs again, in this process or another: past the publisher's check (403 for an unknown one), the type does not exist
    let res = await publicar(app.token);
    for (let i = 0; i < 20 && res.status === 503; i++) res = await publicar(app.token);
    expect(res.status).toBe(422);
    expect(await hub.doHub(app.id)).toMatchObject({ ativo: true });
  });

  test('still unknown after that sync (gone from identity, its token still valid): 403, and no new sync within the minute, in this hub process or another', async () => {
    const app = await hub.identity.criarAplicativo(`${tag} Sumido`);
    relay.escondidos.add(app.id);
    const desde = relay.pedidos.length;
    expect((await publicar(app.token)).status).toBe(403);
    const depoisDaPrimeira = listasNoIdentity(desde).length;
    expect(depoisDaPrimeira).toBeGreaterThanOrEqual(1);
    expect((await publicar(app.token)).status).toBe(403);
    // the refusal after the sync is the hub's, kept for the minute where every hub process sees it
    const resta = await redis().pttl(recusadoNoHub(app.id));
    expect(resta).toBeGreaterThan(0);
    expect(resta).toBeLessThanOrEqual(60_000);

    outroProcesso();
    const pedidosAoRedis = jest.spyOn(redis(), 'sendCommand');
    try {
      for (let i = 0; i < 3; i++) expect((await publicar(app.token)).status).toBe(403);
      expect(listasNoIdentity(desde).length).toBe(depoisDaPrimeira);
      // the other process asked Redis once, and remembers the refusal to the minute's end itself
      const daRecusa = pedidosAoRedis.mock.calls.filter(([c]) => c.args.some((a) => String(a) === recusadoNoHub(app.id)));
      expect(daRecusa).toHaveLength(1);
    } finally {
      pedidosAoRedis.mockRestore();
    }
  });

  test('a brand-new application publishing through two hub processes at once passes the publisher check in both: neither answers on the word of a sync still to come', async () => {
    const app = await hub.identity.criarAplicativo(`${tag} Nova em dois processos`);
    const real = sincronizacao.esperarSincronizacao;
    let soltar!: () => void;
    const solta = new Promise<void>((r) => (soltar = r));
    let chamou!: () => void;
    const decidida = new Promise<void>((r) => (chamou = r));
    // the first process has decided to sync and has not queued it yet when the second one's publication arrives
    const espiao = jest.spyOn(sincronizacao, 'esperarSincronizacao').mockImplementationOnce(async (quem) => {
      chamou();
      await solta;
      return real(quem);
    });
    try {
      const primeira = publicar(app.token);
      await Promise.race([decidida, primeira]);
      outroProcesso();
      const segunda = await publicar(app.token);
      soltar();
      // past the publisher's check (403 for an unknown one): the type does not exist
      expect([(await primeira).status, segunda.status]).toEqual([422, 422]);
    } finally {
      soltar();
      espiao.mockRestore();
    }
    expect(await redis().exists(recusadoNoHub(app.id))).toBe(0);
  });

  test('a publication joins the non-masters’ sync already under way, whoever started it, instead of running one of its own', async () => {
    const [pessoa] = await hub.pessoas(undefined);
    const app = await hub.identity.criarAplicativo(`${tag} Publica durante a sincronização de outro`);
    relay.mudar('atrasado');
    const desde = relay.pedidos.length;
    // a non-master's sync under way, as a listing through any hub process starts it
    const listagem = hub.api.get('/aplicativo', { token: pessoa.token });
    await esperarAte(async () => listasNoIdentity(desde).length > 0, 'the non-master’s sync reading identity');
    // past the publisher's check (403 for an unknown one): the type does not exist
    expect((await publicar(app.token)).status).toBe(422);
    expect((await listagem).status).toBe(200);
    expect(listasNoIdentity(desde)).toHaveLength(1);
  });

  /**
   * A publication of a new application `nome` whose first `vezes` waits each join a sync already
   * running (run `rodada`: the same one unless told), which read identity without the application:
   * the application, the answer, and how many waits for a sync the publication made.
   */
  async function publicarJuntandoSe(nome: string, vezes: number, rodadas: number[] = []) {
    const app = await hub.identity.criarAplicativo(`${tag} ${nome}`);
    const real = sincronizacao.esperarSincronizacao;
    const espiao = jest.spyOn(sincronizacao, 'esperarSincronizacao');
    for (let i = 0; i < vezes; i++) {
      espiao.mockImplementationOnce(async (quem) => {
        relay.escondidos.add(app.id);
        try {
          await real(quem);
        } finally {
          relay.escondidos.delete(app.id);
        }
        return { jaRodava: true, rodada: rodadas[i] ?? 1, concluida: true };
      });
    }
    try {
      const res = await publicar(app.token);
      return { app, res, esperas: espiao.mock.calls.length };
    } finally {
      espiao.mockRestore();
    }
  }

  test('joined a sync already running, which may have read identity before the application was made: a refusal waits for one more sync', async () => {
    // the sync joined read identity before the application was there (hidden from it), and was already running
    const { app, res, esperas } = await publicarJuntandoSe('Nova durante uma sincronização', 1);
    // past the publisher's check (403 for an unknown one): the type does not exist
    expect(res.status).toBe(422);
    expect(esperas).toBe(2);
    expect(await redis().exists(recusadoNoHub(app.id))).toBe(0);
  });

  test('a second wait that joins a sync already running again (the first wait ran out while it ran) is no proof either: the refusal waits for a sync that started after the publication', async () => {
    const { app, res, esperas } = await publicarJuntandoSe('Nova durante duas sincronizações', 2);
    // past the publisher's check (403 for an unknown one): the type does not exist
    expect(res.status).toBe(422);
    expect(esperas).toBe(3);
    expect(await redis().exists(recusadoNoHub(app.id))).toBe(0);
  });

  test('a second wait that joins another run, even one already running, decides: made after the first, it read identity after the publication (403 still unknown, refusal kept)', async () => {
    const { app, res, esperas } = await publicarJuntandoSe('Desconhecida em duas rodadas', 2, [1, 2]);
    expect(res.status).toBe(403);
    expect(esperas).toBe(2);
    expect(await redis().exists(recusadoNoHub(app.id))).toBe(1);
    await redis().del(recusadoNoHub(app.id));
  });

  test('no sync that started after the publication within its waits: 503 with Retry-After, and no refusal kept', async () => {
    const { app, res, esperas } = await publicarJuntandoSe('Nova sem sincronização posterior', 3);
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('5');
    expect(esperas).toBe(3);
    expect(await redis().exists(recusadoNoHub(app.id))).toBe(0);
    // the next attempt syncs again, and is accepted
    expect((await publicar(app.token)).status).toBe(422);
  });

  test('esperarSincronizacao says whether the sync it joined was already running, and which run that was', async () => {
    const [pessoa] = await hub.pessoas(undefined);
    expect(await sincronizacao.esperarSincronizacao()).toEqual({ jaRodava: false, concluida: true });
    relay.mudar('atrasado');
    const desde = relay.pedidos.length;
    const listagem = hub.api.get('/aplicativo', { token: pessoa.token });
    await esperarAte(async () => listasNoIdentity(desde).length > 0, 'the non-master’s sync reading identity');
    // two calls joining the run under way name the same run
    const [uma, outra] = await Promise.all([sincronizacao.esperarSincronizacao(), sincronizacao.esperarSincronizacao()]);
    expect(uma).toEqual({ jaRodava: true, rodada: expect.any(Number), concluida: true });
    expect(outra.rodada).toBe(uma.rodada);
    expect((await listagem).status).toBe(200);
    // a later run under way is another
    const desdeASegunda = relay.pedidos.length;
    const segunda = hub.api.get('/aplicativo', { token: pessoa.token });
    await esperarAte(async () => listasNoIdentity(desdeASegunda).length > 0, 'the second sync reading identity');
    const daSegunda = await sincronizacao.esperarSincronizacao();
    expect(daSegunda.jaRodava).toBe(true);
    expect(daSegunda.rodada).not.toBe(uma.rodada);
    expect((await segunda).status).toBe(200);
  });

  test('a sync job a shutdown handed back to wait (delayed, though it had started) reads identity again: not taken for one already running', async () => {
    const q = fila(filaHubAplicativoSync);
    const job = await q.add('sincronizar', { doChamador: false }, { jobId: 'sincronizar', delay: 60_000 });
    try {
      // as devolverAFila leaves it: started once, then delayed
      await redis('produtor').hset(q.toKey(job.id!), 'processedOn', String(Date.now()));
      expect(await sincronizacao.esperarSincronizacao()).toMatchObject({ jaRodava: false });
    } finally {
      await job.remove();
    }
  });

  test('Redis out of reach for the hub’s refusals: the process decides alone, syncing as if none were kept and remembering its own refusal for the minute', async () => {
    const sumido = await hub.identity.criarAplicativo(`${tag} Sumido, Redis fora`);
    relay.escondidos.add(sumido.id);
    // another process's refusal, which this one cannot read
    await redis().set(recusadoNoHub(sumido.id), '1', 'PX', 60_000);
    // every command on a refusal's key fails as on a connection that is down; the rest goes through
    const conexao = redis();
    const enviar = conexao.sendCommand.bind(conexao);
    const comandoDasRecusas = (c: { args: unknown[] }) => c.args.some((a) => /:hub:recusado-apos-sincronizar:/.test(String(a)));
    const fora = jest
      .spyOn(conexao, 'sendCommand')
      .mockImplementation((c, stream) => (comandoDasRecusas(c) ? Promise.reject(new Error('Connection is closed.')) : enviar(c, stream)));
    const desde = relay.pedidos.length;
    try {
      expect((await publicar(sumido.token)).status).toBe(403);
      const depoisDaPrimeira = listasNoIdentity(desde).length;
      expect(depoisDaPrimeira).toBeGreaterThanOrEqual(1);
      expect((await publicar(sumido.token)).status).toBe(403);
      expect(listasNoIdentity(desde).length).toBe(depoisDaPrimeira);
      // and a brand-new application is not refused for it
      const nova = await hub.identity.criarAplicativo(`${tag} Nova, Redis fora`);
      // past the publisher's check (403 for an unknown one): the type does not exist
      expect((await publicar(nova.token)).status).toBe(422);
      expect(listasNoIdentity(desde).length).toBeGreaterThan(depoisDaPrimeira);
      // the refusals' key was asked for, and Redis failed each time
      expect(fora.mock.calls.some(([c]) => comandoDasRecusas(c))).toBe(true);
    } finally {
      fora.mockRestore();
    }
  });
});

describe('whose token the sync uses (SPEC 4.4 rule 3, SPEC 5.7)', () => {
  test('a master’s listing reads identity with the master’s own token', async () => {
    const desde = relay.pedidos.length;
    await hub.sincronizar();
    const lidas = listasNoIdentity(desde);
    expect(lidas.length).toBeGreaterThanOrEqual(1);
    expect(lidas.every((p) => p.autorizacao === `Bearer ${admin}`)).toBe(true);
  });

  test('a non-master listing syncs too, with the hub’s own application token', async () => {
    const [pessoa] = await hub.pessoas(undefined); // `Acesso inicial` reads every area
    const noIdentity = await hub.criarNoIdentity(`${tag} Visto por colaborador`);
    const desde = relay.pedidos.length;

    const res = await hub.api.get('/aplicativo', { token: pessoa.token, query: { tamanho: 1000 } });
    expect(res.status).toBe(200);
    expect(res.body.itens.filter((a: any) => a.identificador_no_auth === noIdentity.id)).toHaveLength(1);

    const hubNoIdentity = await idDoAplicativoDe('hub');
    // the hub's token may be one it already holds (an earlier sync of this file): any asked for now is its own
    for (const pedido of relay.pedidos.slice(desde).filter((p) => p.metodo === 'POST' && p.caminho === '/auth/token')) {
      expect(JSON.parse(pedido.corpo)).toMatchObject({ client_id: hubNoIdentity });
    }
    const lidas = listasNoIdentity(desde);
    expect(lidas.length).toBeGreaterThanOrEqual(1);
    for (const p of lidas) {
      expect(p.autorizacao).not.toBe(`Bearer ${pessoa.token}`);
      expect(doPayload(p.autorizacao!.replace(/^Bearer /, ''))).toMatchObject({ tipo: 'aplicativo', sub: hubNoIdentity });
    }
  });

  test('with no hub secret registered, a non-master listing answers from what the hub holds, without reading identity', async () => {
    const [pessoa] = await hub.pessoas(undefined);
    const arquivo = path.resolve(config().dataDir, `${config().dbPrefix}-credenciais.json`);
    // as on a host where the hub's credentials were never given: no file, no <SERVICE>_CLIENT_SECRET
    await rename(arquivo, `${arquivo}.fora`);
    esquecerTokenDoServico('hub');
    try {
      mockRegistros.length = 0;
      expect(await sincronizarAplicativos()).toEqual({ ignorado: 'sem token: o segredo do hub não está registrado' });
      // said where the operator looks, naming what to set
      expect(mockRegistros).toEqual([{ nivel: 'error', args: [{ configuracao: 'HUB_CLIENT_ID/HUB_CLIENT_SECRET' }, expect.stringContaining('credenciais próprias')] }]);
      const desde = relay.pedidos.length;
      const res = await hub.api.get('/aplicativo', { token: pessoa.token, query: { tamanho: 1000 } });
      expect(res.status).toBe(200);
      expect(res.body.total).toBeGreaterThan(0);
      expect(relay.pedidos.slice(desde)).toEqual([]);
    } finally {
      await rename(`${arquivo}.fora`, arquivo);
    }
  });

  test('a master listing while a non-master’s sync is under way gets a sync of its own, with the master’s token', async () => {
    const [pessoa] = await hub.pessoas(undefined);
    relay.mudar('atrasado');
    const desde = relay.pedidos.length;
    const doColaborador = hub.api.get('/aplicativo', { token: pessoa.token });
    await esperarAte(async () => listasNoIdentity(desde).length > 0, 'the non-master’s sync reading identity');

    const doMaster = await hub.sincronizar();
    expect((await doColaborador).status).toBe(200);
    const lidas = await esperarAte(async () => {
      const l = listasNoIdentity(desde);
      return l.some((p) => p.autorizacao === `Bearer ${admin}`) && l;
    }, 'the master’s sync reading identity');
    // the non-master's sync read first, with the hub's token; the master's ran after it
    expect(doPayload(lidas[0].autorizacao!.replace(/^Bearer /, ''))).toMatchObject({ tipo: 'aplicativo' });
    expect(doMaster.itens.length).toBeGreaterThan(0);
  });
});

describe('the hub’s own token is reused (SPEC 5.7, DESIGN §10 rate limit of /auth/token)', () => {
  test('repeated non-master listings ask identity for the hub’s token at most once: /auth/token is limited per address', async () => {
    const [pessoa] = await hub.pessoas(undefined);
    const desde = relay.pedidos.length;
    for (let i = 0; i < 3; i++) expect((await hub.api.get('/aplicativo', { token: pessoa.token })).status).toBe(200);
    expect(listasNoIdentity(desde)).toHaveLength(3);
    expect(relay.pedidos.slice(desde).filter((p) => p.caminho === '/auth/token').length).toBeLessThanOrEqual(1);
  });

  test('a token identity refuses is not reused: the next sync asks for a new one', async () => {
    const [pessoa] = await hub.pessoas(undefined);
    const listar = () => hub.api.get('/aplicativo', { token: pessoa.token });
    expect((await listar()).status).toBe(200);
    relay.mudar('recusa');
    expect((await listar()).status).toBe(200);
    relay.mudar('normal');
    const desde = relay.pedidos.length;
    expect((await listar()).status).toBe(200);
    expect(relay.pedidos.slice(desde).map((p) => `${p.metodo} ${p.caminho.split('?')[0]}`)).toEqual(['POST /auth/token', 'GET /aplicativo']);
  });

  test('a token identity refuses on a departure’s confirmation is not reused either: the sync goes on, and the next one asks for a new token and confirms it', async () => {
    const [pessoa] = await hub.pessoas(undefined);
    const listar = () => hub.api.get('/aplicativo', { token: pessoa.token });
    const saiu = await hub.criarNoIdentity(`${tag} Saiu, confirmação recusada`);
    expect((await listar()).status).toBe(200);
    expect(await hub.doHub(saiu.id)).toMatchObject({ ativo: true });

    relay.escondidos.add(saiu.id);
    relay.mudarPorId('recusa');
    let desde = relay.pedidos.length;
    expect((await listar()).status).toBe(200);
    // the listing took the token, the confirmation refused it: the application stays until confirmed
    const pedidos = () => relay.pedidos.slice(desde).map((p) => `${p.metodo} ${p.caminho.split('?')[0]}`);
    expect(pedidos()).toEqual(['GET /aplicativo', `GET /aplicativo/${saiu.id}`]);
    expect(await hub.doHub(saiu.id)).toMatchObject({ ativo: true });

    relay.mudarPorId('normal');
    desde = relay.pedidos.length;
    expect((await listar()).status).toBe(200);
    expect(pedidos()).toEqual(['POST /auth/token', 'GET /aplicativo', `GET /aplicativo/${saiu.id}`]);
    expect(await hub.doHub(saiu.id)).toBeUndefined();
  });
});

describe('identity failing does not stop the listing (SPEC 4.4 rule 3, DESIGN §5)', () => {
  test.each([
    ['dropping connections', 'fora'],
    ['answering an error', 'erro'],
    ['not listening at all', 'fechado'],
  ] as const)('identity %s: the listing answers 200 with the local applications, changes nothing, and a later listing catches up', async (_caso, modo) => {
    const antes = await hub.criarNoIdentity(`${tag} Antes ${modo}`);
    const pagina0 = await hub.sincronizar();
    const depois = await hub.criarNoIdentity(`${tag} Depois ${modo}`);

    if (modo === 'fechado') {
      const porta = await portaLivre();
      // the master's token is already verified and remembered, so it does not need identity's address
      config().servicos.identity.url = `http://127.0.0.1:${porta}`;
    } else relay.mudar(modo);
    const desde = relay.pedidos.length;
    try {
      const pagina = await hub.sincronizar();
      // the sync did try: through the relay, or at a closed port the relay never sees
      expect(listasNoIdentity(desde)).toHaveLength(modo === 'fechado' ? 0 : 1);
      expect(pagina.total).toBe(pagina0.total);
      expect(ids(pagina.itens)).toEqual(ids(pagina0.itens));
      expect(pagina.itens.some((a) => a.identificador_no_auth === antes.id)).toBe(true);
      expect(pagina.itens.some((a) => a.identificador_no_auth === depois.id)).toBe(false);
    } finally {
      // the next tests speak to identity through the relay again, whatever happened here
      relay.mudar('normal');
      config().servicos.identity.url = relay.endereco;
    }
    const seguinte = await hub.sincronizar();
    expect(seguinte.itens.filter((a) => a.identificador_no_auth === depois.id)).toHaveLength(1);
  });

  test('identity slow: the listing waits a bounded time (HUB_ESPERA_SYNC_MS), then answers with what is local', async () => {
    const antes = await hub.criarNoIdentity(`${tag} Antes lento`);
    await hub.sincronizar();
    const depois = await hub.criarNoIdentity(`${tag} Depois lento`);

    relay.mudar('lento');
    const inicio = Date.now();
    const pagina = await hub.sincronizar();
    const demora = Date.now() - inicio;
    expect(pagina.itens.some((a) => a.identificador_no_auth === antes.id)).toBe(true);
    expect(pagina.itens.some((a) => a.identificador_no_auth === depois.id)).toBe(false);
    expect(relay.quantasPresas()).toBe(1); // the sync did call identity, which is still holding the answer
    expect(demora).toBeGreaterThanOrEqual(ESPERA_MS - 50);
    expect(demora).toBeLessThan(ESPERA_MS + 3000);

    relay.mudar('normal');
    relay.soltar();
    // the held job ends (failed) at once: a new listing runs a new sync
    let seguinte: any;
    for (let i = 0; i < 20 && !seguinte?.itens.some((a: any) => a.identificador_no_auth === depois.id); i++) {
      seguinte = await hub.sincronizar();
    }
    expect(seguinte.itens.filter((a: any) => a.identificador_no_auth === depois.id)).toHaveLength(1);
  });
});

describe('concurrent listings (DESIGN §5)', () => {
  test('two syncs at once (a master’s and another’s, on two workers) run one after the other: the new application enters once, and neither fails', async () => {
    const noIdentity = await hub.criarNoIdentity(`${tag} Duas sincronizações`);
    relay.mudar('atrasado');
    const resultados = await Promise.all([sincronizarAplicativos(admin), sincronizarAplicativos(admin)]);
    // whichever went first created what identity had new, the second found it there
    const criados = resultados.map((r) => (r && 'criados' in r ? r.criados : r)).sort();
    expect(criados[0]).toBe(0);
    expect(criados[1]).toBeGreaterThanOrEqual(1);
    expect((await doTag()).filter((a) => a.identificador_no_auth === noIdentity.id)).toHaveLength(1);
  });

  test('five listings at once share one sync: identity is read once and the new application enters once', async () => {
    const noIdentity = await hub.criarNoIdentity(`${tag} Concorrido`);
    relay.mudar('atrasado');
    const desde = relay.pedidos.length;
    const paginas = await Promise.all(Array.from({ length: 5 }, () => hub.sincronizar()));
    expect(listasNoIdentity(desde)).toHaveLength(1);
    for (const p of paginas) expect(p.itens.filter((a) => a.identificador_no_auth === noIdentity.id)).toHaveLength(1);
    expect((await doTag()).filter((a) => a.identificador_no_auth === noIdentity.id)).toHaveLength(1);
  });
});
