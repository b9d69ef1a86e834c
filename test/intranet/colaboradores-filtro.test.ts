import { randomUUID } from 'node:crypto';
import { Colaborador } from '../../models/intranet';
import { esperarProblema } from '../helpers/http';
import { iniciarSuite, SuiteDeTeste } from '../helpers/suite';
import { ACESSO_INICIAL, CAMPOS_DO_COLABORADOR, Intranet, intranetDe, RFC3339, unico } from './apoio';

let suite: SuiteDeTeste;
let it: Intranet;
let admin: string;
/**
 * a non-master with `Acesso inicial`: the filter reads are theirs, as a master's would first sync
 * and so undo what some tests set straight in the table
 */
let leitor: string;
const tag = unico('Filtro');
const tagl = tag.toLowerCase();

/** identity users of this file, by first name, and their local records after the master listing */
const u: Record<string, any> = {};
const c: Record<string, any> = {};

async function cadastro(tipo: 'setor' | 'cargo' | 'funcao', nome: string): Promise<string> {
  const res = await it.identity.api.post(`/${tipo}`, { token: admin, body: { nome } });
  if (res.status !== 201) throw new Error(`create ${tipo}: ${res.status} ${res.text}`);
  return res.body.id;
}

beforeAll(async () => {
  suite = await iniciarSuite(['identity', 'intranet']);
  it = intranetDe(suite);
  admin = await it.admin();
  const fin = await cadastro('setor', `${tag} Financeiro`);
  const com = await cadastro('setor', `${tag} Comercial`);
  const analista = await cadastro('cargo', `${tag} Analista`);
  const gerente = await cadastro('cargo', `${tag} Gerente`);
  const contas = await cadastro('funcao', `${tag} Contas`);
  const pessoas: [string, Record<string, unknown>][] = [
    ['ana', { nome: `${tag} Ana Souza`, email: `ana@${tagl}.empresa.test`, setor_id: fin, cargo_id: analista, funcao_id: contas }],
    ['bruno', { nome: `${tag} bruno Lima`, email: `bruno@${tagl}.outra.test`, setor_id: com, cargo_id: gerente }],
    ['carla', { nome: `${tag} Carla`, email: `carla@${tagl}.empresa.test`, setor_id: fin, cargo_id: gerente }],
    ['diretor', { nome: `${tag} Diretor`, email: `diretor@${tagl}.outra.test`, setor_id: com, e_master: true }],
    // the tag only in the e-mail: found by busca, not by nome
    ['zeca', { nome: `Zeca ${randomUUID().slice(0, 8)}`, email: `zeca@${tagl}.empresa.test` }],
  ];
  for (const [chave, campos] of pessoas) u[chave] = await it.identity.criarUsuario({ senha: undefined, ...campos });
  await it.sincronizar();
  for (const chave of Object.keys(u)) c[chave] = await it.colaboradorDe(u[chave]);
  ({ token: leitor } = await it.pessoa());
});
afterAll(() => suite.encerrar());

async function filtro(query: Record<string, string>) {
  const res = await it.api.get('/colaborador/filtro', { token: leitor, query });
  expect(res.status).toBe(200);
  return res.body as any[];
}
const nomes = (xs: any[]) => xs.map((x) => x.nome);

describe('GET /colaborador/filtro (SPEC 4.5 rule 5)', () => {
  test('without filters it returns every collaborator, alphabetical by name (case-insensitive), as many as the total', async () => {
    const todos = await filtro({});
    const { body } = await it.api.get('/colaborador/total', { token: leitor });
    expect(todos).toHaveLength(body.total);
    expect(nomes(todos.filter((x) => x.nome.startsWith(tag)))).toEqual([
      `${tag} Ana Souza`,
      `${tag} bruno Lima`,
      `${tag} Carla`,
      `${tag} Diretor`,
    ]);
    expect(todos.map((x) => x.id)).toEqual(expect.arrayContaining(Object.values(c).map((x) => x.id)));
    expect(Object.keys(todos[0]).sort()).toEqual(CAMPOS_DO_COLABORADOR);
  });

  test('has no pagination: more than a page of 50 comes back in one answer', async () => {
    // rows straight in the table (not in identity): the next master listing marks them deleted, no test here needs them after
    const extra = unico('Volume');
    await Colaborador.bulkCreate(
      Array.from({ length: 60 }, (_, i) => ({ auth_id: `${extra}-${i}`, nome: `${extra} ${i}`, email: `${extra}${i}@x.test` })),
    );
    expect(await filtro({ nome: extra })).toHaveLength(60);
  });

  test('busca matches a case-insensitive substring of the name or of the e-mail', async () => {
    expect(nomes(await filtro({ busca: tag.toUpperCase() }))).toEqual(nomes([c.ana, c.bruno, c.carla, c.diretor, c.zeca]));
    expect(nomes(await filtro({ busca: `${tagl}.EMPRESA` }))).toEqual(nomes([c.ana, c.carla, c.zeca]));
    expect(nomes(await filtro({ busca: `${tag} BRUNO` }))).toEqual(nomes([c.bruno]));
  });

  test('nome matches only the name; email only the e-mail; both case-insensitive substrings', async () => {
    expect(nomes(await filtro({ nome: tagl }))).toEqual(nomes([c.ana, c.bruno, c.carla, c.diretor]));
    expect(nomes(await filtro({ nome: `${tag} c` }))).toEqual(nomes([c.carla]));
    expect(nomes(await filtro({ email: `${tagl}.OUTRA` }))).toEqual(nomes([c.bruno, c.diretor]));
    expect(await filtro({ email: `${tag} Ana` })).toEqual([]);
  });

  test('setor and cargo match case-insensitive substrings of the names from identity, and filters combine', async () => {
    expect(nomes(await filtro({ setor: `${tagl} financeiro` }))).toEqual(nomes([c.ana, c.carla]));
    expect(nomes(await filtro({ cargo: `${tag} GER` }))).toEqual(nomes([c.bruno, c.carla]));
    expect(nomes(await filtro({ setor: `${tag} Fin`, cargo: `${tag} Ger` }))).toEqual(nomes([c.carla]));
    expect(nomes(await filtro({ setor: `${tag} Com`, busca: 'diretor@' }))).toEqual(nomes([c.diretor]));
  });

  test('ativo filters by status', async () => {
    // identity has no status of its own: the inactive record is set in the table (a master listing would reactivate it)
    await Colaborador.update({ ativo: false }, { where: { id: c.carla.id } });
    try {
      expect(nomes(await filtro({ busca: tag, ativo: 'false' }))).toEqual(nomes([c.carla]));
      expect(nomes(await filtro({ busca: tag, ativo: 'true' }))).toEqual(nomes([c.ana, c.bruno, c.diretor, c.zeca]));
    } finally {
      await Colaborador.update({ ativo: true }, { where: { id: c.carla.id } });
    }
  });

  test('perfil_acesso_id filters by the linked profile', async () => {
    const inicial = await it.acessoInicial();
    const perfil = await it.criarPerfil({ colaboradores: ['ler'] });
    await it.vincular(c.ana.id, perfil.id);
    try {
      expect(nomes(await filtro({ perfil_acesso_id: perfil.id }))).toEqual(nomes([c.ana]));
      expect(nomes(await filtro({ busca: tag, perfil_acesso_id: inicial.id }))).toEqual(nomes([c.bruno, c.carla, c.zeca]));
      expect(await filtro({ perfil_acesso_id: randomUUID() })).toEqual([]);
    } finally {
      await it.vincular(c.ana.id, inicial.id);
    }
  });

  test.each([
    ['ativo not a boolean', { ativo: 'talvez' }, 'ativo'],
    ['a malformed perfil_acesso_id', { perfil_acesso_id: 'não é id' }, 'perfil_acesso_id'],
    ['an e-mail too long', { email: 'x'.repeat(255) }, 'email'],
  ])('%s answers 400 problem+json naming the parameter', async (_caso, query, campo) => {
    const problema = esperarProblema(await it.api.get('/colaborador/filtro', { token: admin, query }), 400);
    expect(problema.errors).toEqual([expect.objectContaining({ campo })]);
  });
});

describe('GET /colaborador/{id} (SPEC 4.5 rule 6, SPEC §2)', () => {
  test('carries exactly the Colaborador fields: access e-mail, master flag, sector, position and function names, profile id and name, RFC 3339 dates', async () => {
    const inicial = await it.acessoInicial();
    const res = await it.api.get(`/colaborador/${c.ana.id}`, { token: admin });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(CAMPOS_DO_COLABORADOR);
    expect(res.body).toEqual({
      id: c.ana.id,
      auth_id: u.ana.id,
      nome: `${tag} Ana Souza`,
      email: `ana@${tagl}.empresa.test`,
      ativo: true,
      master: false,
      setor: `${tag} Financeiro`,
      cargo: `${tag} Analista`,
      funcao: `${tag} Contas`,
      telefone: null,
      perfil_acesso_id: inicial.id,
      perfil_acesso: ACESSO_INICIAL,
      criado_em: expect.stringMatching(RFC3339),
      atualizado_em: expect.stringMatching(RFC3339),
    });
    expect(Date.parse(res.body.atualizado_em)).toBeGreaterThanOrEqual(Date.parse(res.body.criado_em));
  });

  test('absent values are null: a master has no profile, and no function when identity gives none', async () => {
    const res = await it.api.get(`/colaborador/${c.diretor.id}`, { token: admin });
    expect(res.body).toMatchObject({ master: true, perfil_acesso_id: null, perfil_acesso: null, funcao: null, cargo: null });
  });

  test('reads the same record that the list and the filter show', async () => {
    const { token } = await it.pessoa();
    const porId = (await it.api.get(`/colaborador/${c.bruno.id}`, { token })).body;
    const naLista = (await it.api.get('/colaborador', { token, query: { nome: `${tag} bruno` } })).body.itens;
    expect(naLista).toEqual([porId]);
    expect(await filtro({ email: `bruno@${tagl}` })).toEqual([porId]);
  });

  test('reads arriving together (read in one statement) each get their own record, its profile included; an unknown id, 404, alone', async () => {
    const { token } = await it.pessoa();
    // not in the order the database reads them in (their ids grow with time)
    const pessoas = [c.zeca, c.carla, c.ana, c.diretor, c.bruno];
    const sozinhos = [];
    for (const p of pessoas) sozinhos.push((await it.api.get(`/colaborador/${p.id}`, { token })).body);
    const pedidos = [...pessoas.map((p) => p.id), randomUUID(), c.ana.id, c.carla.id.toUpperCase()];
    const juntos = await Promise.all(pedidos.map((p) => it.api.get(`/colaborador/${p}`, { token })));
    expect(juntos.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 404, 200, 200]);
    expect(juntos.map((r) => r.body).filter((_, i) => i !== 5)).toEqual([...sozinhos, sozinhos[2], sozinhos[1]]);
  });

  test('an unknown id answers 404 problem+json; a malformed id 400', async () => {
    esperarProblema(await it.api.get(`/colaborador/${randomUUID()}`, { token: admin }), 404);
    esperarProblema(await it.api.get(`/colaborador/${encodeURIComponent('a b')}`, { token: admin }), 400);
  });
});

describe('deleted collaborators (SPEC 4.5 rule 3, SPEC §7)', () => {
  test('vanish from list, filter, total and autocomplete; by id they answer 404; their profile is no longer in use', async () => {
    const alvo = await it.identity.criarUsuario({ senha: undefined, nome: `${tag} Removida`, email: `removida@${tagl}.outra.test` });
    await it.sincronizar();
    const local = await it.colaboradorDe(alvo);
    const perfil = await it.criarPerfil({ colaboradores: ['ler'] });
    await it.vincular(local.id, perfil.id);

    expect((await it.identity.api.del(`/usuario/${alvo.id}`, { token: admin })).status).toBe(204);
    const pagina = await it.sincronizar({ nome: `${tag} Removida` });
    expect(pagina.itens).toEqual([]);

    expect(await filtro({ busca: `${tag} Removida` })).toEqual([]);
    expect(await filtro({ perfil_acesso_id: perfil.id })).toEqual([]);
    expect((await it.api.get('/colaborador/total', { token: admin, query: { nome: `${tag} Removida` } })).body).toEqual({ total: 0 });
    const auto = await it.api.get('/colaborador/autocomplete', { token: admin, query: { busca: 'removida@' } });
    expect(auto.body.itens).toEqual([]);
    const problema = esperarProblema(await it.api.get(`/colaborador/${local.id}`, { token: admin }), 404);
    expect(problema.code).toBe('nao_encontrado');
    expect((await it.api.del(`/perfil_acesso/${perfil.id}`, { token: admin })).status).toBe(204);
  });
});
