import { format } from 'mysql2';
import { pesoDaPublicacao, publicarEvento } from '../../api/hub/eventos';
import { GravadorEmLotes, MENSAGEM_MAXIMA } from '../../lib/lotes';
import * as database from '../../lib/database';
import { novaConexao } from '../../lib/database';
import { redis } from '../../lib/redis';
import { Entrega, Evento, VersaoDeEvento } from '../../models/hub';
import { esperarOutraConexao } from '../helpers/espera';
import { esperarProblema } from '../helpers/http';
import { dormir, esperarAte, hubNesteArquivo, Hub } from './apoio-entregas';
import { reconectarProdutor } from '../helpers/redis';

/**
 * POST /eventos (SPEC §4.9, §6 rules 1-2; DESIGN §5 and §10 Hub): the owner of a type publishes
 * `{tipo, versao, dados, id?}` with its application token and gets `202 {id, entregas}`, one
 * delivery per active subscription of that exact version; `dados` follows the version's schema;
 * `id` is the publisher's idempotency key.
 */

const t = hubNesteArquivo();

const noCaminho = (caminho: string) => t.receptor.recebidas.filter((r) => r.caminho === caminho);
const eventosDoTipo = (tipoId: string) => Evento.count({ where: { tipo_de_evento_id: tipoId } });

describe('202 {id, entregas}', () => {
  test('one active subscription: 202 {id, entregas: 1}, and the subscriber receives that event (DESIGN §5, SPEC §6 rule 2)', async () => {
    const c = await t.hub.cenario({ url_de_destino: t.receptor.url('/um') });
    const res = await t.hub.publicar(c.publicador, { tipo: c.tipo.nome, dados: { n: 7 } });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ id: expect.any(String), entregas: 1 });
    const [recebida] = await esperarAte(() => noCaminho('/um').length && noCaminho('/um'), 'the delivery');
    expect(recebida.corpo).toMatchObject({ id: res.body.id, tipo: c.tipo.nome, versao: 1, dados: { n: 7 } });
  });

  test('several active subscriptions of the version: entregas counts them and each subscriber gets its own delivery (SPEC §6 rule 2)', async () => {
    const c = await t.hub.cenario({ url_de_destino: t.receptor.url('/varios/0') });
    for (const i of [1, 2]) await t.hub.assinar(await t.hub.aplicativo(), c.tipo.id, { url_de_destino: t.receptor.url(`/varios/${i}`) });

    const { id, entregas } = await c.publicar({ n: 3 });
    expect(entregas).toBe(3);
    const recebidas = await esperarAte(() => {
      const r = t.receptor.recebidas.filter((x) => x.corpo?.id === id);
      return r.length === 3 && r;
    }, 'three deliveries');
    expect(recebidas.map((r) => r.caminho).sort()).toEqual(['/varios/0', '/varios/1', '/varios/2']);
    expect(new Set(recebidas.map((r) => r.webhookId)).size).toBe(3);
  });

  test('large publications waiting together are all stored: a batch stays under the database packet limit', async () => {
    const c = await t.hub.cenario({ url_de_destino: t.receptor.url('/grandes') });
    // the table is locked while two small publications take both writers, so the large ones wait
    // and are written as the next batch: 22 bodies of about 900 KB, past MariaDB's 16 MiB packet
    const trava = await novaConexao('hub');
    await trava.query('LOCK TABLES evento WRITE');
    const pequenas: ReturnType<typeof t.hub.publicar>[] = [];
    let grandes: ReturnType<typeof t.hub.publicar>[] = [];
    const guardadas = jest.spyOn(GravadorEmLotes.prototype, 'guardar');
    try {
      // one after the other: sent together, they would go as one batch and leave a writer free
      for (const n of [0, 1]) {
        pequenas.push(t.hub.publicar(c.publicador, { tipo: c.tipo.nome, dados: { n } }));
        await esperarOutraConexao(trava, `${n + 1} writer(s) waiting on the lock`, ['INSERT INTO evento%'], n + 1);
      }
      const texto = 'x'.repeat(900_000);
      grandes = Array.from({ length: 22 }, (_, n) => t.hub.publicar(c.publicador, { tipo: c.tipo.nome, dados: { n: n + 2, texto } }));
      // every large one read, validated and handed to the writers, which the lock still holds
      const grande = ([p]: unknown[]) => ((p as { dados?: string }).dados?.length ?? 0) > texto.length;
      await esperarAte(() => guardadas.mock.calls.filter(grande).length === 22, 'the large publications waiting');
    } finally {
      guardadas.mockRestore();
      await trava.query('UNLOCK TABLES');
      await trava.end();
    }

    const respostas = await Promise.all([...pequenas, ...grandes]);
    expect(respostas.map((r) => r.status)).toEqual(Array(24).fill(202));
    expect(await eventosDoTipo(c.tipo.id)).toBe(24);
    // a batch's events share their moment: the large ones went in a few batches, not one by one,
    // so the batch limit was what cut them (each batch under the packet limit, as all were stored)
    const momentos = await Evento.findAll({ where: { tipo_de_evento_id: c.tipo.id }, attributes: ['criado_em'] });
    const lotes = new Set(momentos.map((e) => e.criado_em.getTime())).size;
    expect(lotes).toBeLessThan(10);
    // the two small ones' batches, and the large ones' ~20 MB in two at least: the limit split them
    expect(lotes).toBeGreaterThanOrEqual(4);
  });

  test('a publication weighs at least what it adds to the batch message, so batches are cut by deliveries too', () => {
    const momento = '2026-11-24 10:00:00.000';
    const uuid = '3f1c2a9e-8b7d-4c6e-9f0a-1b2c3d4e5f60';
    // the event keeps its type's name: the longest one a type may have
    const tipo = `a.${'b'.repeat(148)}`;
    // the worst escaping: quotes and backslashes, each written twice by JSON and again by SQL
    for (const dados of [JSON.stringify({ t: '"\\'.repeat(1000) }), JSON.stringify({ t: 'ção€'.repeat(1000) }), '{"n":1}']) {
      const evento = format('(?, ?, ?, ?, ?, ?, ?, ?, ?),', [uuid, uuid, 'id-do-publicador-'.repeat(3), uuid, tipo, 1, dados, 150, momento]);
      const entrega = format('(?, ?, ?, ?, ?, ?, ?, ?),', [uuid, uuid, uuid, 'pendente', 0, momento, momento, momento]);
      expect(pesoDaPublicacao(dados, 150, tipo)).toBeGreaterThanOrEqual(Buffer.byteLength(evento) + 150 * Buffer.byteLength(entrega));
    }
    // 500 small events on a type with 150 subscriptions cannot go as one message
    expect(500 * pesoDaPublicacao('{"n":1}', 150)).toBeGreaterThan(MENSAGEM_MAXIMA);
  });

  test('with no subscription the event is accepted with entregas 0', async () => {
    const publicador = await t.hub.aplicativo();
    const tipo = await t.hub.tipo(publicador);
    const res = await t.hub.publicar(publicador, { tipo: tipo.nome, dados: { n: 1 } });
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ id: expect.any(String), entregas: 0 });
    expect(await eventosDoTipo(tipo.id)).toBe(1);
  });

  test('only subscriptions of the exact version get deliveries (SPEC §6 rule 2, §9 rule 3)', async () => {
    const c = await t.hub.cenario({ url_de_destino: t.receptor.url('/v1') });
    await t.hub.versao(c.tipo.id, { type: 'object' });
    const naV2 = await t.hub.assinar(await t.hub.aplicativo(), c.tipo.id, { url_de_destino: t.receptor.url('/v2'), versao_do_esquema: 2 });

    const v2 = await c.publicar({ qualquer: 'coisa' }, { versao: 2 });
    expect(v2.entregas).toBe(1);
    await esperarAte(() => noCaminho('/v2').length, 'the version 2 delivery');
    const v1 = await c.publicar({ n: 1 });
    expect(v1.entregas).toBe(1);
    await esperarAte(() => noCaminho('/v1').length, 'the version 1 delivery');
    await dormir(200);

    expect(noCaminho('/v2').map((r) => [r.corpo.id, r.corpo.versao])).toEqual([[v2.id, 2]]);
    expect(noCaminho('/v1').map((r) => [r.corpo.id, r.corpo.versao])).toEqual([[v1.id, 1]]);
    expect((await t.hub.entregas({ assinatura_id: c.assinatura.id })).itens.map((e: any) => e.evento_id)).toEqual([v1.id]);
    expect((await t.hub.entregas({ assinatura_id: naV2.id })).itens.map((e: any) => e.evento_id)).toEqual([v2.id]);
  });

  test('a deactivated subscription gets no delivery, nor does a deleted one (SPEC §3 Subscription activity)', async () => {
    const c = await t.hub.cenario({ url_de_destino: t.receptor.url('/inativa'), ativa: false });
    const removida = await t.hub.assinar(await t.hub.aplicativo(), c.tipo.id, { url_de_destino: t.receptor.url('/removida') });
    expect((await t.hub.api.del(`/assinatura/${removida.id}`, { token: await t.hub.admin() })).status).toBe(204);
    const viva = await t.hub.assinar(await t.hub.aplicativo(), c.tipo.id, { url_de_destino: t.receptor.url('/viva') });

    const { id, entregas } = await c.publicar();
    expect(entregas).toBe(1);
    await esperarAte(() => noCaminho('/viva').length, 'the delivery to the live subscription');
    await dormir(200);
    expect(noCaminho('/inativa')).toHaveLength(0);
    expect(noCaminho('/removida')).toHaveLength(0);
    expect((await t.hub.entregas({ assinatura_id: c.assinatura.id })).total).toBe(0);
    expect((await t.hub.entregas({ assinatura_id: removida.id })).total).toBe(0);
    expect((await t.hub.entregas({ assinatura_id: viva.id })).itens.map((e: any) => e.evento_id)).toEqual([id]);
  });

  test('a deprecated version still accepts events (only a switched-off one refuses them, SPEC §9 rule 3)', async () => {
    const c = await t.hub.cenario({ url_de_destino: t.receptor.url('/depreciada') });
    const mudou = await t.hub.api.patch(`/tipo_de_evento/${c.tipo.id}/versao/1`, { token: await t.hub.admin(), body: { situacao: 'depreciada' } });
    expect(mudou.status).toBe(200);
    expect((await c.publicar()).entregas).toBe(1);
  });
});

describe('a subscription changed while a publication is being written (SPEC §3)', () => {
  /**
   * Publishes an event of `c` while another transaction holds its subscription, as PATCH does
   * while it changes it: once the publication waits on that lock, `mudanca` is applied and
   * committed. Answers the publication's response.
   */
  async function publicarDuranteMudanca(c: Awaited<ReturnType<Hub['cenario']>>, mudanca: string) {
    const outra = await novaConexao('hub');
    let publicacao: ReturnType<typeof t.hub.publicar>;
    try {
      await outra.query('START TRANSACTION');
      await outra.query('SELECT id FROM assinatura WHERE id = ? FOR UPDATE', [c.assinatura.id]);
      publicacao = t.hub.publicar(c.publicador, { tipo: c.tipo.nome, dados: { n: 2 } });
      await esperarOutraConexao(outra, 'the publication waiting on the subscription', ['%JOIN assinatura%LOCK IN SHARE MODE%']);
      await outra.query(`UPDATE assinatura SET ${mudanca} WHERE id = ?`, [c.assinatura.id]);
      await outra.query('COMMIT');
    } finally {
      await outra.end();
    }
    return publicacao!;
  }

  test('a deactivation under way when the publication writes: the publication waits for it, its delivery is stored cancelled, and a quick reactivation does not send it', async () => {
    const c = await t.hub.cenario({ url_de_destino: t.receptor.url('/desativando') });
    const res = await publicarDuranteMudanca(c, 'ativa = 0');
    expect(res.body).toEqual({ id: expect.any(String), entregas: 1 });
    expect((await Entrega.findOne({ where: { evento_id: res.body.id } }))!.situacao).toBe('cancelada');
    const admin = await t.hub.admin();
    expect((await t.hub.api.patch(`/assinatura/${c.assinatura.id}`, { token: admin, body: { ativa: true } })).status).toBe(200);
    await dormir(500);
    expect(noCaminho('/desativando')).toEqual([]);
  });

  test('a subscription moved to another version while the publication writes: its delivery of the old version is stored cancelled and never sent (SPEC §6 rule 2)', async () => {
    const c = await t.hub.cenario({ url_de_destino: t.receptor.url('/mudando-de-versao') });
    await t.hub.versao(c.tipo.id, { type: 'object' });
    const res = await publicarDuranteMudanca(c, 'versao_do_esquema = 2');
    expect(res.status).toBe(202);
    expect((await Entrega.findOne({ where: { evento_id: res.body.id } }))!.situacao).toBe('cancelada');
    // the version it moved to is delivered as usual
    const v2 = await c.publicar({ qualquer: 'coisa' }, { versao: 2 });
    await esperarAte(() => noCaminho('/mudando-de-versao').length, 'the version 2 delivery');
    await dormir(300);
    expect(noCaminho('/mudando-de-versao').map((r) => [r.corpo.id, r.corpo.versao])).toEqual([[v2.id, 2]]);
  });
});

describe('202 only once enqueued (DESIGN §5, §8)', () => {
  test('Redis refusing the batch job: 503 (a retry too while it lasts), the event and its pending delivery stay stored; once Redis is back a retry with the same id gets 202 with that event, and it is delivered once', async () => {
    const c = await t.hub.cenario({ url_de_destino: t.receptor.url('/sem-redis') });
    const publicar = () => t.hub.publicar(c.publicador, { tipo: c.tipo.nome, dados: { n: 1 }, id: 'durante-a-queda' });
    const produtor = redis('produtor');
    produtor.disconnect();
    try {
      expect(esperarProblema(await publicar(), 503).detail).toMatch(/fila de entregas está indisponível.*Repita com o mesmo id/);
      // the repeat finds the stored event, but cannot promise it is enqueued either
      esperarProblema(await publicar(), 503);
    } finally {
      await reconectarProdutor();
    }
    const [guardado] = await Evento.findAll({ where: { tipo_de_evento_id: c.tipo.id } });
    expect(await Entrega.count({ where: { evento_id: guardado.id, situacao: 'pendente' } })).toBe(1);
    expect(noCaminho('/sem-redis')).toHaveLength(0);

    const repetida = await publicar();
    expect(repetida.status).toBe(202);
    expect(repetida.body).toEqual({ id: guardado.id, entregas: 1 });
    await esperarAte(() => noCaminho('/sem-redis').length, 'the delivery');
    expect((await publicar()).status).toBe(202);
    await dormir(300);
    expect(noCaminho('/sem-redis')).toHaveLength(1);
    expect(await eventosDoTipo(c.tipo.id)).toBe(1);
  });
});

describe('202 only once enqueued, for what has deliveries to enqueue', () => {
  test('Redis refusing a batch job: in the same batch, an event with no delivery (no subscription) gets its 202, the one with a delivery its 503', async () => {
    const c = await t.hub.cenario({ url_de_destino: t.receptor.url('/lote-sem-redis') });
    const semAssinatura = await t.hub.tipo(c.publicador);
    const quem = { sub: c.publicador.id, tipo: 'aplicativo' as const, master: false, nome: c.publicador.nome, emitidoEm: 0, token: c.publicador.token };
    const ambos = () =>
      Promise.allSettled([
        publicarEvento(quem, { tipo: c.tipo.nome, versao: 1, dados: { n: 1 } }),
        publicarEvento(quem, { tipo: semAssinatura.nome, versao: 1, dados: { n: 2 } }),
      ]);
    // once what each reads before its batch is in the process's caches, both reach the batch in one
    // turn of the event loop, and one group commit holds them
    expect((await ambos()).map((r) => r.status)).toEqual(['fulfilled', 'fulfilled']);

    const produtor = redis('produtor');
    produtor.disconnect();
    let respostas: PromiseSettledResult<unknown>[];
    try {
      respostas = await ambos();
    } finally {
      await reconectarProdutor();
    }
    const [comEntrega, semEntrega] = respostas;
    // published without an id: a retry would be a second event, and the answer says so
    // and it carries no Retry-After: a client honouring one would publish it a second time
    expect(comEntrega).toMatchObject({ status: 'rejected', reason: { tipo: 'indisponivel', message: expect.stringMatching(/Não o repita: sem id/), retryAfterSegundos: null } });
    expect(semEntrega).toMatchObject({ status: 'fulfilled', value: { id: expect.any(String), entregas: 0 } });
    // both stored, once each, in one batch (one moment)
    const depois = await Evento.findAll({ where: { tipo_de_evento_id: [c.tipo.id, semAssinatura.id] }, attributes: ['criado_em'], order: [['criado_em', 'DESC']] });
    expect(depois).toHaveLength(4);
    expect(depois[0].criado_em.getTime()).toBe(depois[1].criado_em.getTime());
  });
});

describe('dados follow the version schema (DESIGN §5)', () => {
  test('dados out of the schema: 400 with errors naming the dados fields, and nothing is stored or delivered', async () => {
    const c = await t.hub.cenario({ url_de_destino: t.receptor.url('/esquema') });
    const res = await t.hub.publicar(c.publicador, { tipo: c.tipo.nome, dados: { texto: 5, extra: true } });
    const problema = esperarProblema(res, 400);
    const campos = (problema.errors as { campo: string; mensagem: string }[]).map((e) => e.campo);
    expect(campos).toContain('dados.texto');
    // a missing required property is named as the field itself, and so is one the schema does not allow
    expect(problema.errors).toContainEqual({ campo: 'dados.n', mensagem: expect.stringContaining("'n'") });
    expect(problema.errors).toContainEqual({ campo: 'dados.extra', mensagem: expect.stringContaining('additional properties') });
    expect(campos.every((campo) => campo === 'dados' || campo.startsWith('dados.'))).toBe(true);

    expect(esperarProblema(await t.hub.publicar(c.publicador, { tipo: c.tipo.nome, dados: 'texto' }), 400).errors).toEqual([
      { campo: 'dados', mensagem: expect.any(String) },
    ]);
    await dormir(200);
    expect(await eventosDoTipo(c.tipo.id)).toBe(0);
    expect((await t.hub.entregas({ assinatura_id: c.assinatura.id })).total).toBe(0);
    expect(noCaminho('/esquema')).toHaveLength(0);
  });

  test('dados JSON text cannot carry back (a number out of range), or nested past 100 levels: 400, nothing stored or delivered', async () => {
    // no `type` on the property: the schema alone would let Infinity through
    const c = await t.hub.cenario({ url_de_destino: t.receptor.url('/forma'), esquema: { type: 'object' } });
    const bruto = (dados: string) => t.hub.api.post('/eventos', { token: c.publicador.token, raw: `{"tipo":"${c.tipo.nome}","versao":1,"dados":${dados}}` });
    expect(esperarProblema(await bruto('{"n":1e999}'), 400).errors).toEqual([{ campo: 'dados.n', mensagem: 'número fora do alcance' }]);
    expect(esperarProblema(await bruto('{"a":[-1e400]}'), 400).errors).toEqual([{ campo: 'dados.a.0', mensagem: 'número fora do alcance' }]);
    expect(esperarProblema(await bruto('1e999'), 400).errors).toEqual([{ campo: 'dados', mensagem: 'número fora do alcance' }]);
    const aninhado = (n: number) => `${'{"a":'.repeat(n - 1)}{}${'}'.repeat(n - 1)}`;
    // the body's own level and dados's: 99 levels of dados make 100 (api/shared/rotas.ts)
    expect(esperarProblema(await bruto(aninhado(100)), 400).errors).toEqual([{ campo: 'body', mensagem: 'aninhamento profundo demais' }]);
    // deep enough to overflow a recursive walk: still a 400, not a 500
    expect(esperarProblema(await bruto(aninhado(20_000)), 400).errors).toEqual([{ campo: 'body', mensagem: 'aninhamento profundo demais' }]);
    await dormir(200);
    expect(await eventosDoTipo(c.tipo.id)).toBe(0);
    expect(noCaminho('/forma')).toHaveLength(0);
    // 99 levels are accepted, and large finite numbers arrive as sent
    expect((await bruto(aninhado(99))).status).toBe(202);
    const { id } = await c.publicar({ n: 1.7976931348623157e308 });
    const [recebida] = await esperarAte(() => noCaminho('/forma').filter((r) => r.corpo?.id === id).length && noCaminho('/forma').filter((r) => r.corpo?.id === id), 'the delivery');
    expect(recebida.corpo.dados).toEqual({ n: 1.7976931348623157e308 });
  });

  test('a schema with its own $id validates every publication, and a next version may keep that $id', async () => {
    const esquema = { $id: 'https://exemplo.com.br/esquemas/pedido.json', type: 'object', required: ['n'], properties: { n: { type: 'integer' } } };
    const c = await t.hub.cenario({ url_de_destino: t.receptor.url('/com-id'), esquema });
    for (const n of [1, 2]) expect((await t.hub.publicar(c.publicador, { tipo: c.tipo.nome, dados: { n } })).status).toBe(202);
    esperarProblema(await t.hub.publicar(c.publicador, { tipo: c.tipo.nome, dados: { n: 'um' } }), 400);

    const v2 = await t.hub.api.post(`/tipo_de_evento/${c.tipo.id}/versao`, { token: await t.hub.admin(), body: { esquema } });
    expect(v2.status).toBe(201);
    expect((await t.hub.publicar(c.publicador, { tipo: c.tipo.nome, versao: 2, dados: { n: 3 } })).status).toBe(202);
  });

  test('a version stored before schemas were checked strictly still takes events; a new one may carry `example`', async () => {
    const c = await t.hub.cenario({ url_de_destino: t.receptor.url('/antiga') });
    const antigo = { type: 'object', required: ['n'], properties: { n: { type: 'integer' }, doc: { type: 'string', format: 'cpf' } }, 'x-origem': 'erp' };
    await VersaoDeEvento.update({ esquema: antigo }, { where: { tipo_de_evento_id: c.tipo.id, versao: 1 } });
    expect((await t.hub.publicar(c.publicador, { tipo: c.tipo.nome, dados: { n: 1, doc: '123' } })).status).toBe(202);
    esperarProblema(await t.hub.publicar(c.publicador, { tipo: c.tipo.nome, dados: { doc: '123' } }), 400);

    const comExemplo = { type: 'object', properties: { n: { type: 'integer', example: 7 } }, example: { n: 7 } };
    expect((await t.hub.api.post(`/tipo_de_evento/${c.tipo.id}/versao`, { token: await t.hub.admin(), body: { esquema: comExemplo } })).status).toBe(201);
  });

  test('a body without tipo, versao or dados is refused with 400 naming them, nothing stored', async () => {
    const publicador = await t.hub.aplicativo();
    const res = await t.hub.api.post('/eventos', { token: publicador.token, body: {} });
    const campos = esperarProblema(res, 400).errors.map((e: { campo: string }) => e.campo);
    expect(campos).toEqual(expect.arrayContaining(['tipo', 'versao', 'dados']));
    expect(await Evento.count({ where: { aplicativo_origem_id: publicador.hub.id } })).toBe(0);
  });

  test('versao as a string ("1") is refused with 400 naming it, nothing stored', async () => {
    const c = await t.hub.cenario({ url_de_destino: t.receptor.url('/versao-texto') });
    const res = await t.hub.api.post('/eventos', { token: c.publicador.token, body: { tipo: c.tipo.nome, versao: '1', dados: { n: 1 } } });
    expect(esperarProblema(res, 400).errors).toEqual([expect.objectContaining({ campo: 'versao' })]);
    expect(await eventosDoTipo(c.tipo.id)).toBe(0);
  });
});

describe('who may publish (DESIGN §10 Hub, SPEC §4.9)', () => {
  test('without a token: 401', async () => {
    esperarProblema(await t.hub.api.post('/eventos', { body: { tipo: 'a.b', versao: 1, dados: {} } }), 401);
  });

  test("a user's token, even a master's: 403", async () => {
    const c = await t.hub.cenario({ url_de_destino: t.receptor.url('/usuario') });
    const res = await t.hub.api.post('/eventos', { token: await t.hub.admin(), body: { tipo: c.tipo.nome, versao: 1, dados: { n: 1 } } });
    esperarProblema(res, 403);
    expect(await eventosDoTipo(c.tipo.id)).toBe(0);
  });

  test('an application that does not own the type: 403, nothing stored', async () => {
    const c = await t.hub.cenario({ url_de_destino: t.receptor.url('/alheio') });
    esperarProblema(await t.hub.publicar(c.assinante, { tipo: c.tipo.nome, dados: { n: 1 } }), 403);
    expect(await eventosDoTipo(c.tipo.id)).toBe(0);
  });

  test('an application the hub has not registered yet (never synced): 403, nothing stored', async () => {
    const c = await t.hub.cenario({ url_de_destino: t.receptor.url('/nova') });
    const nova = await t.hub.identity.criarAplicativo();
    esperarProblema(await t.hub.api.post('/eventos', { token: nova.token, body: { tipo: c.tipo.nome, versao: 1, dados: { n: 1 } } }), 403);
    expect(await eventosDoTipo(c.tipo.id)).toBe(0);
  });
});

describe('the type and version must exist and be on (DESIGN §10: 422 for references in the body)', () => {
  test('an unknown type: 422 naming tipo, nothing stored', async () => {
    const publicador = await t.hub.aplicativo();
    const res = await t.hub.publicar(publicador, { tipo: 'nao.existe.nunca', dados: { n: 1 } });
    expect(esperarProblema(res, 422).errors).toEqual([{ campo: 'tipo', mensagem: expect.any(String) }]);
    expect(await Evento.count({ where: { aplicativo_origem_id: publicador.hub.id } })).toBe(0);
  });

  test('a type created after a publication of its name found none is known at once to the process that created it', async () => {
    const publicador = await t.hub.aplicativo();
    const nome = `teste.${Date.now().toString(36)}.depois`;
    expect(esperarProblema(await t.hub.publicar(publicador, { tipo: nome, dados: { n: 1 } }), 422).errors).toEqual([{ campo: 'tipo', mensagem: expect.any(String) }]);
    const criado = await t.hub.api.post('/tipo_de_evento', { token: await t.hub.admin(), body: { nome, aplicativo_id: publicador.hub.id } });
    expect(criado.status).toBe(201);
    // the type is there, its version not yet: the refusal names the version
    expect(esperarProblema(await t.hub.publicar(publicador, { tipo: nome, dados: { n: 1 } }), 422).errors).toEqual([{ campo: 'versao', mensagem: expect.any(String) }]);
  });

  test('an unknown version of the type: 422 naming versao', async () => {
    const c = await t.hub.cenario({ url_de_destino: t.receptor.url('/sem-versao') });
    const res = await t.hub.publicar(c.publicador, { tipo: c.tipo.nome, versao: 9, dados: { n: 1 } });
    expect(esperarProblema(res, 422).errors).toEqual([{ campo: 'versao', mensagem: expect.any(String) }]);
    expect(await eventosDoTipo(c.tipo.id)).toBe(0);
  });

  test('a switched-off version (desligada): 422, nothing stored or delivered', async () => {
    const c = await t.hub.cenario({ url_de_destino: t.receptor.url('/desligada') });
    const mudou = await t.hub.api.patch(`/tipo_de_evento/${c.tipo.id}/versao/1`, { token: await t.hub.admin(), body: { situacao: 'desligada' } });
    expect(mudou.status).toBe(200);
    const res = await t.hub.publicar(c.publicador, { tipo: c.tipo.nome, dados: { n: 1 } });
    expect(esperarProblema(res, 422).errors).toEqual([{ campo: 'versao', mensagem: expect.any(String) }]);
    await dormir(150);
    expect(await eventosDoTipo(c.tipo.id)).toBe(0);
    expect(noCaminho('/desligada')).toHaveLength(0);
  });
});

describe('id is the idempotency key (DESIGN §5)', () => {
  test('the same id twice from the same publisher: the first answer again, one event, one delivery', async () => {
    const c = await t.hub.cenario({ url_de_destino: t.receptor.url('/idempotente') });
    const primeira = await t.hub.publicar(c.publicador, { tipo: c.tipo.nome, dados: { n: 1 }, id: 'pedido-42' });
    expect(primeira.status).toBe(202);
    const segunda = await t.hub.publicar(c.publicador, { tipo: c.tipo.nome, dados: { n: 2 }, id: 'pedido-42' });
    expect(segunda.status).toBe(202);
    expect(segunda.body).toEqual(primeira.body);

    await esperarAte(() => noCaminho('/idempotente').length, 'the delivery');
    await dormir(300);
    expect(noCaminho('/idempotente').map((r) => r.corpo.dados)).toEqual([{ n: 1 }]);
    expect((await t.hub.entregas({ assinatura_id: c.assinatura.id })).total).toBe(1);
    expect(await eventosDoTipo(c.tipo.id)).toBe(1);
  });

  test('the same id sent at the same moment creates one event only', async () => {
    const c = await t.hub.cenario({ url_de_destino: t.receptor.url('/simultaneo') });
    const respostas = await Promise.all(
      Array.from({ length: 5 }, () => t.hub.publicar(c.publicador, { tipo: c.tipo.nome, dados: { n: 1 }, id: 'mesmo-instante' })),
    );
    expect(respostas.map((r) => r.status)).toEqual([202, 202, 202, 202, 202]);
    expect(new Set(respostas.map((r) => r.body.id)).size).toBe(1);
    expect(await eventosDoTipo(c.tipo.id)).toBe(1);
    expect((await t.hub.entregas({ assinatura_id: c.assinatura.id })).total).toBe(1);
  });

  test.each([
    // what each reads before its batch is in the process's caches: the thirty reach their batches together
    ['with the type, version and subscriptions in the caches', true],
    // the first of an id is listed in flight before those reads, so its repeats wait for it
    ['while the type, version and subscriptions are still to be read (cold caches)', false],
  ])(
    'an id repeated among publications sent together, %s, is written once, its repeats answered with it, and no batch falls back to one write per publication',
    async (_caso, aquecido) => {
      const c = await t.hub.cenario({ url_de_destino: t.receptor.url(`/lote-repetido-${aquecido}`) });
      const quem = { sub: c.publicador.id, tipo: 'aplicativo' as const, master: false, nome: c.publicador.nome, emitidoEm: 0, token: c.publicador.token };
      const publicar = (n: number) => publicarEvento(quem, { tipo: c.tipo.nome, versao: 1, dados: { n }, id: n % 10 === 0 ? 'repetido-no-lote' : `unico-${n}` });
      if (aquecido) await publicar(1);
      const escritas = jest.spyOn(database, 'escreverJuntos');
      try {
        const respostas = await Promise.all(Array.from({ length: 30 }, (_, n) => publicar(n)));
        expect(new Set(respostas.filter((_, n) => n % 10 === 0).map((r) => r.id)).size).toBe(1);
        expect(new Set(respostas.map((r) => r.id)).size).toBe(28);
        // a batch or a few, not the thirty writes of a batch gone back to one at a time
        const deEventos = escritas.mock.calls.filter(([, comandos]) => comandos.some(([sql]) => /INSERT INTO evento/.test(sql)));
        expect(deEventos.length).toBeLessThan(10);
      } finally {
        escritas.mockRestore();
      }
      expect(await eventosDoTipo(c.tipo.id)).toBe(28);
      expect((await t.hub.entregas({ assinatura_id: c.assinatura.id })).total).toBe(28);
    },
  );

  test('id null is no id (a `?` field may be absent or null, SPEC §2): two publications, two events', async () => {
    const c = await t.hub.cenario({ url_de_destino: t.receptor.url('/id-nulo') });
    const respostas = [];
    for (const n of [1, 2]) respostas.push(await t.hub.publicar(c.publicador, { tipo: c.tipo.nome, dados: { n }, id: null }));
    expect(respostas.map((r) => r.status)).toEqual([202, 202]);
    expect(respostas[0].body.id).not.toBe(respostas[1].body.id);
    expect(await eventosDoTipo(c.tipo.id)).toBe(2);
  });

  test('ids that differ only in case or accents are different keys', async () => {
    const c = await t.hub.cenario({ url_de_destino: t.receptor.url('/caixa') });
    const ids = ['Ab1', 'aB1', 'pedido-é', 'pedido-e'];
    const respostas = [];
    for (const [n, id] of ids.entries()) respostas.push(await c.publicar({ n }, { id }));
    expect(new Set(respostas.map((r) => r.id)).size).toBe(4);
    expect(await eventosDoTipo(c.tipo.id)).toBe(4);
    // and each is still its own repeat
    expect(await c.publicar({ n: 9 }, { id: 'aB1' })).toEqual(respostas[1]);
  });

  test('an id with a lone surrogate (not well-formed Unicode, which the database would store as U+FFFD) is refused with 400 naming id', async () => {
    const c = await t.hub.cenario({ url_de_destino: t.receptor.url('/surrogate') });
    for (const id of ['x\\ud800', 'x\\udc00']) {
      const res = await t.hub.api.post('/eventos', { token: c.publicador.token, raw: `{"tipo":"${c.tipo.nome}","versao":1,"dados":{"n":1},"id":"${id}"}` });
      expect(esperarProblema(res, 400).errors).toEqual([expect.objectContaining({ campo: 'id' })]);
    }
    expect(await eventosDoTipo(c.tipo.id)).toBe(0);
    // a well-formed pair (an emoji) is an ordinary id
    expect((await c.publicar({ n: 1 }, { id: 'pedido-\u{1F600}' })).entregas).toBe(1);
  });

  test('dados with a lone surrogate, as a value or a key, is refused with 400 naming where: every strict subscriber would refuse it', async () => {
    const c = await t.hub.cenario({ url_de_destino: t.receptor.url('/surrogate-nos-dados') });
    for (const [dados, campo] of [
      ['{"nome":"x\\ud800"}', 'dados.nome'],
      ['{"lista":["ok","\\udc00y"]}', 'dados.lista.1'],
      ['{"\\ud800chave":1}', 'dados'],
    ] as const) {
      const res = await t.hub.api.post('/eventos', { token: c.publicador.token, raw: `{"tipo":"${c.tipo.nome}","versao":1,"dados":${dados}}` });
      expect({ dados, erros: esperarProblema(res, 400).errors }).toEqual({ dados, erros: [expect.objectContaining({ campo })] });
    }
    expect(await eventosDoTipo(c.tipo.id)).toBe(0);
  });

  test('a different id, no id, or the same id from another publisher is a new event', async () => {
    const c = await t.hub.cenario({ url_de_destino: t.receptor.url('/chaves') });
    const a = await c.publicar({ n: 1 }, { id: 'a' });
    const b = await c.publicar({ n: 1 }, { id: 'b' });
    const semId1 = await c.publicar({ n: 1 });
    const semId2 = await c.publicar({ n: 1 });
    const outro = await t.hub.cenario({ url_de_destino: t.receptor.url('/chaves-outro') });
    const doOutro = await outro.publicar({ n: 1 }, { id: 'a' });
    expect(new Set([a.id, b.id, semId1.id, semId2.id, doOutro.id]).size).toBe(5);
    expect((await t.hub.entregas({ assinatura_id: c.assinatura.id })).total).toBe(4);
    expect((await t.hub.entregas({ assinatura_id: outro.assinatura.id })).total).toBe(1);
  });
});
