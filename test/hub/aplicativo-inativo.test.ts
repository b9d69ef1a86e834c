import * as sincronizacao from '../../api/hub/sincronizacao';
import { novaConexao } from '../../lib/database';
import { Aplicativo, Entrega, Evento } from '../../models/hub';
import { fila } from '../../queues/fila';
import { idDoAplicativoDe } from '../../lib/credenciais';
import { filaHubEntrega } from '../../queues/hub-entrega';
import { esperarOutraConexao } from '../helpers/espera';
import { esperarProblema } from '../helpers/http';
import { iniciarSuite, SuiteDeTeste } from '../helpers/suite';
import { AplicativoDeTeste, dormir, esperarAte, hubDe, Hub, iniciarReceptor, Receptor, Responder } from './apoio-entregas';
import { identityPorRetransmissor } from '../helpers/retransmissor-do-identity';

/**
 * SPEC §3 Hub application activity: an application that left identity becomes inactive while it
 * owns types or has subscriptions. Decided for the hub (docs/decisoes.md): an inactive application
 * receives nothing (no delivery of events published meanwhile, its pending ones cancelled at once,
 * nothing sent again) and publishes nothing; back in identity, its active subscriptions receive
 * the events published from then on. Its subscriptions' own `ativa` never changes. Identity's
 * listings reach the hub through a relay that can leave an application out (test/helpers/retransmissor-do-identity.ts);
 * retries wait 1.5 s (±20%), long enough to act between two attempts.
 */

let suite: SuiteDeTeste;
let hub: Hub;
let receptor: Receptor;
let relay: Awaited<ReturnType<typeof identityPorRetransmissor>>;
/** paths the subscriber fails on, besides those under /falha */
const falhando = new Set<string>();
const responderPadrao: Responder = (r) => (r.caminho.startsWith('/falha') || falhando.has(r.caminho) ? 500 : 200);

beforeAll(async () => {
  suite = await iniciarSuite(['identity', 'hub'], { env: { HUB_RETRY_SCHEDULE_MS: '1500' } });
  relay = await identityPorRetransmissor(suite.url.identity);
  hub = hubDe(suite);
  receptor = await iniciarReceptor(responderPadrao);
});
afterAll(async () => {
  await receptor?.fechar();
  await relay?.fechar();
  await suite?.encerrar();
});
afterEach(() => {
  receptor.responder = responderPadrao;
  relay.perdidos.clear();
  relay.mudarPorId('normal');
});

const noCaminho = (caminho: string) => receptor.recebidas.filter((r) => r.caminho === caminho);
/** What the hub asked identity about applications since `desde`: listings (`?`) and reads by id. */
const noIdentity = (desde: number) => relay.pedidos.slice(desde).filter((p) => p.metodo === 'GET' && p.caminho.startsWith('/aplicativo'));

/** The application's record at the hub as it is (GET by id does not sync). */
async function noHub(app: AplicativoDeTeste) {
  const res = await hub.api.get(`/aplicativo/${app.hub.id}`, { token: await hub.admin() });
  expect(res.status).toBe(200);
  return res.body;
}

/** A master's listing: the hub syncs its applications with identity first (SPEC 4.4 rule 3). */
async function sincronizar() {
  expect((await hub.api.get('/aplicativo', { token: await hub.admin(), query: { tamanho: 1000 } })).status).toBe(200);
}

/** The application is gone from identity's listings, and the next listing makes it inactive. */
async function sair(app: AplicativoDeTeste) {
  relay.escondidos.add(app.id);
  await sincronizar();
  expect(await noHub(app)).toMatchObject({ ativo: false });
}

/** Back in identity's listings: the next listing makes it active again. */
async function voltar(app: AplicativoDeTeste) {
  relay.escondidos.delete(app.id);
  await sincronizar();
  expect(await noHub(app)).toMatchObject({ ativo: true });
}

describe('deactivated in identity (decided for the hub: whether an application is active follows identity)', () => {
  test('made inactive at the next listing, its pending deliveries cancelled and nothing more delivered; active there again, it is active here and receives', async () => {
    falhando.add('/desativado-no-identity');
    const c = await hub.cenario({ url_de_destino: receptor.url('/desativado-no-identity'), maximo_de_tentativas: 5 });
    const pendente = await hub.entregaDoEvento(c.assinatura.id, (await c.publicar({ n: 1 })).id);
    await hub.esperarPrimeiraFalha(pendente.id);
    const mudarNoIdentity = async (ativo: boolean) =>
      expect((await hub.identity.api.patch(`/aplicativo/${c.assinante.id}`, { token: await hub.admin(), body: { ativo } })).status).toBe(200);

    await mudarNoIdentity(false);
    await sincronizar();
    expect(await noHub(c.assinante)).toMatchObject({ ativo: false, quantidade_de_assinaturas: 1 });
    expect(await hub.entrega(pendente.id)).toMatchObject({ situacao: 'cancelada', proxima_tentativa_em: null, tentativas: 1 });
    expect((await c.publicar({ n: 2 })).entregas).toBe(0);
    // listed again while inactive there: it stays inactive
    await sincronizar();
    expect(await noHub(c.assinante)).toMatchObject({ ativo: false });

    falhando.delete('/desativado-no-identity');
    await mudarNoIdentity(true);
    await sincronizar();
    expect(await noHub(c.assinante)).toMatchObject({ ativo: true });
    const { id } = await c.publicar({ n: 3 });
    await esperarAte(() => noCaminho('/desativado-no-identity').some((r) => r.corpo?.id === id), 'the delivery once active again');
    expect(await hub.assinatura(c.assinatura.id)).toMatchObject({ ativa: true });
  });

  test('an application new to the hub that identity lists as inactive enters inactive', async () => {
    const app = await hub.identity.criarAplicativo(`Inativo de início ${Date.now()}`);
    expect((await hub.identity.api.patch(`/aplicativo/${app.id}`, { token: await hub.admin(), body: { ativo: false } })).status).toBe(200);
    await sincronizar();
    const lista = (await hub.api.get('/aplicativo/filtro', { token: await hub.admin(), query: { nome: app.nome } })).body;
    expect(lista.map((a: any) => [a.identificador_no_auth, a.ativo])).toEqual([[app.id, false]]);
    // listed and counted all the same: only deletion takes one out (SPEC 4.4 rule 1)
    const pagina = (await hub.api.get('/aplicativo', { token: await hub.admin(), query: { tamanho: 1000 } })).body;
    expect(pagina.itens.filter((a: any) => a.id === lista[0].id)).toEqual([expect.objectContaining({ ativo: false })]);
    expect(pagina.total).toBe(await Aplicativo.count());
  });
});

describe('an inactive application receives nothing', () => {
  test('events published while the subscriber is inactive make no delivery for its subscriptions; other subscribers get theirs, and its subscription stays active', async () => {
    const c = await hub.cenario({ url_de_destino: receptor.url('/sem-entrega') });
    const outra = await hub.assinar(await hub.aplicativo(), c.tipo.id, { url_de_destino: receptor.url('/com-entrega') });
    await sair(c.assinante);

    const { id, entregas } = await c.publicar();
    expect(entregas).toBe(1);
    await esperarAte(() => noCaminho('/com-entrega').length, 'the delivery to the active subscriber');
    expect((await hub.entregas({ assinatura_id: c.assinatura.id })).total).toBe(0);
    expect((await hub.entregas({ assinatura_id: outra.id })).itens.map((e: any) => e.evento_id)).toEqual([id]);
    await dormir(200);
    expect(noCaminho('/sem-entrega')).toEqual([]);
    // the enriched answers: the subscription keeps its own state, the application counts it
    expect(await hub.assinatura(c.assinatura.id)).toMatchObject({ ativa: true, entregas_na_fila_de_erro: 0, ultima_entrega_em: null });
    expect(await noHub(c.assinante)).toMatchObject({ ativo: false, quantidade_de_assinaturas: 1 });
  });

  test('the sync making it inactive cancels its subscriptions’ pending deliveries at once and removes their jobs; no further call; its error queue and other subscribers are untouched', async () => {
    const c = await hub.cenario({ url_de_destino: receptor.url('/falha/sai'), maximo_de_tentativas: 5 });
    const outra = await hub.assinar(await hub.aplicativo(), c.tipo.id, { url_de_destino: receptor.url('/falha/fica'), maximo_de_tentativas: 5 });
    // a second subscription of the same application, whose delivery sits in the error queue
    const tipo2 = await hub.tipo(c.publicador);
    const comErro = await hub.assinar(c.assinante, tipo2.id, { url_de_destino: receptor.url('/falha/erro'), maximo_de_tentativas: 1 });
    const naFila = await hub.entregaDoEvento(comErro.id, (await hub.publicar(c.publicador, { tipo: tipo2.nome, dados: { n: 9 } })).body.id);
    await hub.esperarSituacao(naFila.id, 'fila_de_erro');

    const eventos = [await c.publicar({ n: 1 }), await c.publicar({ n: 2 })];
    const entregas = await Promise.all(eventos.map((e) => hub.entregaDoEvento(c.assinatura.id, e.id)));
    for (const e of entregas) await hub.esperarPrimeiraFalha(e.id);
    const q = fila(filaHubEntrega);
    for (const e of entregas) expect(await q.getJob(e.id)).toBeDefined();

    await sair(c.assinante);
    // at once: the listing's answer already finds them cancelled
    for (const e of entregas) {
      expect(await hub.entrega(e.id)).toMatchObject({ situacao: 'cancelada', proxima_tentativa_em: null, tentativas: 1 });
    }
    await esperarAte(async () => (await Promise.all(entregas.map((e) => q.getJob(e.id)))).every((j) => !j), 'the cancelled deliveries’ jobs removed');
    expect((await hub.entregas({ assinatura_id: c.assinatura.id, situacao: 'pendente' })).total).toBe(0);
    expect((await hub.entregas({ assinatura_id: c.assinatura.id, situacao: 'cancelada' })).total).toBe(2);

    // the next attempts were due in about 1.5 s: the other subscriber's come, the cancelled ones' never
    await esperarAte(() => noCaminho('/falha/fica').length >= 4, 'the second attempts of the other subscription', 5000);
    await dormir(1000);
    expect(noCaminho('/falha/sai')).toHaveLength(2);
    expect((await hub.entregas({ assinatura_id: outra.id, situacao: 'pendente' })).total).toBe(2);
    // the error queue is not pending: it stays, and is counted; no subscription changed its own state
    expect((await hub.entrega(naFila.id)).situacao).toBe('fila_de_erro');
    expect(await hub.assinatura(comErro.id)).toMatchObject({ ativa: true, entregas_na_fila_de_erro: 1 });
    expect(await hub.assinatura(c.assinatura.id)).toMatchObject({ ativa: true, entregas_na_fila_de_erro: 0 });
    expect(await noHub(c.assinante)).toMatchObject({ ativo: false, quantidade_de_assinaturas: 2 });
    await hub.api.patch(`/assinatura/${outra.id}`, { token: await hub.admin(), body: { ativa: false } });
  });

  test('an attempt in flight when the sync makes the subscriber inactive ends and is recorded; the delivery stays cancelled and no other attempt starts', async () => {
    receptor.responder = (r) => (r.caminho === '/em-voo' ? { status: 500, atrasoMs: 1500 } : 200);
    const c = await hub.cenario({ url_de_destino: receptor.url('/em-voo'), maximo_de_tentativas: 3 });
    const entrega = await hub.entregaDoEvento(c.assinatura.id, (await c.publicar()).id);
    await esperarAte(() => noCaminho('/em-voo').length, 'the attempt in flight');

    await sair(c.assinante);
    expect(noCaminho('/em-voo')).toHaveLength(1);
    const final = await esperarAte(async () => {
      const d = await hub.entrega(entrega.id);
      return d.historico.length === 1 && d;
    }, 'the attempt recorded');
    expect(final).toMatchObject({ situacao: 'cancelada', proxima_tentativa_em: null });
    await dormir(2300);
    expect(noCaminho('/em-voo')).toHaveLength(1);
    expect((await hub.entrega(entrega.id)).situacao).toBe('cancelada');
  });

  test('a delivery still pending for an application already inactive (inactive before inactive ones stopped receiving) is cancelled at its turn, not sent', async () => {
    const c = await hub.cenario({ url_de_destino: receptor.url('/falha/ja-inativo'), maximo_de_tentativas: 5 });
    const entrega = await hub.entregaDoEvento(c.assinatura.id, (await c.publicar()).id);
    await hub.esperarPrimeiraFalha(entrega.id);
    // the application's row alone changes, its pending delivery left as it was
    await Aplicativo.update({ ativo: false }, { where: { id: c.assinante.hub.id } });

    const final = await hub.esperarSituacao(entrega.id, 'cancelada', 5000);
    expect(final.historico).toHaveLength(1);
    expect(noCaminho('/falha/ja-inativo')).toHaveLength(1);
  });

  test('nothing is sent to it again: replays answer 409 saying why while it is out, and work again once it is back', async () => {
    falhando.add('/reenvio');
    const c = await hub.cenario({ url_de_destino: receptor.url('/reenvio'), maximo_de_tentativas: 1 });
    const falha = await hub.entregaDoEvento(c.assinatura.id, (await c.publicar()).id);
    await hub.esperarSituacao(falha.id, 'fila_de_erro');
    await sair(c.assinante);
    falhando.delete('/reenvio');

    const token = await hub.admin();
    expect(esperarProblema(await hub.api.post(`/entrega/${falha.id}/reenviar`, { token }), 409).detail).toMatch(/aplicativo assinante está inativo/);
    expect(esperarProblema(await hub.api.post(`/assinatura/${c.assinatura.id}/reenviar_falhas`, { token }), 409).detail).toMatch(
      /aplicativo assinante está inativo/,
    );
    await dormir(150);
    expect(noCaminho('/reenvio')).toHaveLength(1);
    expect((await hub.entrega(falha.id)).situacao).toBe('fila_de_erro');
    expect(await hub.assinatura(c.assinatura.id)).toMatchObject({ ativa: true, entregas_na_fila_de_erro: 1 });

    await voltar(c.assinante);
    expect((await hub.api.post(`/assinatura/${c.assinatura.id}/reenviar_falhas`, { token })).body).toEqual({ reenviadas: 1 });
    await hub.esperarSituacao(falha.id, 'entregue');
  });
});

describe('only identity confirming the departure costs deliveries: its listing can miss an application still there', () => {
  test('missed by a listing while its deliveries are pending: nothing changes, no delivery cancelled, and it keeps publishing and receiving', async () => {
    const c = await hub.cenario({ url_de_destino: receptor.url('/falha/perdido'), maximo_de_tentativas: 5 });
    const entrega = await hub.entregaDoEvento(c.assinatura.id, (await c.publicar({ n: 1 })).id);
    await hub.esperarPrimeiraFalha(entrega.id);

    relay.perdidos.add(c.assinante.id);
    relay.perdidos.add(c.publicador.id);
    await sincronizar();
    expect(await noHub(c.assinante)).toMatchObject({ ativo: true });
    expect(await noHub(c.publicador)).toMatchObject({ ativo: true });
    expect(await hub.entrega(entrega.id)).toMatchObject({ situacao: 'pendente', tentativas: 1 });
    expect(await fila(filaHubEntrega).getJob(entrega.id)).toBeDefined();
    expect((await c.publicar({ n: 2 })).entregas).toBe(1);
    await esperarAte(async () => (await hub.entrega(entrega.id)).tentativas >= 2, 'the pending delivery’s next attempt');
    await hub.api.patch(`/assinatura/${c.assinatura.id}`, { token: await hub.admin(), body: { ativa: false } });
  });

  test('identity failing as the sync confirms the departure: nothing changes and no delivery is cancelled until a sync confirms it', async () => {
    const c = await hub.cenario({ url_de_destino: receptor.url('/falha/sem-confirmacao'), maximo_de_tentativas: 5 });
    const entrega = await hub.entregaDoEvento(c.assinatura.id, (await c.publicar()).id);
    await hub.esperarPrimeiraFalha(entrega.id);

    relay.escondidos.add(c.assinante.id);
    relay.mudarPorId('erro');
    await sincronizar();
    expect(await noHub(c.assinante)).toMatchObject({ ativo: true });
    expect(await hub.entrega(entrega.id)).toMatchObject({ situacao: 'pendente' });

    relay.mudarPorId('normal');
    await sincronizar();
    expect(await noHub(c.assinante)).toMatchObject({ ativo: false });
    expect(await hub.entrega(entrega.id)).toMatchObject({ situacao: 'cancelada', proxima_tentativa_em: null });
  });
});

describe('the sync racing a publication or a replay: either counted or not, never half', () => {
  test('made inactive while a publication stores its deliveries: the publication waits for the sync, stores the delivery cancelled, and it is never sent', async () => {
    const c = await hub.cenario({ url_de_destino: receptor.url('/corrida-sync-primeiro') });
    const conexao = await novaConexao('hub');
    let publicacao: ReturnType<typeof hub.publicar>;
    try {
      // the sync midway: the application's row locked FOR UPDATE, as it decides
      await conexao.query('START TRANSACTION');
      await conexao.query('SELECT id FROM aplicativo WHERE id = ? FOR UPDATE', [c.assinante.hub.id]);
      publicacao = hub.publicar(c.publicador, { tipo: c.tipo.nome, dados: { n: 1 } });
      await esperarOutraConexao(conexao, 'the publication waiting on the subscriber', ['%JOIN aplicativo%LOCK IN SHARE MODE%']);
      await conexao.query('UPDATE aplicativo SET ativo = 0 WHERE id = ?', [c.assinante.hub.id]);
      await conexao.query('COMMIT');
    } finally {
      await conexao.end();
    }
    const res = await publicacao!;
    expect(res.body).toEqual({ id: expect.any(String), entregas: 1 });
    expect((await Entrega.findOne({ where: { evento_id: res.body.id } }))!.situacao).toBe('cancelada');
    // still in identity: the next listing makes it active again, and the delivery stays cancelled
    await voltar(c.assinante);
    await dormir(500);
    expect(noCaminho('/corrida-sync-primeiro')).toEqual([]);
  });

  test('a publication that read the subscriber first is counted: the sync waits for it, then cancels its delivery', async () => {
    const c = await hub.cenario({ url_de_destino: receptor.url('/falha/corrida-publicacao-primeiro') });
    // subscribed later, so locked later by the publication: held here, it stops the publication past the first subscriber
    const segunda = await hub.assinar(await hub.aplicativo(), c.tipo.id, { url_de_destino: receptor.url('/corrida-segunda') });
    // no attempt meanwhile: what cancels the delivery is the sync, not an attempt finding the subscriber inactive
    const q = fila(filaHubEntrega);
    await q.pause();
    try {
      const conexao = await novaConexao('hub');
      let publicacao: ReturnType<typeof hub.publicar>;
      let listagem: Promise<void>;
      try {
        await conexao.query('START TRANSACTION');
        await conexao.query('SELECT id FROM assinatura WHERE id = ? FOR UPDATE', [segunda.id]);
        publicacao = hub.publicar(c.publicador, { tipo: c.tipo.nome, dados: { n: 1 } });
        await esperarOutraConexao(conexao, 'the publication waiting on the second subscription', ['%JOIN aplicativo%LOCK IN SHARE MODE%']);
        relay.escondidos.add(c.assinante.id);
        listagem = sincronizar();
        await esperarOutraConexao(conexao, 'the sync waiting on the application', ['%FROM `aplicativo`%FOR UPDATE%']);
        await conexao.query('COMMIT');
      } finally {
        await conexao.end();
      }
      const res = await publicacao!;
      expect(res.body).toEqual({ id: expect.any(String), entregas: 2 });
      await listagem!;
      expect(await noHub(c.assinante)).toMatchObject({ ativo: false });
      const entrega = await hub.entregaDoEvento(c.assinatura.id, res.body.id);
      expect(await hub.entrega(entrega.id)).toMatchObject({ situacao: 'cancelada', proxima_tentativa_em: null });
      await q.resume();
      await hub.esperarSituacao((await hub.entregaDoEvento(segunda.id, res.body.id)).id, 'entregue');
      expect(noCaminho('/falha/corrida-publicacao-primeiro')).toEqual([]);
    } finally {
      await q.resume();
    }
  });

  test('made inactive while a replay waits for the subscriber: the replay answers 409 and the delivery stays in the error queue', async () => {
    const c = await hub.cenario({ url_de_destino: receptor.url('/falha/corrida-reenvio'), maximo_de_tentativas: 1 });
    const falha = await hub.entregaDoEvento(c.assinatura.id, (await c.publicar()).id);
    await hub.esperarSituacao(falha.id, 'fila_de_erro');
    const token = await hub.admin();
    const conexao = await novaConexao('hub');
    let reenvio: ReturnType<typeof hub.api.post>;
    try {
      await conexao.query('START TRANSACTION');
      await conexao.query('SELECT id FROM aplicativo WHERE id = ? FOR UPDATE', [c.assinante.hub.id]);
      reenvio = hub.api.post(`/entrega/${falha.id}/reenviar`, { token });
      await esperarOutraConexao(conexao, 'the replay waiting on the subscriber', ['%FROM `aplicativo`%LOCK IN SHARE MODE%']);
      await conexao.query('UPDATE aplicativo SET ativo = 0 WHERE id = ?', [c.assinante.hub.id]);
      await conexao.query('COMMIT');
    } finally {
      await conexao.end();
    }
    expect(esperarProblema(await reenvio!, 409).detail).toMatch(/aplicativo assinante está inativo/);
    expect((await hub.entrega(falha.id)).situacao).toBe('fila_de_erro');
    await dormir(200);
    expect(noCaminho('/falha/corrida-reenvio')).toHaveLength(1);
  });
});

describe('an inactive application publishes nothing', () => {
  test('a publication by an application that left identity, its token still valid: 403 saying it is inactive, and nothing changes', async () => {
    const c = await hub.cenario({ url_de_destino: receptor.url('/publicador-saiu') });
    // gone from identity itself, not only from its listings: its token verifies until it expires
    expect((await hub.identity.api.del(`/aplicativo/${c.publicador.id}`, { token: await hub.admin() })).status).toBe(204);
    await sincronizar();
    const antes = await noHub(c.publicador);
    expect(antes).toMatchObject({ ativo: false, quantidade_de_tipos_de_evento: 1 });

    const res = await hub.publicar(c.publicador, { tipo: c.tipo.nome, dados: { n: 1 }, id: 'depois-de-sair' });
    expect(esperarProblema(res, 403).detail).toMatch(/inativo no hub \(saiu do identity\)/);
    // permission before input (DESIGN §10): whatever its body, the same 403
    for (const body of [{}, { tipo: 1, dados: 'x' }]) expect(esperarProblema(await hub.api.post('/eventos', { token: c.publicador.token, body }), 403).detail).toMatch(/inativo/);
    expect(await Evento.count({ where: { tipo_de_evento_id: c.tipo.id } })).toBe(0);
    expect((await hub.entregas({ assinatura_id: c.assinatura.id })).total).toBe(0);
    expect(await noHub(c.publicador)).toEqual(antes);
    await dormir(200);
    expect(noCaminho('/publicador-saiu')).toEqual([]);
  });

  test('its publications make the hub read identity once a minute: one arriving as the sync ends joins it, later ones run none, and the sync reads nothing by id', async () => {
    const c = await hub.cenario({ url_de_destino: receptor.url('/publicador-insistente') });
    expect((await hub.identity.api.del(`/aplicativo/${c.publicador.id}`, { token: await hub.admin() })).status).toBe(204);
    await sincronizar();
    expect(await noHub(c.publicador)).toMatchObject({ ativo: false });

    const publicar = () => hub.publicar(c.publicador, { tipo: c.tipo.nome, dados: { n: 1 } });
    const real = sincronizacao.esperarSincronizacao;
    let terminou!: () => void;
    const sincronizada = new Promise<void>((r) => (terminou = r));
    // the sync over, the first publication not yet back from reading the hub's copy
    const espiao = jest.spyOn(sincronizacao, 'esperarSincronizacao').mockImplementation(async (quem) => {
      const jaRodava = await real(quem);
      terminou();
      await dormir(300);
      return jaRodava;
    });
    const desde = relay.pedidos.length;
    try {
      const primeira = publicar();
      await Promise.race([sincronizada, primeira]);
      for (const res of [...(await Promise.all(Array.from({ length: 3 }, publicar))), await primeira]) esperarProblema(res, 403);
    } finally {
      espiao.mockRestore();
    }
    for (let i = 0; i < 3; i++) esperarProblema(await publicar(), 403);
    // the listing, in one page; an application already inactive and still in use is not read by id
    expect(noIdentity(desde).map((p) => p.caminho.split('?')[0])).toEqual(['/aplicativo']);
    expect(await Evento.count({ where: { tipo_de_evento_id: c.tipo.id } })).toBe(0);
  });
});

describe('back in identity', () => {
  test('back in identity, it publishes at once: its first publication makes the hub sync, with the hub’s own token, instead of waiting for a listing', async () => {
    const c = await hub.cenario({ url_de_destino: receptor.url('/volta-publicando') });
    await sair(c.publicador);
    // back in identity; nobody lists the hub's applications
    relay.escondidos.delete(c.publicador.id);
    const desde = relay.pedidos.length;

    const { id, entregas } = await c.publicar({ n: 1 });
    expect(entregas).toBe(1);
    const lidas = noIdentity(desde);
    expect(lidas.map((p) => p.caminho.split('?')[0])).toEqual(['/aplicativo']);
    const token = lidas[0].autorizacao!.replace(/^Bearer /, '');
    expect(JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString('utf8'))).toMatchObject({ sub: await idDoAplicativoDe('hub') });
    expect(await noHub(c.publicador)).toMatchObject({ ativo: true });
    await hub.esperarSituacao((await hub.entregaDoEvento(c.assinatura.id, id)).id, 'entregue');
  });

  test('active again with deliveries its cancellation left pending (a process stopped midway): the sync cancels them as it makes it active, and none is sent', async () => {
    const c = await hub.cenario({ url_de_destino: receptor.url('/falha/sobra-do-app'), maximo_de_tentativas: 5 });
    const entrega = await hub.entregaDoEvento(c.assinatura.id, (await c.publicar({ n: 1 })).id);
    await hub.esperarPrimeiraFalha(entrega.id);
    const q = fila(filaHubEntrega);
    // no attempt meanwhile: an attempt would cancel it itself, finding the subscriber inactive
    await q.pause();
    const espiao = jest.spyOn(Entrega, 'update');
    try {
      // made inactive, its process stopped before the cancellation
      await Aplicativo.update({ ativo: false }, { where: { id: c.assinante.hub.id } });
      expect((await hub.entrega(entrega.id)).situacao).toBe('pendente');
      await voltar(c.assinante);
      expect(await hub.entrega(entrega.id)).toMatchObject({ situacao: 'cancelada', proxima_tentativa_em: null });
      // a page at a time before the application's lock, not in one statement under it
      const paginas = espiao.mock.calls.flatMap(([valores, opcoes], i) =>
        (valores as { situacao?: string }).situacao === 'cancelada' && (opcoes as { limit?: number }).limit ? [espiao.mock.results[i].value] : [],
      );
      expect(await Promise.all(paginas)).toEqual([[1]]);
    } finally {
      espiao.mockRestore();
      await q.resume();
    }
    // past when its next attempt was due (1.5 s + 20% after the first)
    await dormir(1900);
    expect(noCaminho('/falha/sobra-do-app')).toHaveLength(1);
    await hub.api.patch(`/assinatura/${c.assinatura.id}`, { token: await hub.admin(), body: { ativa: false } });
  });

  test('active again: its active subscriptions receive the events published from then on; those of while it was out are not sent, its cancelled deliveries stay cancelled, and its inactive subscription stays inactive', async () => {
    falhando.add('/volta');
    const c = await hub.cenario({ url_de_destino: receptor.url('/volta'), maximo_de_tentativas: 5 });
    const tipo2 = await hub.tipo(c.publicador);
    const parada = await hub.assinar(c.assinante, tipo2.id, { url_de_destino: receptor.url('/volta-parada'), ativa: false });
    const antes = await c.publicar({ n: 1 });
    const cancelada = await hub.entregaDoEvento(c.assinatura.id, antes.id);
    await hub.esperarPrimeiraFalha(cancelada.id);

    await sair(c.assinante);
    expect((await c.publicar({ n: 2 })).entregas).toBe(0);
    falhando.delete('/volta');
    await voltar(c.assinante);

    const depois = await c.publicar({ n: 3 });
    expect(depois.entregas).toBe(1);
    await hub.esperarSituacao((await hub.entregaDoEvento(c.assinatura.id, depois.id)).id, 'entregue');
    const doInativo = await hub.publicar(c.publicador, { tipo: tipo2.nome, dados: { n: 4 } });
    expect(doInativo.body.entregas).toBe(0);
    // past when the cancelled delivery's next attempt was due
    await dormir(1900);
    expect((await hub.entrega(cancelada.id)).situacao).toBe('cancelada');
    expect(noCaminho('/volta').map((r) => r.corpo.dados)).toEqual([{ n: 1 }, { n: 3 }]);
    expect(noCaminho('/volta-parada')).toEqual([]);
    expect(await hub.assinatura(c.assinatura.id)).toMatchObject({ ativa: true });
    expect(await hub.assinatura(parada.id)).toMatchObject({ ativa: false });
  });
});
