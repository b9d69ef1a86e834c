import { randomUUID } from 'node:crypto';
import { novaConexao } from '../../lib/database';
import { esperarOutraConexao } from '../helpers/espera';
import { esperarProblema } from '../helpers/http';
import { iniciarSuite, SuiteDeTeste } from '../helpers/suite';
import { ACESSO_INICIAL, Intranet, intranetDe, RFC3339, unico } from './apoio';

let suite: SuiteDeTeste;
let it: Intranet;
let admin: string;
beforeAll(async () => {
  suite = await iniciarSuite(['identity', 'intranet']);
  it = intranetDe(suite);
  admin = await it.admin();
});
afterAll(() => suite.encerrar());

async function porId(id: string) {
  return it.api.get(`/perfil_acesso/${id}`, { token: admin });
}

async function porNome(nome: string) {
  const res = await it.api.get('/perfil_acesso/filtro', { token: admin, query: { nome } });
  expect(res.status).toBe(200);
  return res.body as any[];
}

describe('access profiles (DESIGN §3)', () => {
  test('`Acesso inicial` is seeded: read-only, {colaboradores: [ler]}, marked as a system profile (SPEC 4.5 rule 2)', async () => {
    const [inicial] = await porNome(ACESSO_INICIAL);
    expect(inicial).toEqual({
      id: expect.any(String),
      nome: ACESSO_INICIAL,
      descricao: expect.any(String),
      permissoes: { colaboradores: ['ler'] },
      sistema: true,
      criado_em: expect.stringMatching(RFC3339),
      atualizado_em: expect.stringMatching(RFC3339),
    });
  });

  test('POST creates a profile: 201 with its fields, read back the same by id', async () => {
    const nome = unico('Perfil ');
    const res = await it.api.post('/perfil_acesso', {
      token: admin,
      body: { nome, descricao: 'Quem edita colaboradores', permissoes: { colaboradores: ['editar', 'ler', 'ler'] } },
    });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.any(String),
      nome,
      descricao: 'Quem edita colaboradores',
      permissoes: { colaboradores: ['ler', 'editar'] },
      sistema: false,
      criado_em: expect.stringMatching(RFC3339),
      atualizado_em: expect.stringMatching(RFC3339),
    });
    const lido = await porId(res.body.id);
    expect(lido.status).toBe(200);
    expect(lido.body).toEqual(res.body);
  });

  test.each([
    ['an unknown area', { permissoes: { vendas: ['ler'] } }, 'permissoes.vendas'],
    ['an unknown action', { permissoes: { colaboradores: ['ler', 'voar'] } }, 'permissoes.colaboradores.1'],
    ['permissions that are not an object', { permissoes: ['ler'] }, 'permissoes'],
    ['no permissions', {}, 'permissoes'],
    ['an empty name', { nome: '  ', permissoes: {} }, 'nome'],
    ['an unknown field', { permissoes: {}, dono: 'x' }, 'dono'],
    // JSON.parse makes `__proto__` an own key, which joi would drop without a word
    ['the key __proto__ as an area', { permissoes: JSON.parse('{"__proto__": ["ler"]}') }, 'permissoes.__proto__'],
    ['the key __proto__ as a field', JSON.parse('{"permissoes": {}, "__proto__": {"nome": "x"}}'), '__proto__'],
  ])('POST with %s answers 400 naming the field, and creates nothing', async (_caso, campos, campo) => {
    const nome = unico('Ruim ');
    const res = await it.api.post('/perfil_acesso', { token: admin, body: { nome, ...campos } });
    const problema = esperarProblema(res, 400);
    expect(problema.errors).toEqual(expect.arrayContaining([expect.objectContaining({ campo })]));
    expect(await porNome(nome)).toEqual([]);
  });

  test('POST with malformed JSON answers 400 problem+json', async () => {
    esperarProblema(await it.api.post('/perfil_acesso', { token: admin, raw: '{"nome": "x", ' }), 400);
  });

  test('a duplicate name answers 409 and creates nothing', async () => {
    const perfil = await it.criarPerfil({ colaboradores: ['ler'] });
    const res = await it.api.post('/perfil_acesso', { token: admin, body: { nome: perfil.nome, permissoes: {} } });
    esperarProblema(res, 409);
    expect(await porNome(perfil.nome)).toEqual([perfil]);
  });

  test('GET /perfil_acesso is a page-number page in name order; pagina and tamanho walk every profile once', async () => {
    const tag = unico('Pag');
    for (const letra of ['C', 'A', 'B']) await it.criarPerfil({}, `${tag} ${letra}`);
    const todos = await porNome('');
    expect(todos.length).toBeGreaterThanOrEqual(4);

    const padrao = await it.api.get('/perfil_acesso', { token: admin });
    expect(padrao.status).toBe(200);
    expect(Object.keys(padrao.body).sort()).toEqual(['itens', 'pagina', 'tamanho', 'total']);
    expect(padrao.body).toMatchObject({ pagina: 1, tamanho: 10, total: todos.length });

    const vistos: any[] = [];
    for (let pagina = 1; pagina <= Math.ceil(todos.length / 2); pagina++) {
      const res = await it.api.get('/perfil_acesso', { token: admin, query: { pagina, tamanho: 2 } });
      expect(res.body).toMatchObject({ pagina, tamanho: 2, total: todos.length });
      vistos.push(...res.body.itens);
    }
    expect(vistos).toEqual(todos);
    expect(vistos.filter((p) => p.nome.startsWith(tag)).map((p) => p.nome)).toEqual([`${tag} A`, `${tag} B`, `${tag} C`]);
    const alem = await it.api.get('/perfil_acesso', { token: admin, query: { pagina: 1000, tamanho: 2 } });
    expect(alem.body).toEqual({ itens: [], pagina: 1000, tamanho: 2, total: todos.length });
  });

  test('GET /perfil_acesso: pagina below 1 becomes 1; non-integer pagina or tamanho answers 400 (DESIGN §4, §10)', async () => {
    const res = await it.api.get('/perfil_acesso', { token: admin, query: { pagina: 0, tamanho: 1 } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ pagina: 1, tamanho: 1 });
    expect(res.body.itens).toHaveLength(1);
    esperarProblema(await it.api.get('/perfil_acesso', { token: admin, query: { pagina: 'um' } }), 400);
    esperarProblema(await it.api.get('/perfil_acesso', { token: admin, query: { tamanho: '2.5' } }), 400);
  });

  test('GET /perfil_acesso/filtro matches a case-insensitive substring of the name, in name order, and returns all without nome', async () => {
    const tag = unico('Filtro');
    const b = await it.criarPerfil({}, `${tag} Beta`);
    const a = await it.criarPerfil({}, `${tag} alfa`);
    await it.criarPerfil({}, unico('Outro '));
    expect(await porNome(tag.toUpperCase())).toEqual([a, b]);
    expect(await porNome(`${tag} BET`)).toEqual([b]);
    const todos = await porNome('');
    expect(todos.map((p) => p.id)).toEqual(expect.arrayContaining([a.id, b.id]));
    const total = (await it.api.get('/perfil_acesso', { token: admin })).body.total;
    expect(todos).toHaveLength(total);
  });

  test('GET /perfil_acesso/{id} of an unknown id answers 404; a malformed id 400', async () => {
    esperarProblema(await porId(randomUUID()), 404);
    esperarProblema(await porId('não-é-id'), 400);
  });

  test('PATCH is partial: only the fields sent change', async () => {
    const perfil = await it.criarPerfil({ colaboradores: ['ler'] });
    const so = await it.api.patch(`/perfil_acesso/${perfil.id}`, { token: admin, body: { descricao: 'Nova descrição' } });
    expect(so.status).toBe(200);
    expect(so.body).toEqual({ ...perfil, descricao: 'Nova descrição', atualizado_em: expect.stringMatching(RFC3339) });

    const nome = unico('Renomeado ');
    const outro = await it.api.patch(`/perfil_acesso/${perfil.id}`, {
      token: admin,
      body: { nome, permissoes: { colaboradores: ['deletar', 'ler'] } },
    });
    expect(outro.body).toEqual({ ...so.body, nome, permissoes: { colaboradores: ['ler', 'deletar'] }, atualizado_em: expect.any(String) });
    expect((await porId(perfil.id)).body).toEqual(outro.body);
  });

  test('an empty description is stored as no description (null), on POST and on PATCH', async () => {
    const criado = await it.api.post('/perfil_acesso', { token: admin, body: { nome: unico('Vazio '), descricao: '', permissoes: {} } });
    expect(criado.status).toBe(201);
    expect(criado.body.descricao).toBeNull();
    await it.api.patch(`/perfil_acesso/${criado.body.id}`, { token: admin, body: { descricao: 'algo' } });
    const limpo = await it.api.patch(`/perfil_acesso/${criado.body.id}`, { token: admin, body: { descricao: '' } });
    expect(limpo.body.descricao).toBeNull();
    expect((await porId(criado.body.id)).body.descricao).toBeNull();
  });

  test('profile names that differ only by an emoji are two names; in another case, the same one (409)', async () => {
    const nome = unico('Equipe ');
    expect((await it.api.post('/perfil_acesso', { token: admin, body: { nome: `${nome} 🚀`, permissoes: {} } })).status).toBe(201);
    expect((await it.api.post('/perfil_acesso', { token: admin, body: { nome: `${nome} 🎯`, permissoes: {} } })).status).toBe(201);
    esperarProblema(await it.api.post('/perfil_acesso', { token: admin, body: { nome: `${nome.toUpperCase()} 🚀`, permissoes: {} } }), 409);
  });

  test('PATCH to the name of another profile answers 409 and changes nothing', async () => {
    const a = await it.criarPerfil({});
    const b = await it.criarPerfil({});
    esperarProblema(await it.api.patch(`/perfil_acesso/${b.id}`, { token: admin, body: { nome: a.nome } }), 409);
    expect((await porId(b.id)).body).toEqual(b);
  });

  test.each([
    ['an unknown area', { permissoes: { vendas: ['ler'] } }],
    ['an unknown action', { permissoes: { colaboradores: ['apagar'] } }],
    ['an empty name', { nome: '' }],
    ['a name too long', { nome: 'x'.repeat(121) }],
    ['an unknown field', { sistema: false }],
  ])('PATCH with %s answers 400 and changes nothing', async (_caso, body) => {
    const perfil = await it.criarPerfil({ colaboradores: ['ler'] });
    esperarProblema(await it.api.patch(`/perfil_acesso/${perfil.id}`, { token: admin, body }), 400);
    expect((await porId(perfil.id)).body).toEqual(perfil);
  });

  test('PATCH of an unknown profile answers 404', async () => {
    esperarProblema(await it.api.patch(`/perfil_acesso/${randomUUID()}`, { token: admin, body: { descricao: 'x' } }), 404);
  });

  test('DELETE answers 204 with no body; the profile is gone from id, filter and page, and its name is free again (DESIGN §4)', async () => {
    const perfil = await it.criarPerfil({ colaboradores: ['ler'] });
    const res = await it.api.del(`/perfil_acesso/${perfil.id}`, { token: admin });
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    esperarProblema(await porId(perfil.id), 404);
    expect(await porNome(perfil.nome)).toEqual([]);
    const pagina = await it.api.get('/perfil_acesso', { token: admin, query: { tamanho: 500 } });
    expect(pagina.body.itens.map((p: any) => p.id)).not.toContain(perfil.id);
    esperarProblema(await it.api.del(`/perfil_acesso/${perfil.id}`, { token: admin }), 404);
    esperarProblema(await it.api.patch(`/perfil_acesso/${perfil.id}`, { token: admin, body: { descricao: 'x' } }), 404);
    const denovo = await it.api.post('/perfil_acesso', { token: admin, body: { nome: perfil.nome, permissoes: {} } });
    expect(denovo.status).toBe(201);
  });

  test('deleting a profile in use answers 409 and keeps it; once unlinked it can be deleted', async () => {
    const { colaborador, perfil } = await it.pessoa({ permissoes: { colaboradores: ['ler'] } });
    const problema = esperarProblema(await it.api.del(`/perfil_acesso/${perfil.id}`, { token: admin }), 409);
    expect(problema.detail).toMatch(/colaborador/);
    expect((await porId(perfil.id)).body).toEqual(perfil);
    await it.vincular(colaborador.id, null);
    expect((await it.api.del(`/perfil_acesso/${perfil.id}`, { token: admin })).status).toBe(204);
  });

  test('`Acesso inicial` cannot be changed or deleted: 409, and it stays as it was', async () => {
    const inicial = await it.acessoInicial();
    const caminho = `/perfil_acesso/${inicial.id}`;
    esperarProblema(await it.api.patch(caminho, { token: admin, body: { permissoes: { colaboradores: ['ler', 'editar'] } } }), 409);
    esperarProblema(await it.api.patch(caminho, { token: admin, body: { nome: unico('Outro nome ') } }), 409);
    esperarProblema(await it.api.del(caminho, { token: admin }), 409);
    expect((await porId(inicial.id)).body).toEqual(inicial);
  });

  test('permissions changed by PATCH take effect at once for the people who hold the profile (DESIGN §3)', async () => {
    const { token, perfil } = await it.pessoa({ permissoes: { colaboradores: ['ler'] } });
    expect((await it.api.get('/colaborador/filtro', { token })).status).toBe(200);
    await it.api.patch(`/perfil_acesso/${perfil.id}`, { token: admin, body: { permissoes: {} } });
    esperarProblema(await it.api.get('/colaborador/filtro', { token }), 403);
    await it.api.patch(`/perfil_acesso/${perfil.id}`, { token: admin, body: { permissoes: { colaboradores: ['criar'] } } });
    expect((await it.api.get('/colaborador/filtro', { token })).status).toBe(200);
    const criado = await it.api.post('/perfil_acesso', { token, body: { nome: unico('Pelo criador '), permissoes: {} } });
    expect(criado.status).toBe(201);
  });
});

describe('a profile deleted while someone is being linked to it (DESIGN §4: deleted records vanish)', () => {
  test('the deletion waits for the link under way, then counts it: 409, and the link points to a live profile', async () => {
    const perfil = await it.criarPerfil({ colaboradores: ['ler'] });
    const { colaborador } = await it.pessoa();
    // the test's connection stands for PATCH /colaborador/{id}/perfil_acesso midway: the profile read FOR SHARE
    const conexao = await novaConexao('intranet');
    try {
      await conexao.query('START TRANSACTION');
      await conexao.query('SELECT id FROM perfil_acesso WHERE id = ? LOCK IN SHARE MODE', [perfil.id]);
      const remocao = it.api.del(`/perfil_acesso/${perfil.id}`, { token: admin });
      await esperarOutraConexao(conexao, 'the deletion waiting on the profile', ['%FROM `perfil_acesso`%FOR UPDATE%', 'UPDATE `perfil_acesso`%']);
      await conexao.query('UPDATE colaborador SET perfil_acesso_id = ? WHERE id = ?', [perfil.id, colaborador.id]);
      await conexao.query('COMMIT');
      esperarProblema(await remocao, 409);
      expect((await porId(perfil.id)).status).toBe(200);
    } finally {
      await conexao.end();
    }
  });
});

describe('a profile changed while it is being deleted', () => {
  test('the change waits for the deletion, then answers 404 and writes nothing to the deleted profile', async () => {
    const perfil = await it.criarPerfil({ colaboradores: ['ler'] });
    const conexao = await novaConexao('intranet');
    try {
      await conexao.query('START TRANSACTION');
      await conexao.query('UPDATE perfil_acesso SET deletado_em = NOW(3) WHERE id = ?', [perfil.id]);
      const mudanca = it.api.patch(`/perfil_acesso/${perfil.id}`, { token: admin, body: { nome: unico('Depois '), permissoes: { colaboradores: ['criar'] } } });
      await esperarOutraConexao(conexao, 'the change waiting on the profile', ['%FROM `perfil_acesso`%FOR UPDATE%']);
      await conexao.query('COMMIT');
      esperarProblema(await mudanca, 404);
      const [[linha]] = (await conexao.query('SELECT nome, permissoes FROM perfil_acesso WHERE id = ?', [perfil.id])) as any;
      expect({ nome: linha.nome, permissoes: typeof linha.permissoes === 'string' ? JSON.parse(linha.permissoes) : linha.permissoes }).toEqual({
        nome: perfil.nome,
        permissoes: { colaboradores: ['ler'] },
      });
    } finally {
      await conexao.end();
    }
  });
});
