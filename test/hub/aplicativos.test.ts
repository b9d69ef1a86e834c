import { randomUUID } from 'node:crypto';
import { esperarProblema } from '../helpers/http';
import { iniciarSuite, SuiteDeTeste } from '../helpers/suite';
import { CAMPOS_DO_APLICATIVO, chaves, Hub, hubDe, RFC3339, semCaixa, unico } from './apoio-admin';

/** Reads of the hub's applications: GET /aplicativo[/autocomplete|/filtro|/{id}] (SPEC 4.4, SPEC §2 Aplicativo). */

let suite: SuiteDeTeste;
let hub: Hub;
let admin: string;
const tag = unico('Apl');

/** Names differing in case, and one whose description (not name) carries a word the others lack. */
let bravo: any, alfa: any, charlie: any;
let idDoBravo: any;

beforeAll(async () => {
  suite = await iniciarSuite(['identity', 'hub']);
  hub = hubDe(suite);
  admin = await hub.admin();
  // each synced alone, against the names' order (one sync registers identity's new applications in
  // name order): ids and creation times run opposite to the names, so only an order by name passes
  await hub.criarNoIdentity(`${tag} Charlie`, 'Portal de vendas');
  await hub.sincronizar();
  idDoBravo = await hub.criarNoIdentity(`${tag} bravo`, 'Integração Financeira');
  await hub.sincronizar();
  await hub.criarNoIdentity(`${tag} Alfa`, null);
  await hub.sincronizar();
  const todos = (await hub.api.get('/aplicativo/filtro', { token: admin, query: { nome: tag } })).body as any[];
  [alfa, bravo, charlie] = [`${tag} Alfa`, `${tag} bravo`, `${tag} Charlie`].map((n) => todos.find((a) => a.nome === n));
});
afterAll(() => suite.encerrar());

const ids = (xs: any[]) => xs.map((x) => x.id);
const listar = (query: Record<string, string | number> = {}) => hub.api.get('/aplicativo', { token: admin, query });
const filtro = async (query: Record<string, string> = {}) => {
  const res = await hub.api.get('/aplicativo/filtro', { token: admin, query });
  expect(res.status).toBe(200);
  return res.body as any[];
};

describe('GET /aplicativo (SPEC 4.4 rule 1, SPEC §8)', () => {
  test('lists in alphabetical order of name, case-insensitively, with total counting every live application', async () => {
    const res = await listar({ tamanho: 1000 });
    expect(res.status).toBe(200);
    const nomes = res.body.itens.map((a: any) => a.nome);
    expect([...nomes].sort(semCaixa)).toEqual(nomes);
    expect(ids(res.body.itens.filter((a: any) => a.nome.startsWith(tag)))).toEqual(ids([alfa, bravo, charlie]));
    expect(res.body.total).toBe(res.body.itens.length);
    expect(res.body.total).toBe((await filtro()).length);
  });

  test('pagina defaults to 1, tamanho to 10; below 1 becomes 1; no maximum; pages are slices of the order', async () => {
    const todos = await filtro();
    const padrao = await listar();
    expect(padrao.body).toMatchObject({ pagina: 1, tamanho: 10, total: todos.length });
    expect(ids(padrao.body.itens)).toEqual(ids(todos.slice(0, 10)));
    const minimo = await listar({ pagina: 0, tamanho: -2 });
    expect(minimo.body).toEqual({ itens: [todos[0]], pagina: 1, tamanho: 1, total: todos.length });
    const segunda = await listar({ pagina: 2, tamanho: 2 });
    expect(ids(segunda.body.itens)).toEqual(ids(todos.slice(2, 4)));
    const enorme = await listar({ tamanho: 50000 });
    expect(enorme.body.tamanho).toBe(50000);
    expect(enorme.body.itens).toHaveLength(todos.length);
  });

  test.each([
    ['pagina', 'primeira'],
    ['tamanho', '3.5'],
  ])('a non-integer %s answers 400 naming it (DESIGN §4)', async (campo, valor) => {
    for (const caminho of ['/aplicativo', '/aplicativo/autocomplete']) {
      const problema = esperarProblema(await hub.api.get(caminho, { token: admin, query: { [campo]: valor } }), 400);
      expect(problema.errors).toEqual([expect.objectContaining({ campo })]);
    }
  });
});

describe('GET /aplicativo/{id}: the Aplicativo (SPEC §2, SPEC 4.4 rule 2)', () => {
  test('carries exactly the fields of SPEC §2; identificador_no_auth is the identity id; dates are RFC 3339', async () => {
    const res = await hub.api.get(`/aplicativo/${bravo.id}`, { token: admin });
    expect(res.status).toBe(200);
    expect(chaves(res.body)).toEqual(CAMPOS_DO_APLICATIVO);
    expect(res.body).toEqual({
      id: bravo.id,
      nome: `${tag} bravo`,
      descricao: 'Integração Financeira',
      ativo: true,
      identificador_no_auth: idDoBravo.id,
      quantidade_de_tipos_de_evento: 0,
      quantidade_de_assinaturas: 0,
      criado_em: expect.stringMatching(RFC3339),
      atualizado_em: expect.stringMatching(RFC3339),
    });
    expect(res.body.id).not.toBe(idDoBravo.id);
    expect(res.body).toEqual((await listar({ tamanho: 1000 })).body.itens.find((a: any) => a.id === bravo.id));
  });

  test('a missing description is null', async () => {
    expect((await hub.api.get(`/aplicativo/${alfa.id}`, { token: admin })).body.descricao).toBeNull();
  });

  test('quantidade_de_tipos_de_evento counts the live types it owns; quantidade_de_assinaturas the live subscriptions it is subscriber in', async () => {
    const [dono, assinante] = await hub.aplicativos(`${tag} Contado dono`, `${tag} Contado assinante`);
    const t1 = await hub.criarTipo(dono.id);
    const t2 = await hub.criarTipo(dono.id);
    const t3 = await hub.criarTipo(dono.id);
    await hub.criarAssinatura({ aplicativo_assinante_id: assinante.id, tipo_de_evento_id: t1.id });
    const removida = await hub.criarAssinatura({ aplicativo_assinante_id: assinante.id, tipo_de_evento_id: t2.id });
    // the owner subscribes to its own type: it counts as subscriber, not again as owner
    await hub.criarAssinatura({ aplicativo_assinante_id: dono.id, tipo_de_evento_id: t1.id });
    expect((await hub.api.del(`/assinatura/${removida.id}`, { token: admin })).status).toBe(204);
    expect((await hub.api.del(`/tipo_de_evento/${t3.id}`, { token: admin })).status).toBe(204);

    const ler = async (id: string) => (await hub.api.get(`/aplicativo/${id}`, { token: admin })).body;
    expect(await ler(dono.id)).toMatchObject({ quantidade_de_tipos_de_evento: 2, quantidade_de_assinaturas: 1 });
    expect(await ler(assinante.id)).toMatchObject({ quantidade_de_tipos_de_evento: 0, quantidade_de_assinaturas: 1 });
    // the same counts in the list and in the filter
    const naLista = (await listar({ tamanho: 1000 })).body.itens.find((a: any) => a.id === dono.id);
    const noFiltro = (await filtro({ nome: `${tag} Contado dono` }))[0];
    expect(naLista).toEqual(await ler(dono.id));
    expect(noFiltro).toEqual(await ler(dono.id));
  });

  test('an unknown id answers 404 problem+json; a malformed one 400', async () => {
    expect(esperarProblema(await hub.api.get(`/aplicativo/${randomUUID()}`, { token: admin }), 404).code).toBe('nao_encontrado');
    esperarProblema(await hub.api.get('/aplicativo/não%20é%20id', { token: admin }), 400);
  });
});

describe('deleted applications (SPEC 4.4 rules 1 and 2, SPEC §7)', () => {
  test('an application removed from the hub vanishes from list, autocomplete, filter and total, and is not found by id', async () => {
    const nome = `${tag} Removido`;
    const noIdentity = await hub.criarNoIdentity(nome);
    await hub.sincronizar();
    const local = await hub.doHub(noIdentity.id);
    expect(local).toBeDefined();
    const totalAntes = (await listar()).body.total;

    expect((await hub.identity.api.del(`/aplicativo/${noIdentity.id}`, { token: admin })).status).toBe(204);
    const depois = await hub.sincronizar();
    expect(depois.total).toBe(totalAntes - 1);
    expect(ids(depois.itens)).not.toContain(local.id);
    expect(await filtro({ nome })).toEqual([]);
    const auto = await hub.api.get('/aplicativo/autocomplete', { token: admin, query: { busca: nome } });
    expect(auto.body).toMatchObject({ itens: [], total: 0 });
    expect(esperarProblema(await hub.api.get(`/aplicativo/${local.id}`, { token: admin }), 404).code).toBe('nao_encontrado');
  });
});

describe('GET /aplicativo/autocomplete (SPEC 4.4, SPEC §8)', () => {
  const auto = (query: Record<string, string | number>) => hub.api.get('/aplicativo/autocomplete', { token: admin, query });

  test('items are exactly id, nome and ativo, alphabetical; pagina 1 and tamanho 10 by default', async () => {
    const res = await auto({ busca: tag });
    expect(res.status).toBe(200);
    expect(res.body.pagina).toBe(1);
    expect(res.body.tamanho).toBe(10);
    const nossos = res.body.itens.filter((a: any) => [alfa.id, bravo.id, charlie.id].includes(a.id));
    expect(nossos).toEqual([alfa, bravo, charlie].map((a) => ({ id: a.id, nome: a.nome, ativo: true })));
    expect(chaves(res.body.itens[0])).toEqual(['ativo', 'id', 'nome']);
  });

  test('busca matches a case-insensitive substring of the name only, not of the description', async () => {
    expect(ids((await auto({ busca: `${tag.toLowerCase()} BRAVO` })).body.itens)).toEqual([bravo.id]);
    expect(ids((await auto({ busca: `${tag.toUpperCase()} CHAR` })).body.itens)).toEqual([charlie.id]);
    expect((await auto({ busca: 'Integração Financeira' })).body).toMatchObject({ itens: [], total: 0 });
  });

  test('pagina and tamanho page through the matches; below 1 becomes 1; without busca total counts every live application', async () => {
    const p2 = await auto({ busca: tag, pagina: 2, tamanho: 1 });
    expect(p2.body.itens).toEqual([{ id: bravo.id, nome: bravo.nome, ativo: true }]);
    const minimo = await auto({ busca: tag, pagina: -1, tamanho: 0 });
    expect(minimo.body).toMatchObject({ pagina: 1, tamanho: 1, itens: [{ id: alfa.id, nome: alfa.nome, ativo: true }] });
    expect((await auto({})).body.total).toBe((await filtro()).length);
    // no maximum (SPEC §8): a large tamanho is kept and holds every application
    const enorme = await auto({ tamanho: 100_000 });
    expect(enorme.body.tamanho).toBe(100_000);
    expect(enorme.body.itens).toHaveLength(enorme.body.total);
  });
});

describe('GET /aplicativo/filtro (SPEC 4.4)', () => {
  test('without parameters, or with empty ones, returns every live application, alphabetical', async () => {
    const todos = await filtro();
    expect(todos.length).toBe((await listar()).body.total);
    expect(todos.map((a) => a.nome)).toEqual(todos.map((a) => a.nome).sort(semCaixa));
    expect(await filtro({ nome: '', ativo: '' })).toEqual(todos);
    expect(chaves(todos[0])).toEqual(CAMPOS_DO_APLICATIVO);
  });

  test('nome matches a case-insensitive substring of the name or of the description', async () => {
    expect(ids(await filtro({ nome: `${tag.toLowerCase()} BRAVO` }))).toEqual([bravo.id]);
    expect(ids(await filtro({ nome: 'integração FINANCEIRA' }))).toEqual([bravo.id]);
    expect(ids(await filtro({ nome: 'PORTAL DE' }))).toEqual([charlie.id]);
    expect(await filtro({ nome: `${tag}%` })).toEqual([]);
  });

  test('ativo filters by status', async () => {
    // an application that left identity while owning a type stays, inactive (SPEC §3)
    const nome = `${tag} Inativo`;
    const noIdentity = await hub.criarNoIdentity(nome);
    await hub.sincronizar();
    const local = await hub.doHub(noIdentity.id);
    await hub.criarTipo(local.id);
    await hub.identity.api.del(`/aplicativo/${noIdentity.id}`, { token: admin });
    await hub.sincronizar();

    const inativos = await filtro({ ativo: 'false' });
    expect(ids(inativos.filter((a) => a.nome.startsWith(tag)))).toEqual([local.id]);
    expect(inativos.every((a) => a.ativo === false)).toBe(true);
    const ativos = await filtro({ ativo: 'true' });
    expect(ativos.every((a) => a.ativo === true)).toBe(true);
    expect(ids(ativos)).toEqual(expect.arrayContaining(ids([alfa, bravo, charlie])));
    expect(ativos.length + inativos.length).toBe((await filtro()).length);
    expect(ids(await filtro({ nome, ativo: 'true' }))).toEqual([]);
    expect(ids(await filtro({ nome, ativo: 'false' }))).toEqual([local.id]);
  });

  test('ativo not a boolean answers 400 naming it', async () => {
    const problema = esperarProblema(await hub.api.get('/aplicativo/filtro', { token: admin, query: { ativo: 'talvez' } }), 400);
    expect(problema.errors).toEqual([expect.objectContaining({ campo: 'ativo' })]);
  });
});

describe('applications are read-only in the hub (SPEC 4.4 rule 4, SPEC §3 Hub application activity)', () => {
  test('there is no route to create, edit or delete an application: 405 naming GET alone, and nothing changes', async () => {
    const antes = await filtro();
    for (const res of [
      await hub.api.post('/aplicativo', { token: admin, body: { nome: `${tag} Novo` } }),
      await hub.api.patch(`/aplicativo/${alfa.id}`, { token: admin, body: { nome: `${tag} Mudado` } }),
      await hub.api.del(`/aplicativo/${alfa.id}`, { token: admin }),
    ]) {
      expect(esperarProblema(res, 405).code).toBe('metodo_nao_permitido');
      expect(res.headers.get('allow')).toBe('GET, HEAD');
    }
    expect(await filtro()).toEqual(antes);
    const documento = (await hub.api.get('/openapi.json')).body;
    const operacoes = Object.entries(documento.paths as Record<string, object>)
      .filter(([caminho]) => caminho.startsWith('/aplicativo'))
      .flatMap(([, metodos]) => Object.keys(metodos));
    expect(new Set(operacoes)).toEqual(new Set(['get']));
  });
});
