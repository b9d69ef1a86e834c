import { createLocalJWKSet, jwtVerify } from 'jose';
import { prepararIdentity } from '../../api/identity/preparar';
import { config } from '../../config';
import { banco, novaConexao } from '../../lib/database';
import { esperarOutraConexao } from '../helpers/espera';
import { Aplicativo } from '../../models/identity';
import { esperarProblema } from '../helpers/http';
import { identityDe } from '../helpers/identity';
import { iniciarSuite, SuiteDeTeste } from '../helpers/suite';
import { chavesOrdenadas, dormir, marca, RFC3339 } from './apoio';

/** Applications and client credentials (DESIGN §3, DESIGN §10): /aplicativo and POST /auth/token. */

let suite: SuiteDeTeste;
let id: ReturnType<typeof identityDe>;
let admin: string;
/** One logged non-master user for the whole file: password hashes are slow on purpose. */
let comum: { usuario: any; token: string };

beforeAll(async () => {
  // no outbox worker: only outbox.test.ts has a hub to publish colaborador events to
  suite = await iniciarSuite(['identity'], { workers: false });
  id = identityDe(suite.url.identity);
  admin = await id.admin();
  comum = await id.criarUsuarioLogado();
});
afterAll(() => suite.encerrar());

const CAMPOS_DO_APLICATIVO = ['ativo', 'atualizado_em', 'client_id', 'criado_em', 'descricao', 'id', 'nome'];

const criar = (body: Record<string, unknown>) => id.api.post('/aplicativo', { token: admin, body });
const token = (client_id: string, client_secret: string) => id.api.post('/auth/token', { body: { client_id, client_secret } });

describe('POST /aplicativo (DESIGN §10)', () => {
  test('answers 201 with the application, client_id equal to id and client_secret shown once', async () => {
    const nome = `App ${marca()}`;
    const res = await criar({ nome, descricao: 'Integração de teste' });
    expect(res.status).toBe(201);
    expect(chavesOrdenadas(res.body)).toEqual([...CAMPOS_DO_APLICATIVO, 'client_secret'].sort());
    expect(res.body).toMatchObject({ nome, descricao: 'Integração de teste', ativo: true });
    expect(res.body.client_id).toBe(res.body.id);
    expect(res.body.client_secret).toEqual(expect.any(String));
    expect(res.body.client_secret.length).toBeGreaterThanOrEqual(32);
    expect(res.body.criado_em).toMatch(RFC3339);
    // the secret travels once, kept by no cache on its way
    expect(res.headers.get('cache-control')).toBe('no-store');
  });

  test('an empty description is no description (null), on POST and on PATCH', async () => {
    const criado = (await criar({ nome: `Vazio ${marca()}`, descricao: '' })).body;
    expect(criado.descricao).toBeNull();
    await id.api.patch(`/aplicativo/${criado.id}`, { token: admin, body: { descricao: 'algo' } });
    const limpo = await id.api.patch(`/aplicativo/${criado.id}`, { token: admin, body: { descricao: '' } });
    expect(limpo.body.descricao).toBeNull();
  });

  test('GET never shows the client_secret again, by id or in the list', async () => {
    const criado = (await criar({ nome: `Aaa Segredo ${marca()}` })).body;
    const porId = await id.api.get(`/aplicativo/${criado.id}`, { token: admin });
    expect(porId.status).toBe(200);
    expect(chavesOrdenadas(porId.body)).toEqual(CAMPOS_DO_APLICATIVO);
    const { client_secret, ...semSegredo } = criado;
    expect(porId.body).toEqual(semSegredo);
    const lista = await id.api.get('/aplicativo', { token: admin, query: { tamanho: 500 } });
    for (const r of [porId, lista]) {
      expect(r.text).not.toContain(client_secret);
      expect(r.text).not.toMatch(/client_secret|segredo_hash/);
    }
  });

  test('a body without nome answers 400 and creates nothing (DESIGN §4)', async () => {
    const antes = (await id.api.get('/aplicativo', { token: admin })).body.total;
    esperarProblema(await criar({ descricao: 'sem nome' }), 400);
    esperarProblema(await criar({ nome: '  ' }), 400);
    expect((await id.api.get('/aplicativo', { token: admin })).body.total).toBe(antes);
  });

  test('is master only: a non-master user and an application get 403 (DESIGN §3)', async () => {
    const app = await id.criarAplicativo();
    const antes = (await id.api.get('/aplicativo', { token: admin })).body.total;
    esperarProblema(await id.api.post('/aplicativo', { token: comum.token, body: { nome: 'Intruso' } }), 403);
    esperarProblema(await id.api.post('/aplicativo', { token: app.token, body: { nome: 'Intruso' } }), 403);
    expect((await id.api.get('/aplicativo', { token: admin })).body.total).toBe(antes);
  });
});

describe('POST /auth/token (DESIGN §3, §10: client credentials)', () => {
  test('gives {access_token, token_type "Bearer", expires_in 3600} whose sub is the application id', async () => {
    const app = (await criar({ nome: `Cliente ${marca()}` })).body;
    const res = await token(app.client_id, app.client_secret);
    expect(res.status).toBe(200);
    expect(chavesOrdenadas(res.body)).toEqual(['access_token', 'expires_in', 'token_type']);
    expect(res.body).toMatchObject({ token_type: 'Bearer', expires_in: 3600 });
    const jwks = (await id.api.get('/.well-known/jwks.json')).body;
    const { payload } = await jwtVerify(res.body.access_token, createLocalJWKSet(jwks), { issuer: suite.url.identity });
    expect(payload).toMatchObject({ sub: app.id, tipo: 'aplicativo', nome: app.nome });
    expect(payload.master).toBeUndefined();
    expect(payload.exp! - payload.iat!).toBe(3600);
  });

  test('a wrong secret answers 401', async () => {
    const app = (await criar({ nome: `Cliente ${marca()}` })).body;
    esperarProblema(await token(app.client_id, `${app.client_secret}x`), 401);
  });

  test('an unknown client_id answers 401, the same problem as a wrong secret', async () => {
    const app = (await criar({ nome: `Cliente ${marca()}` })).body;
    const desconhecido = esperarProblema(await token('0190a3c4-0000-7000-8000-000000000000', app.client_secret), 401);
    const errado = esperarProblema(await token(app.client_id, 'segredo-errado'), 401);
    expect(desconhecido).toEqual(errado);
  });

  test('a body without client_secret answers 400 (DESIGN §4)', async () => {
    esperarProblema(await id.api.post('/auth/token', { body: { client_id: 'x' } }), 400);
  });

  test('a deactivated application (PATCH ativo false) gets 401, and works again once reactivated', async () => {
    const app = (await criar({ nome: `Pausado ${marca()}` })).body;
    const desativado = await id.api.patch(`/aplicativo/${app.id}`, { token: admin, body: { ativo: false } });
    expect(desativado.status).toBe(200);
    expect(desativado.body.ativo).toBe(false);
    esperarProblema(await token(app.client_id, app.client_secret), 401);
    await id.api.patch(`/aplicativo/${app.id}`, { token: admin, body: { ativo: true } });
    expect((await token(app.client_id, app.client_secret)).status).toBe(200);
  });

  test('a deleted application gets 401', async () => {
    const app = (await criar({ nome: `Removido ${marca()}` })).body;
    expect((await id.api.del(`/aplicativo/${app.id}`, { token: admin })).status).toBe(204);
    esperarProblema(await token(app.client_id, app.client_secret), 401);
  });

  test('a renewed secret (POST /aplicativo/{id}/segredo) replaces the old one at once', async () => {
    const app = (await criar({ nome: `Renovado ${marca()}` })).body;
    const renovado = await id.api.post(`/aplicativo/${app.id}/segredo`, { token: admin });
    expect(renovado.status).toBe(200);
    expect(renovado.body).toMatchObject({ id: app.id, client_id: app.id });
    expect(renovado.body.client_secret).not.toBe(app.client_secret);
    expect(renovado.headers.get('cache-control')).toBe('no-store');
    esperarProblema(await token(app.client_id, app.client_secret), 401);
    expect((await token(app.client_id, renovado.body.client_secret)).status).toBe(200);
  });

  test('renewing the secret is master only (403) and needs an existing application (404)', async () => {
    const app = (await criar({ nome: `Renovado ${marca()}` })).body;
    esperarProblema(await id.api.post(`/aplicativo/${app.id}/segredo`, { token: comum.token }), 403);
    expect((await token(app.client_id, app.client_secret)).status).toBe(200);
    esperarProblema(await id.api.post('/aplicativo/0190a3c4-0000-7000-8000-000000000000/segredo', { token: admin }), 404);
  });
});

describe('GET /aplicativo (DESIGN §3: master and application tokens)', () => {
  test('is open to a master', async () => {
    const res = await id.api.get('/aplicativo', { token: admin });
    expect(res.status).toBe(200);
    expect(chavesOrdenadas(res.body)).toEqual(['itens', 'pagina', 'tamanho', 'total']);
  });

  test('is open to an application token, by list and by id (the hub syncs from it)', async () => {
    const app = await id.criarAplicativo();
    const lista = await id.api.get('/aplicativo', { token: app.token, query: { tamanho: 500 } });
    expect(lista.status).toBe(200);
    expect(lista.body.itens.map((a: any) => a.id)).toContain(app.id);
    expect((await id.api.get(`/aplicativo/${app.id}`, { token: app.token })).status).toBe(200);
  });

  test('refuses a non-master user with 403 and a call without token with 401', async () => {
    esperarProblema(await id.api.get('/aplicativo', { token: comum.token }), 403);
    esperarProblema(await id.api.get(`/aplicativo/${comum.usuario.id}`, { token: comum.token }), 403);
    esperarProblema(await id.api.get('/aplicativo'), 401);
  });

  test('lists in alphabetical order of name, with total and paging (SPEC §2 page shape)', async () => {
    const m = marca();
    for (const nome of ['Gama', 'alfa', 'Beta']) await criar({ nome: `${m} ${nome}` });
    const todos = (await id.api.get('/aplicativo', { token: admin, query: { tamanho: 500 } })).body;
    const nomes = todos.itens.map((a: any) => a.nome);
    expect(nomes.filter((n: string) => n.startsWith(m))).toEqual([`${m} alfa`, `${m} Beta`, `${m} Gama`]);
    expect([...nomes].sort((a, b) => a.localeCompare(b, 'pt', { sensitivity: 'base' }))).toEqual(nomes);
    expect(todos.total).toBe(todos.itens.length);
    const pagina2 = (await id.api.get('/aplicativo', { token: admin, query: { tamanho: 2, pagina: 2 } })).body;
    expect(pagina2).toMatchObject({ pagina: 2, tamanho: 2, total: todos.total });
    expect(pagina2.itens).toEqual(todos.itens.slice(2, 4));
  });

  test('pagina and tamanho below 1 become 1, non-integers answer 400 (DESIGN §4, §10)', async () => {
    const res = await id.api.get('/aplicativo', { token: admin, query: { tamanho: 0, pagina: -2 } });
    expect(res.body).toMatchObject({ pagina: 1, tamanho: 1 });
    expect(res.body.itens).toHaveLength(1);
    esperarProblema(await id.api.get('/aplicativo', { token: admin, query: { tamanho: 'x' } }), 400);
  });

  test('a deleted application vanishes from the list and by id answers 404 (DESIGN §4)', async () => {
    const app = (await criar({ nome: `Sumido ${marca()}` })).body;
    const antes = (await id.api.get('/aplicativo', { token: admin })).body.total;
    await id.api.del(`/aplicativo/${app.id}`, { token: admin });
    const lista = (await id.api.get('/aplicativo', { token: admin, query: { tamanho: 500 } })).body;
    expect(lista.total).toBe(antes - 1);
    expect(lista.itens.map((a: any) => a.id)).not.toContain(app.id);
    esperarProblema(await id.api.get(`/aplicativo/${app.id}`, { token: admin }), 404);
    esperarProblema(await id.api.del(`/aplicativo/${app.id}`, { token: admin }), 404);
  });
});

describe('PATCH and DELETE /aplicativo/{id} (DESIGN §3)', () => {
  test('PATCH changes only the fields sent and the response matches a later read', async () => {
    const app = (await criar({ nome: `Antigo ${marca()}`, descricao: 'fica' })).body;
    await dormir(5);
    const res = await id.api.patch(`/aplicativo/${app.id}`, { token: admin, body: { nome: 'Novo Nome' } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ nome: 'Novo Nome', descricao: 'fica', ativo: true });
    expect(Date.parse(res.body.atualizado_em)).toBeGreaterThan(Date.parse(app.atualizado_em));
    expect((await id.api.get(`/aplicativo/${app.id}`, { token: admin })).body).toEqual(res.body);
  });

  test('PATCH with an invalid body answers 400 and changes nothing (DESIGN §4)', async () => {
    const app = (await criar({ nome: `Intacto ${marca()}` })).body;
    esperarProblema(await id.api.patch(`/aplicativo/${app.id}`, { token: admin, body: { ativo: 'talvez' } }), 400);
    // a JSON body's boolean is a JSON boolean: neither its text nor an empty string
    for (const ativo of ['false', '']) esperarProblema(await id.api.patch(`/aplicativo/${app.id}`, { token: admin, body: { ativo } }), 400);
    esperarProblema(await id.api.patch(`/aplicativo/${app.id}`, { token: admin, body: { segredo: 'x' } }), 400);
    const { client_secret: segredo, ...comoCriado } = app;
    expect((await id.api.get(`/aplicativo/${app.id}`, { token: admin })).body).toEqual(comoCriado);
    // the secret it was given still gets tokens
    expect((await token(app.id, segredo)).status).toBe(200);
  });

  test('PATCH and DELETE are master only: an application token gets 403, and nothing changes', async () => {
    const app = await id.criarAplicativo();
    const antes = (await id.api.get(`/aplicativo/${app.id}`, { token: admin })).body;
    esperarProblema(await id.api.patch(`/aplicativo/${app.id}`, { token: app.token, body: { nome: 'x', ativo: false } }), 403);
    esperarProblema(await id.api.del(`/aplicativo/${app.id}`, { token: app.token }), 403);
    expect((await id.api.get(`/aplicativo/${app.id}`, { token: admin })).body).toEqual(antes);
  });

  test("the suite's own applications (servico_da_suite) cannot be deleted or deactivated (409)", async () => {
    const daSuite = await Aplicativo.findAll({ where: { servico_da_suite: ['hub', 'identity'] } });
    expect(daSuite).toHaveLength(2);
    for (const app of daSuite) {
      esperarProblema(await id.api.del(`/aplicativo/${app.id}`, { token: admin }), 409);
      esperarProblema(await id.api.patch(`/aplicativo/${app.id}`, { token: admin, body: { ativo: false } }), 409);
      expect((await id.api.get(`/aplicativo/${app.id}`, { token: admin })).body.ativo).toBe(true);
    }
  });

  test("outside LOCALHOST, the applications <SERVICE>_CLIENT_ID names (created by a master) become the suite's at identity's start: no deletion or deactivation", async () => {
    const antes = (await Aplicativo.findOne({ where: { servico_da_suite: 'hub' } }))!;
    const criado = await id.criarAplicativo();
    const servicos = config().servicos.hub;
    const original = { clientId: servicos.clientId, ambiente: config().ambiente };
    Object.assign(config(), { ambiente: 'PRODUCTION' });
    servicos.clientId = criado.id;
    try {
      await prepararIdentity();
      esperarProblema(await id.api.del(`/aplicativo/${criado.id}`, { token: admin }), 409);
      esperarProblema(await id.api.patch(`/aplicativo/${criado.id}`, { token: admin, body: { ativo: false } }), 409);
      // the mark moved: one application per service
      expect((await Aplicativo.findAll({ where: { servico_da_suite: 'hub' } })).map((a) => a.id)).toEqual([criado.id]);
    } finally {
      Object.assign(config(), { ambiente: original.ambiente });
      servicos.clientId = original.clientId;
      await Aplicativo.update({ servico_da_suite: null }, { where: { id: criado.id } });
      await Aplicativo.update({ servico_da_suite: 'hub' }, { where: { id: antes.id } });
    }
  });

  test('a change, a new secret or a second deletion arriving while a deletion is under way answers 404: no secret for a deleted application', async () => {
    const app = await id.criarAplicativo();
    const [[antes]] = (await banco('identity').query('SELECT nome, segredo_hash FROM aplicativo WHERE id = ?', { replacements: [app.id] })) as any;
    const conexao = await novaConexao('identity');
    try {
      await conexao.query('START TRANSACTION');
      await conexao.query('UPDATE aplicativo SET deletado_em = NOW(3) WHERE id = ?', [app.id]);
      const pedidos = [
        id.api.patch(`/aplicativo/${app.id}`, { token: admin, body: { nome: 'Depois' } }),
        id.api.post(`/aplicativo/${app.id}/segredo`, { token: admin }),
        id.api.del(`/aplicativo/${app.id}`, { token: admin }),
      ];
      await esperarOutraConexao(conexao, 'the three waiting on the application', ['%FROM `aplicativo`%FOR UPDATE%'], 3);
      await conexao.query('COMMIT');
      for (const res of await Promise.all(pedidos)) esperarProblema(res, 404);
      const [[depois]] = (await banco('identity').query('SELECT nome, segredo_hash FROM aplicativo WHERE id = ?', { replacements: [app.id] })) as any;
      expect(depois).toEqual(antes);
    } finally {
      await conexao.end();
    }
  });

  test('the suite registers its own applications at start (DESIGN §3: hub, identity, intranet, sales, tracing)', async () => {
    const daSuite = await Aplicativo.findAll({ attributes: ['servico_da_suite'] });
    expect(daSuite.map((a) => a.servico_da_suite).filter(Boolean).sort()).toEqual(['hub', 'identity', 'intranet', 'sales', 'tracing']);
  });
});
