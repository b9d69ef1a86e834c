import { randomUUID } from 'node:crypto';
import { CONTAGEM_DAS_ENTREGAS, purgarHistorico } from '../../api/hub/entregas';
import { banco, dataSql, novaConexao } from '../../lib/database';
import { Entrega, Evento, TentativaDeEntrega } from '../../models/hub';
import { fila } from '../../queues/fila';
import { filaHubEntrega } from '../../queues/hub-entrega';
import { esperarOutraConexao } from '../helpers/espera';
import { esperarProblema } from '../helpers/http';
import { dormir, esperarAte, hubNesteArquivo, marca } from './apoio-entregas';

/**
 * Monitoring (DESIGN §5, area `monitoramento`): GET /entrega (page; filters assinatura_id and
 * situacao), GET /entrega/{id} with its attempts, POST /entrega/{id}/reenviar and
 * POST /assinatura/{id}/reenviar_falhas (send error-queue deliveries again); and retention:
 * history older than HUB_RETENCAO_DIAS is purged (SPEC §6 rule 6: "kept until the retention
 * period expires").
 */

/** paths whose calls fail with 500 until taken out */
const falhando = new Set<string>();
/** paths answered 200 after 1.2 s */
const lentos = new Set<string>();

const t = hubNesteArquivo({
  responder: (r) => (r.caminho === '/demora' || lentos.has(r.caminho) ? { status: 200, atrasoMs: 1200 } : falhando.has(r.caminho) ? 500 : 200),
});

const noCaminho = (caminho: string) => t.receptor.recebidas.filter((r) => r.caminho === caminho);

/** A subscription whose deliveries end in the error queue (one attempt each) while its path fails. */
async function cenarioComFalhas(caminho: string, quantas: number) {
  falhando.add(caminho);
  return t.hub.cenarioNaFilaDeErro(t.receptor.url(caminho), quantas);
}

const CAMPOS_DA_ENTREGA = [
  'assinatura_id',
  'atualizada_em',
  'criada_em',
  'entregue_em',
  'evento_id',
  'id',
  'proxima_tentativa_em',
  'situacao',
  'tentativas',
  'ultimo_erro',
];

describe('GET /entrega and GET /entrega/{id}', () => {
  test('a page of deliveries, newest first, filtered by assinatura_id and by situacao', async () => {
    const boa = await t.hub.cenario({ url_de_destino: t.receptor.url('/lista/boa') });
    const publicados = [];
    for (let i = 0; i < 3; i++) publicados.push((await boa.publicar({ n: i })).id);
    for (const id of publicados) await t.hub.esperarSituacao((await t.hub.entregaDoEvento(boa.assinatura.id, id)).id, 'entregue');
    const { c: ruim, entregas: [falha] } = await cenarioComFalhas('/lista/ruim', 1);

    const pagina = await t.hub.entregas({ assinatura_id: boa.assinatura.id });
    expect(pagina).toEqual({ itens: expect.any(Array), pagina: 1, tamanho: 500, total: 3, estimado: false });
    expect(pagina.itens.map((e: any) => e.evento_id)).toEqual([...publicados].reverse());
    for (const e of pagina.itens) {
      expect(Object.keys(e).sort()).toEqual(CAMPOS_DA_ENTREGA);
      expect(e).toMatchObject({ assinatura_id: boa.assinatura.id, situacao: 'entregue', tentativas: 1 });
    }

    const paginada = await t.hub.entregas({ assinatura_id: boa.assinatura.id, tamanho: 2, pagina: 2 });
    expect(paginada).toMatchObject({ pagina: 2, tamanho: 2, total: 3 });
    expect(paginada.itens.map((e: any) => e.evento_id)).toEqual([publicados[0]]);

    expect((await t.hub.entregas({ assinatura_id: ruim.assinatura.id, situacao: 'fila_de_erro' })).itens.map((e: any) => e.id)).toEqual([falha.id]);
    expect((await t.hub.entregas({ assinatura_id: ruim.assinatura.id, situacao: 'entregue' })).total).toBe(0);
    expect((await t.hub.entregas({ assinatura_id: boa.assinatura.id, situacao: 'fila_de_erro' })).total).toBe(0);
    // situacao alone spans subscriptions
    const naFila = (await t.hub.entregas({ situacao: 'fila_de_erro' })).itens as any[];
    expect(naFila.every((e) => e.situacao === 'fila_de_erro')).toBe(true);
    expect(naFila.map((e) => e.id)).toContain(falha.id);
    // past the count's cap, total stops there and says it is an estimate; the page itself is whole
    const maxima = CONTAGEM_DAS_ENTREGAS.maxima;
    CONTAGEM_DAS_ENTREGAS.maxima = 2;
    try {
      const estimada = await t.hub.entregas({ assinatura_id: boa.assinatura.id });
      expect(estimada).toMatchObject({ total: 2, estimado: true });
      expect(estimada.itens).toHaveLength(3);
      // a page starts within the deliveries counted: the third delivery is on no page of one
      const deUma = async (pagina: number) => (await t.hub.entregas({ assinatura_id: boa.assinatura.id, tamanho: 1, pagina })).itens.map((e: any) => e.evento_id);
      expect([...(await deUma(1)), ...(await deUma(2))]).toEqual([publicados[2], publicados[1]]);
      expect(await deUma(3)).toEqual([]);
      expect(await t.hub.entregas({ assinatura_id: boa.assinatura.id, situacao: 'fila_de_erro' })).toMatchObject({ total: 0, estimado: false });
    } finally {
      CONTAGEM_DAS_ENTREGAS.maxima = maxima;
    }
    // a page far past the deliveries is empty
    expect(await t.hub.entregas({ assinatura_id: boa.assinatura.id, pagina: Number.MAX_SAFE_INTEGER, tamanho: 500 })).toEqual({
      itens: [],
      pagina: Number.MAX_SAFE_INTEGER,
      tamanho: 500,
      total: 3,
      estimado: false,
    });
    // an unknown situacao is a validation error
    esperarProblema(await t.hub.api.get('/entrega', { token: await t.hub.admin(), query: { situacao: 'perdida' } }), 400);
  });

  test("a subscription's deliveries in every situation, listed together, are one order across pages: newest first, then by id", async () => {
    const c = await t.hub.cenario({ url_de_destino: t.receptor.url('/lista/mistura') });
    const { id: eventoId } = await c.publicar({ n: 0 });
    const [publicada] = (await t.hub.entregas({ assinatura_id: c.assinatura.id })).itens;
    await t.hub.esperarSituacao(publicada.id, 'entregue');
    // the seven newest are delivered, the rest interleave the four situations; pairs share a millisecond
    const base = Date.now() + 60_000;
    const situacoes = ['pendente', 'entregue', 'fila_de_erro', 'cancelada'] as const;
    const linhas = Array.from({ length: 15 }, (_, i) => ({
      id: randomUUID(),
      evento_id: eventoId,
      assinatura_id: c.assinatura.id,
      situacao: i < 7 ? 'entregue' : situacoes[i % 4],
      criada_em: new Date(base - Math.floor(i / 2) * 1000),
      atualizada_em: new Date(base),
    }));
    await Entrega.sequelize!.getQueryInterface().bulkInsert('entrega', linhas);
    const esperada = [
      ...[...linhas].sort((a, b) => b.criada_em.getTime() - a.criada_em.getTime() || (a.id < b.id ? 1 : -1)).map((l) => l.id),
      publicada.id,
    ];

    const paginas = [];
    for (let pagina = 1; pagina <= 4; pagina++) {
      const p = await t.hub.entregas({ assinatura_id: c.assinatura.id, tamanho: 5, pagina });
      expect(p).toMatchObject({ total: 16, pagina, tamanho: 5 });
      paginas.push(...p.itens.map((e: any) => e.id));
    }
    expect(paginas).toEqual(esperada);
    expect((await t.hub.entregas({ assinatura_id: c.assinatura.id, tamanho: 500 })).itens.map((e: any) => e.id)).toEqual(esperada);
    // a situation's own listing keeps the same order
    const naFila = (await t.hub.entregas({ assinatura_id: c.assinatura.id, situacao: 'fila_de_erro', tamanho: 2, pagina: 2 })).itens;
    expect(naFila.map((e: any) => e.id)).toEqual(esperada.filter((id) => linhas.find((l) => l.id === id)?.situacao === 'fila_de_erro').slice(2, 4));
  });

  test('GET /entrega/{id} shows the delivery, its event and every attempt; an unknown id is 404', async () => {
    falhando.add('/detalhe');
    const c = await t.hub.cenario({ url_de_destino: t.receptor.url('/detalhe'), maximo_de_tentativas: 2 });
    const { id } = await c.publicar({ n: 42, texto: 'detalhe' });
    const entrega = await t.hub.esperarSituacao((await t.hub.entregaDoEvento(c.assinatura.id, id)).id, 'fila_de_erro');
    expect(Object.keys(entrega).sort()).toEqual([...CAMPOS_DA_ENTREGA, 'evento', 'historico'].sort());
    expect(entrega).toMatchObject({ evento_id: id, assinatura_id: c.assinatura.id, situacao: 'fila_de_erro', tentativas: 2 });
    expect(entrega.ultimo_erro).toBe('HTTP 500');
    expect(entrega.evento).toEqual({ id, versao: 1, dados: { n: 42, texto: 'detalhe' }, criado_em: expect.any(String) });
    expect(entrega.historico).toEqual([1, 2].map((numero) => ({
      numero,
      iniciada_em: expect.any(String),
      duracao_ms: expect.any(Number),
      status_http: 500,
      erro: 'HTTP 500',
      resposta: '{}',
    })));

    esperarProblema(await t.hub.api.get(`/entrega/${randomUUID()}`, { token: await t.hub.admin() }), 404);
  });
});

describe('sending again (DESIGN §5)', () => {
  test('POST /entrega/{id}/reenviar of an error-queue delivery starts a new round with the same webhook-id, and it is delivered', async () => {
    const { c, entregas: [falha] } = await cenarioComFalhas('/reenviar', 1);
    falhando.delete('/reenviar');
    const res = await t.hub.api.post(`/entrega/${falha.id}/reenviar`, { token: await t.hub.admin() });
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ id: falha.id, ultimo_erro: null });
    // pending again (or, with a fast worker, already delivered)
    expect(['pendente', 'entregue']).toContain(res.body.situacao);

    const final = await t.hub.esperarSituacao(falha.id, 'entregue');
    expect(noCaminho('/reenviar').map((r) => r.webhookId)).toEqual([falha.id, falha.id]);
    expect(final.historico.map((t: any) => t.status_http)).toEqual([500, 200]);
    expect((await t.hub.assinatura(c.assinatura.id)).entregas_na_fila_de_erro).toBe(0);
  });

  test('POST /assinatura/{id}/reenviar_falhas sends every error-queue delivery of the subscription again, and only those', async () => {
    const { c, entregas } = await cenarioComFalhas('/falhas', 3);
    expect((await t.hub.assinatura(c.assinatura.id)).entregas_na_fila_de_erro).toBe(3);
    falhando.delete('/falhas');
    const entregue = await t.hub.esperarSituacao((await t.hub.entregaDoEvento(c.assinatura.id, (await c.publicar({ n: 9 })).id)).id, 'entregue');
    // another subscription's error queue is not touched
    const { entregas: [alheia] } = await cenarioComFalhas('/falhas-alheias', 1);

    const res = await t.hub.api.post(`/assinatura/${c.assinatura.id}/reenviar_falhas`, { token: await t.hub.admin() });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ reenviadas: 3 });
    for (const e of entregas) await t.hub.esperarSituacao(e.id, 'entregue');
    expect((await t.hub.assinatura(c.assinatura.id)).entregas_na_fila_de_erro).toBe(0);
    await dormir(200);
    for (const e of entregas) expect(t.receptor.de(e.id)).toHaveLength(2);
    expect(t.receptor.de(entregue.id)).toHaveLength(1);
    expect((await t.hub.entrega(alheia.id)).situacao).toBe('fila_de_erro');

    // nothing left to send
    expect((await t.hub.api.post(`/assinatura/${c.assinatura.id}/reenviar_falhas`, { token: await t.hub.admin() })).body).toEqual({ reenviadas: 0 });
  });

  test('reenviar_falhas leaves alone a delivery that left the error queue between its listing and its lock (delivered by a replay of its own)', async () => {
    const { c, entregas: [falha] } = await cenarioComFalhas('/falhas-corrida', 1);
    const outra = await novaConexao('hub');
    let res: ReturnType<typeof t.hub.api.post>;
    try {
      // as a replay of that delivery alone, whose round then succeeds, holds it
      await outra.query('START TRANSACTION');
      await outra.query('SELECT id FROM entrega WHERE id = ? FOR UPDATE', [falha.id]);
      res = t.hub.api.post(`/assinatura/${c.assinatura.id}/reenviar_falhas`, { token: await t.hub.admin() });
      await esperarOutraConexao(outra, 'reenviar_falhas waiting on the delivery', ['UPDATE entrega FORCE INDEX (PRIMARY)%']);
      await outra.query("UPDATE entrega SET situacao = 'entregue', entregue_em = NOW(3) WHERE id = ?", [falha.id]);
      await outra.query('COMMIT');
    } finally {
      await outra.end();
    }
    expect((await res!).body).toEqual({ reenviadas: 0 });
    expect((await t.hub.entrega(falha.id)).situacao).toBe('entregue');
    await dormir(300);
    expect(t.receptor.de(falha.id)).toHaveLength(1);
  });

  test("reenviar_falhas queues the deliveries it replayed only: a publication of the replay's millisecond, its batch job still to reach it, is not sent by the replay too", async () => {
    const { c, entregas: [falha] } = await cenarioComFalhas('/falhas-mesmo-instante', 1);
    falhando.delete('/falhas-mesmo-instante');
    const doMesmoInstante = randomUUID();
    // the replay's clock stands still: its stamp is the publication's creation time
    const instante = new Date();
    jest.useFakeTimers({ now: instante, doNotFake: ['hrtime', 'nextTick', 'performance', 'queueMicrotask', 'setImmediate', 'clearImmediate', 'setInterval', 'clearInterval', 'setTimeout', 'clearTimeout'] });
    try {
      await banco('hub').query(
        `INSERT INTO entrega (id, evento_id, assinatura_id, situacao, tentativas, proxima_tentativa_em, criada_em, atualizada_em)
           SELECT ?, evento_id, assinatura_id, 'pendente', 0, ?, ?, ? FROM entrega WHERE id = ?`,
        { replacements: [doMesmoInstante, ...Array(3).fill(dataSql(instante)), falha.id] },
      );
      const res = await t.hub.api.post(`/assinatura/${c.assinatura.id}/reenviar_falhas`, { token: await t.hub.admin() });
      expect(res.body).toEqual({ reenviadas: 1 });
      await t.hub.esperarSituacao(falha.id, 'entregue');
    } finally {
      jest.useRealTimers();
    }
    // the replay queued no job of it (its batch's would send it): none is there, and nothing was sent
    expect(await fila(filaHubEntrega).getJob(doMesmoInstante)).toBeUndefined();
    await dormir(300);
    expect(t.receptor.de(doMesmoInstante)).toHaveLength(0);
    expect(await t.hub.entrega(doMesmoInstante)).toMatchObject({ situacao: 'pendente', tentativas: 0 });
  });

  test('sending a delivered delivery again keeps ultima_entrega_em at its first success while the new round fails (SPEC §6 rule 5)', async () => {
    const c = await t.hub.cenario({ url_de_destino: t.receptor.url('/reenviar-entregue'), maximo_de_tentativas: 1 });
    const { id } = await c.publicar();
    const entregue = await t.hub.esperarSituacao((await t.hub.entregaDoEvento(c.assinatura.id, id)).id, 'entregue');
    expect((await t.hub.assinatura(c.assinatura.id)).ultima_entrega_em).toBe(entregue.entregue_em);

    falhando.add('/reenviar-entregue');
    expect((await t.hub.api.post(`/entrega/${entregue.id}/reenviar`, { token: await t.hub.admin() })).status).toBe(202);
    // while the new round is pending, and after it failed into the error queue
    expect((await t.hub.assinatura(c.assinatura.id)).ultima_entrega_em).toBe(entregue.entregue_em);
    const falhou = await t.hub.esperarSituacao(entregue.id, 'fila_de_erro');
    expect(falhou.entregue_em).toBeNull();
    expect((await t.hub.assinatura(c.assinatura.id)).ultima_entrega_em).toBe(entregue.entregue_em);
  });

  test('a delivered delivery sent again shows no entregue_em while its new round runs, then the new round\'s', async () => {
    const c = await t.hub.cenario({ url_de_destino: t.receptor.url('/reenviar-de-novo') });
    const { id } = await c.publicar();
    const entregue = await t.hub.esperarSituacao((await t.hub.entregaDoEvento(c.assinatura.id, id)).id, 'entregue');
    lentos.add('/reenviar-de-novo');
    expect((await t.hub.api.post(`/entrega/${entregue.id}/reenviar`, { token: await t.hub.admin() })).status).toBe(202);
    expect(await t.hub.entrega(entregue.id)).toMatchObject({ situacao: 'pendente', entregue_em: null });
    expect((await t.hub.assinatura(c.assinatura.id)).ultima_entrega_em).toBe(entregue.entregue_em);
    const deNovo = await t.hub.esperarSituacao(entregue.id, 'entregue');
    expect(Date.parse(deNovo.entregue_em)).toBeGreaterThan(Date.parse(entregue.entregue_em));
  });

  test('reenviar of a delivery the retention purge removes while the replay waits for it answers 404, and queues nothing', async () => {
    const c = await t.hub.cenario({ url_de_destino: t.receptor.url('/reenviar-purgada') });
    const { id } = await c.publicar();
    const entregue = await t.hub.esperarSituacao((await t.hub.entregaDoEvento(c.assinatura.id, id)).id, 'entregue');
    // another connection holds the row, as the purge does before deleting it
    const purga = await novaConexao('hub');
    let pedido: ReturnType<typeof t.hub.api.post> | undefined;
    try {
      await purga.query('START TRANSACTION');
      await purga.query('SELECT id FROM entrega WHERE id = ? FOR UPDATE', [entregue.id]);
      pedido = t.hub.api.post(`/entrega/${entregue.id}/reenviar`, { token: await t.hub.admin() });
      await esperarOutraConexao(purga, 'the replay waiting on the row', ['%FROM `entrega`%FOR UPDATE', 'UPDATE entrega FORCE INDEX (PRIMARY)%', 'UPDATE assinatura%']);
      await purga.query('DELETE FROM tentativa_de_entrega WHERE entrega_id = ?', [entregue.id]);
      await purga.query('DELETE FROM entrega WHERE id = ?', [entregue.id]);
      await purga.query('COMMIT');
    } finally {
      await purga.end();
    }
    esperarProblema(await pedido!, 404);
    await dormir(150);
    expect(t.receptor.de(entregue.id)).toHaveLength(1);
  });

  test('reenviar of a delivery still pending (its attempt in flight) is 409; an unknown delivery or subscription is 404', async () => {
    const c = await t.hub.cenario({ url_de_destino: t.receptor.url('/demora') });
    const { id } = await c.publicar();
    const entrega = await t.hub.entregaDoEvento(c.assinatura.id, id);
    await esperarAte(() => noCaminho('/demora').length, 'the attempt in flight');
    expect((await t.hub.entrega(entrega.id)).situacao).toBe('pendente');
    esperarProblema(await t.hub.api.post(`/entrega/${entrega.id}/reenviar`, { token: await t.hub.admin() }), 409);
    await t.hub.esperarSituacao(entrega.id, 'entregue');
    expect(noCaminho('/demora')).toHaveLength(1);

    esperarProblema(await t.hub.api.post(`/entrega/${randomUUID()}/reenviar`, { token: await t.hub.admin() }), 404);
    esperarProblema(await t.hub.api.post(`/assinatura/${randomUUID()}/reenviar_falhas`, { token: await t.hub.admin() }), 404);
  });

  test('an inactive subscription has nothing sent again: 409 until it is reactivated', async () => {
    const { c, entregas: [falha] } = await cenarioComFalhas('/inativa', 1);
    falhando.delete('/inativa');
    await t.hub.api.patch(`/assinatura/${c.assinatura.id}`, { token: await t.hub.admin(), body: { ativa: false } });
    esperarProblema(await t.hub.api.post(`/entrega/${falha.id}/reenviar`, { token: await t.hub.admin() }), 409);
    esperarProblema(await t.hub.api.post(`/assinatura/${c.assinatura.id}/reenviar_falhas`, { token: await t.hub.admin() }), 409);
    await dormir(150);
    expect(noCaminho('/inativa')).toHaveLength(1);
    expect((await t.hub.entrega(falha.id)).situacao).toBe('fila_de_erro');

    await t.hub.api.patch(`/assinatura/${c.assinatura.id}`, { token: await t.hub.admin(), body: { ativa: true } });
    expect((await t.hub.api.post(`/assinatura/${c.assinatura.id}/reenviar_falhas`, { token: await t.hub.admin() })).body).toEqual({ reenviadas: 1 });
    await t.hub.esperarSituacao(falha.id, 'entregue');
  });
});

describe('access: area monitoramento (DESIGN §5, SPEC §5 rules 1-2)', () => {
  /** An identity collaborator registered at the hub by a master's listing, with `permissoes` when given. */
  async function pessoa(permissoes?: Record<string, string[]>) {
    const { usuario, token } = await t.hub.identity.criarUsuarioLogado({ perfil: 'colaborador' });
    const lista = await t.hub.api.get('/colaborador', { token: await t.hub.admin() });
    expect(lista.status).toBe(200);
    const filtro = await t.hub.api.get('/colaborador/filtro', { token: await t.hub.admin(), query: { email: usuario.email } });
    const colaborador = (filtro.body as any[]).find((c) => c.auth_id === usuario.id);
    expect(colaborador).toBeDefined();
    if (permissoes) {
      const perfil = await t.hub.api.post('/perfil_acesso', { token: await t.hub.admin(), body: { nome: `Perfil ${marca()}`, permissoes } });
      expect(perfil.status).toBe(201);
      const vinculo = await t.hub.api.patch(`/colaborador/${colaborador.id}/perfil_acesso`, {
        token: await t.hub.admin(),
        body: { perfil_acesso_id: perfil.body.id },
      });
      expect(vinculo.status).toBe(200);
    }
    return token as string;
  }

  test('without a token: 401 on every monitoring route', async () => {
    const id = randomUUID();
    esperarProblema(await t.hub.api.get('/entrega'), 401);
    esperarProblema(await t.hub.api.get(`/entrega/${id}`), 401);
    esperarProblema(await t.hub.api.post(`/entrega/${id}/reenviar`), 401);
    esperarProblema(await t.hub.api.post(`/assinatura/${id}/reenviar_falhas`), 401);
  });

  test('a user with every subscription permission but none in monitoramento gets 403 on the monitoring routes', async () => {
    const { c, entregas: [falha] } = await cenarioComFalhas('/sem-permissao', 1);
    const token = await pessoa({ assinaturas: ['ler', 'criar', 'editar', 'deletar'] });
    // the subscription itself is readable to them (SPEC 4.3 access)
    expect((await t.hub.api.get(`/assinatura/${c.assinatura.id}`, { token })).status).toBe(200);
    esperarProblema(await t.hub.api.get('/entrega', { token }), 403);
    esperarProblema(await t.hub.api.get(`/entrega/${falha.id}`, { token }), 403);
    esperarProblema(await t.hub.api.post(`/entrega/${falha.id}/reenviar`, { token }), 403);
    esperarProblema(await t.hub.api.post(`/assinatura/${c.assinatura.id}/reenviar_falhas`, { token }), 403);
    expect((await t.hub.entrega(falha.id)).situacao).toBe('fila_de_erro');
  });

  test('ler in monitoramento reads deliveries but sending again needs editar there', async () => {
    const { c, entregas: [falha] } = await cenarioComFalhas('/so-leitura', 1);
    const leitor = await pessoa({ monitoramento: ['ler'] });
    expect((await t.hub.api.get('/entrega', { token: leitor, query: { assinatura_id: c.assinatura.id } })).body.total).toBe(1);
    expect((await t.hub.api.get(`/entrega/${falha.id}`, { token: leitor })).body.id).toBe(falha.id);
    esperarProblema(await t.hub.api.post(`/entrega/${falha.id}/reenviar`, { token: leitor }), 403);
    esperarProblema(await t.hub.api.post(`/assinatura/${c.assinatura.id}/reenviar_falhas`, { token: leitor }), 403);

    falhando.delete('/so-leitura');
    const editor = await pessoa({ monitoramento: ['ler', 'editar'] });
    expect((await t.hub.api.post(`/entrega/${falha.id}/reenviar`, { token: editor })).status).toBe(202);
    await t.hub.esperarSituacao(falha.id, 'entregue');
  });
});

describe('retention (DESIGN §5: history purged after HUB_RETENCAO_DIAS)', () => {
  test('a delivery sent again while the purge runs is not purged: its new round stays, with its attempts', async () => {
    const c = await t.hub.cenario({ url_de_destino: t.receptor.url('/retencao-reenvio') });
    const { id } = await c.publicar();
    const entregue = await t.hub.esperarSituacao((await t.hub.entregaDoEvento(c.assinatura.id, id)).id, 'entregue');
    const sequelize = Entrega.sequelize!;
    const antigo = new Date(Date.now() - 31 * 86_400_000);
    await sequelize.query('UPDATE entrega SET criada_em = ?, atualizada_em = ? WHERE id = ?', { replacements: [antigo, antigo, entregue.id] });

    // another connection holds the delivery's row, making it pending again as a replay does
    const outra = await novaConexao('hub');
    let purga: ReturnType<typeof purgarHistorico> | undefined;
    try {
      await outra.query('START TRANSACTION');
      await outra.query("UPDATE entrega SET situacao = 'pendente' WHERE id = ?", [entregue.id]);
      // the purge has already chosen the delivery (it still reads as entregue) and waits on the row
      purga = purgarHistorico(30);
      await esperarOutraConexao(outra, 'the purge waiting on the row', ['%FROM `entrega`%FOR UPDATE', 'DELETE FROM `entrega`%']);
      await outra.query('COMMIT');
    } finally {
      await outra.end();
    }
    await purga;
    expect(await Entrega.count({ where: { id: entregue.id } })).toBe(1);
    expect(await TentativaDeEntrega.count({ where: { entrega_id: entregue.id } })).toBe(1);
    await sequelize.query("UPDATE entrega SET situacao = 'entregue' WHERE id = ?", { replacements: [entregue.id] });
  });

  test("the purge locks a subscription's row only after its batch is deleted, right before the commit: a publication reading the row waits for no more than that", async () => {
    const c = await t.hub.cenario({ url_de_destino: t.receptor.url('/retencao-trava') });
    const entregue = await t.hub.esperarSituacao((await t.hub.entregaDoEvento(c.assinatura.id, (await c.publicar({ n: 1 })).id)).id, 'entregue');
    const antigo = new Date(Date.now() - 31 * 86_400_000);
    await Entrega.sequelize!.query('UPDATE entrega SET criada_em = ?, atualizada_em = ? WHERE id = ?', { replacements: [antigo, antigo, entregue.id] });
    // another connection reads the subscription with a shared lock, as a publication does
    const outra = await novaConexao('hub');
    let purga: ReturnType<typeof purgarHistorico> | undefined;
    try {
      await outra.query('START TRANSACTION');
      await outra.query('SELECT id FROM assinatura WHERE id = ? LOCK IN SHARE MODE', [c.assinatura.id]);
      purga = purgarHistorico(30);
      await esperarOutraConexao(outra, 'the purge waiting on the subscription', ['UPDATE assinatura%']);
      // by then the batch is deleted, in the purge's own transaction (the server refreshes what it
      // shows of transactions only when read 100 ms or more after the last read: read until then)
      await esperarAte(async () => {
        const [transacoes] = (await outra.query(
          `SELECT t.trx_rows_modified FROM information_schema.INNODB_TRX t JOIN information_schema.PROCESSLIST p ON p.ID = t.trx_mysql_thread_id
            WHERE p.DB = DATABASE() AND p.INFO LIKE 'UPDATE assinatura%'`,
        )) as unknown as [{ trx_rows_modified: number }[]];
        return transacoes.length === 1 && Number(transacoes[0].trx_rows_modified) >= 2;
      }, "the purge's transaction holding its deleted batch", 10_000, 150);
      await outra.query('COMMIT');
    } finally {
      await outra.end();
    }
    expect((await purga)!.entregas).toBeGreaterThanOrEqual(1);
    expect(await Entrega.count({ where: { id: entregue.id } })).toBe(0);
    expect((await t.hub.assinatura(c.assinatura.id)).ultima_entrega_em).toBe(entregue.entregue_em);
  });

  test('purgarHistorico drops finished deliveries (delivered, in the error queue, cancelled), their attempts and events older than the period; pending and recent ones stay', async () => {
    const c = await t.hub.cenario({ url_de_destino: t.receptor.url('/retencao') });
    const ids = [];
    for (let i = 0; i < 5; i++) ids.push((await c.publicar({ n: i })).id);
    const entregue = async (eventoId: string) => t.hub.esperarSituacao((await t.hub.entregaDoEvento(c.assinatura.id, eventoId)).id, 'entregue');
    const [velha, velhaPendente, recente, velhaNaFila, velhaCancelada] = await Promise.all(ids.map(entregue));

    // 31 days ago: one finished, one still pending (its retries go on past any period), and one
    // ended in each of the other finished states (never delivered)
    const antigo = new Date(Date.now() - 31 * 86_400_000);
    const sequelize = Entrega.sequelize!;
    const velhas = [velha, velhaPendente, velhaNaFila, velhaCancelada];
    await sequelize.query('UPDATE entrega SET criada_em = ?, atualizada_em = ? WHERE id IN (?)', { replacements: [antigo, antigo, velhas.map((e) => e.id)] });
    await sequelize.query('UPDATE evento SET criado_em = ? WHERE id IN (?)', { replacements: [antigo, velhas.map((e) => e.evento_id)] });
    await sequelize.query(
      `UPDATE entrega SET situacao = IF(id = ?, 'fila_de_erro', 'cancelada'), entregue_em = NULL WHERE id IN (?, ?)`,
      { replacements: [velhaNaFila.id, velhaNaFila.id, velhaCancelada.id] },
    );
    // silent: its last change stays 31 days ago, so only being pending keeps it
    await Entrega.update({ situacao: 'pendente' }, { where: { id: velhaPendente.id }, silent: true });
    expect((await Entrega.findByPk(velhaPendente.id))!.atualizada_em.getTime()).toBeLessThan(Date.now() - 30 * 86_400_000);

    const r = await purgarHistorico(30);
    expect(r.entregas).toBeGreaterThanOrEqual(3);
    for (const purgada of [velha, velhaNaFila, velhaCancelada]) {
      esperarProblema(await t.hub.api.get(`/entrega/${purgada.id}`, { token: await t.hub.admin() }), 404);
      expect(await TentativaDeEntrega.count({ where: { entrega_id: purgada.id } })).toBe(0);
      expect(await Evento.count({ where: { id: purgada.evento_id } })).toBe(0);
    }

    expect((await t.hub.entrega(velhaPendente.id)).situacao).toBe('pendente');
    expect(await Evento.count({ where: { id: velhaPendente.evento_id } })).toBe(1);
    expect(await TentativaDeEntrega.count({ where: { entrega_id: velhaPendente.id } })).toBe(1);
    expect((await t.hub.entrega(recente.id)).historico).toHaveLength(1);
    const restantes = (await t.hub.entregas({ assinatura_id: c.assinatura.id })).itens.map((e: any) => e.id);
    expect(restantes.sort()).toEqual([velhaPendente.id, recente.id].sort());

    // the purged delivery's success is still the subscription's last one
    expect((await t.hub.assinatura(c.assinatura.id)).ultima_entrega_em).toBe(
      [velha, velhaPendente, recente].map((e) => e.entregue_em).sort().at(-1),
    );

    // a longer period keeps them all
    await sequelize.query('UPDATE entrega SET criada_em = ?, atualizada_em = ?, situacao = ? WHERE id = ?', {
      replacements: [antigo, antigo, 'entregue', velhaPendente.id],
    });
    expect(await purgarHistorico(60)).toEqual({ entregas: 0, eventos: 0 });
    expect((await t.hub.entrega(velhaPendente.id)).situacao).toBe('entregue');
  });

  test('a purge reports its counts after each batch (the job progress), and a shutdown stops it between batches, to go on at the next run', async () => {
    const c = await t.hub.cenario({ url_de_destino: t.receptor.url('/retencao-progresso') });
    const e = await t.hub.esperarSituacao((await t.hub.entregaDoEvento(c.assinatura.id, (await c.publicar({ n: 1 })).id)).id, 'entregue');
    const antigo = new Date(Date.now() - 31 * 86_400_000);
    await Entrega.sequelize!.query('UPDATE entrega SET criada_em = ?, atualizada_em = ? WHERE id = ?', { replacements: [antigo, antigo, e.id] });
    await Entrega.sequelize!.query('UPDATE evento SET criado_em = ? WHERE id = ?', { replacements: [antigo, e.evento_id] });

    const parado = new AbortController();
    parado.abort();
    expect(await purgarHistorico(30, { sinal: parado.signal })).toEqual({ entregas: 0, eventos: 0, interrompida: true });
    expect(await Entrega.count({ where: { id: e.id } })).toBe(1);

    const progresso: object[] = [];
    const r = await purgarHistorico(30, { aoProgredir: (p) => progresso.push(p) });
    expect(r.entregas).toBeGreaterThanOrEqual(1);
    expect(progresso.length).toBeGreaterThanOrEqual(2);
    expect(progresso.at(-1)).toEqual({ entregas: r.entregas, eventos: r.eventos });
    expect(await Entrega.count({ where: { id: e.id } })).toBe(0);
  });

  test('the period counts from when a delivery finished: one created long ago but replayed, or put in the error queue, within the period stays with its event', async () => {
    const c = await t.hub.cenario({ url_de_destino: t.receptor.url('/retencao-fim') });
    const eventos = [await c.publicar({ n: 1 }), await c.publicar({ n: 2 }), await c.publicar({ n: 3 })];
    const [reenviada, naFila, terminada] = await Promise.all(
      eventos.map(async (e) => t.hub.esperarSituacao((await t.hub.entregaDoEvento(c.assinatura.id, e.id)).id, 'entregue')),
    );
    const sequelize = Entrega.sequelize!;
    const criada = new Date(Date.now() - 40 * 86_400_000);
    const ontem = new Date(Date.now() - 86_400_000);
    // all created 40 days ago; two finished yesterday (a replay's success, an entry in the error queue), one 35 days ago
    await sequelize.query('UPDATE evento SET criado_em = ? WHERE id IN (?)', { replacements: [criada, eventos.map((e) => e.id)] });
    await sequelize.query('UPDATE entrega SET criada_em = ?, atualizada_em = ? WHERE id IN (?)', { replacements: [criada, ontem, [reenviada.id, naFila.id]] });
    await sequelize.query("UPDATE entrega SET situacao = 'fila_de_erro' WHERE id = ?", { replacements: [naFila.id] });
    await sequelize.query('UPDATE entrega SET criada_em = ?, atualizada_em = ? WHERE id = ?', {
      replacements: [criada, new Date(Date.now() - 35 * 86_400_000), terminada.id],
    });

    // (the test before leaves one of its own to purge: the counts are not this test's alone)
    expect(await purgarHistorico(30)).toEqual({ entregas: expect.any(Number), eventos: expect.any(Number) });
    esperarProblema(await t.hub.api.get(`/entrega/${terminada.id}`, { token: await t.hub.admin() }), 404);
    expect(await Evento.count({ where: { id: terminada.evento_id } })).toBe(0);
    expect((await t.hub.entrega(reenviada.id)).historico).toHaveLength(1);
    expect((await t.hub.entrega(naFila.id)).situacao).toBe('fila_de_erro');
    expect(await Evento.count({ where: { id: [reenviada.evento_id, naFila.evento_id] } })).toBe(2);
    expect((await t.hub.assinatura(c.assinatura.id)).entregas_na_fila_de_erro).toBe(1);
  });
});
