import { decodeJwt } from 'jose';
import { Usuario } from '../../models/identity';
import { esperarProblema } from '../helpers/http';
import { identityDe } from '../helpers/identity';
import { iniciarSuite, SuiteDeTeste } from '../helpers/suite';
import { CAMPOS_DO_USUARIO, chavesOrdenadas, marca, RFC3339 } from './apoio';

/** Reads of SPEC 4.1 (GET /usuario, /autocomplete, /filtro, /{id}) and the fields of SPEC §2 Usuario. */

const EMAIL_MASTER_DO_AMBIENTE = 'chefe.do.ambiente@suite.local';

let suite: SuiteDeTeste;
let id: ReturnType<typeof identityDe>;
let admin: string;
/** One logged non-master user for the whole file: password hashes are slow on purpose. */
let comum: { usuario: any; token: string };

beforeAll(async () => {
  // no outbox worker: only outbox.test.ts has a hub to publish colaborador events to
  const env = { MASTER_EMAILS: `outra@suite.test, ${EMAIL_MASTER_DO_AMBIENTE.toUpperCase()}` };
  suite = await iniciarSuite(['identity'], { workers: false, env });
  id = identityDe(suite.url.identity);
  admin = await id.admin();
  comum = await id.criarUsuarioLogado();
});
afterAll(() => suite.encerrar());

/** Users without a password: creating them costs no password hash. */
const semSenha = (campos: Record<string, unknown> = {}) => id.criarUsuario({ senha: undefined, ...campos });

describe('GET /usuario (SPEC 4.1 buscar_paginador_usuario)', () => {
  test('without a token answers 401 (SPEC 4.1: master only; DESIGN §4)', async () => {
    esperarProblema(await id.api.get('/usuario'), 401);
  });

  test('refuses a non-master user with 403 (SPEC 4.1: master only)', async () => {
    esperarProblema(await id.api.get('/usuario', { token: comum.token }), 403);
  });

  test('refuses an application token with 403 (SPEC 4.1: master only, a user)', async () => {
    const app = await id.criarAplicativo();
    esperarProblema(await id.api.get('/usuario', { token: app.token }), 403);
  });

  test('checks permission before the query: a non-master with a bad tamanho gets 403 (DESIGN §10 order of checks)', async () => {
    esperarProblema(await id.api.get('/usuario', { token: comum.token, query: { tamanho: 'muitos' } }), 403);
  });

  test('lists the most recent first (SPEC 4.1)', async () => {
    const m = marca();
    const criados = [];
    for (let i = 0; i < 3; i++) criados.push(await semSenha({ nome: `Recente ${i} ${m}` }));
    const res = await id.api.get('/usuario', { token: admin, query: { busca: m } });
    expect(res.status).toBe(200);
    expect(res.body.itens.map((u: any) => u.id)).toEqual(criados.map((u) => u.id).reverse());
    const datas = res.body.itens.map((u: any) => Date.parse(u.criado_em));
    expect([...datas].sort((a, b) => b - a)).toEqual(datas);
  });

  test('items have the full Usuario shape (SPEC §2: identical shape for each item of the page)', async () => {
    const m = marca();
    await semSenha({ nome: `Forma ${m}` });
    const res = await id.api.get('/usuario', { token: admin, query: { busca: m } });
    expect(res.body.itens).toHaveLength(1);
    expect(chavesOrdenadas(res.body.itens[0])).toEqual(CAMPOS_DO_USUARIO);
    expect(chavesOrdenadas(res.body)).toEqual(['itens', 'pagina', 'tamanho', 'total']);
  });

  test('tamanho above 500 answers pages of 500 when more match (SPEC §8: maximum 500)', async () => {
    const m = marca();
    // stored directly: 501 users through the API would take the test's time for nothing it checks
    await Usuario.bulkCreate(Array.from({ length: 501 }, (_, i) => ({ nome: `Teto ${m} ${i}`, email: `teto${i}.${m.toLowerCase()}@exemplo.test`, perfil: 'cliente' })));
    const p1 = await id.api.get('/usuario', { token: admin, query: { busca: m, tamanho: 1000 } });
    expect(p1.body).toMatchObject({ pagina: 1, tamanho: 500, total: 501 });
    expect(p1.body.itens).toHaveLength(500);
    const p2 = await id.api.get('/usuario', { token: admin, query: { busca: m, tamanho: 1000, pagina: 2 } });
    expect(p2.body.itens).toHaveLength(1);
    expect(new Set([...p1.body.itens, ...p2.body.itens].map((u: any) => u.id)).size).toBe(501);
  });

  test('busca matches a substring of the name, ignoring case (SPEC 4.1)', async () => {
    const m = marca();
    const u = await semSenha({ nome: `Mariana ${m.toUpperCase()} Souza` });
    await semSenha({ nome: `Outra Pessoa ${marca()}` });
    const res = await id.api.get('/usuario', { token: admin, query: { busca: `ana ${m.slice(0, 6)}` } });
    expect(res.body.itens.map((x: any) => x.id)).toEqual([u.id]);
    expect(res.body.total).toBe(1);
  });

  test('busca matches a substring of the e-mail, ignoring case (SPEC 4.1)', async () => {
    const m = marca();
    const u = await semSenha({ nome: 'Sem a marca no nome', email: `joana.${m}@empresa.test` });
    const res = await id.api.get('/usuario', { token: admin, query: { busca: `${m.toUpperCase()}@EMPRESA` } });
    expect(res.body.itens.map((x: any) => x.id)).toEqual([u.id]);
  });

  test('busca takes % and _ literally, not as wildcards (SPEC 4.1: substring)', async () => {
    const m = marca();
    const comPorcento = await semSenha({ nome: `Cem % ${m}` });
    await semSenha({ nome: `Cem X ${m}` });
    const porcento = await id.api.get('/usuario', { token: admin, query: { busca: `% ${m}` } });
    expect(porcento.body.itens.map((x: any) => x.id)).toEqual([comPorcento.id]);
    const sublinhado = await id.api.get('/usuario', { token: admin, query: { busca: `Cem _ ${m}` } });
    expect(sublinhado.body.itens).toEqual([]);
  });

  test('perfil limits the list to colaborador or cliente (SPEC 4.1)', async () => {
    const m = marca();
    const colaborador = await semSenha({ nome: `Colab ${m}`, perfil: 'colaborador' });
    const clienteU = await semSenha({ nome: `Cliente ${m}`, perfil: 'cliente' });
    const soClientes = await id.api.get('/usuario', { token: admin, query: { busca: m, perfil: 'cliente' } });
    expect(soClientes.body.itens.map((x: any) => x.id)).toEqual([clienteU.id]);
    expect(soClientes.body.total).toBe(1);
    const soColaboradores = await id.api.get('/usuario', { token: admin, query: { busca: m, perfil: 'colaborador' } });
    expect(soColaboradores.body.itens.map((x: any) => x.id)).toEqual([colaborador.id]);
  });

  test('unknown query parameters are ignored (DESIGN §4)', async () => {
    const m = marca();
    const u = await semSenha({ nome: `Ignora ${m}` });
    const res = await id.api.get('/usuario', { token: admin, query: { busca: m, ordem: 'nome', filtro: 'x' } });
    expect(res.status).toBe(200);
    expect(res.body.itens.map((x: any) => x.id)).toEqual([u.id]);
  });

  test('an unknown perfil answers 400 (SPEC 4.1: colaborador or cliente; DESIGN §4)', async () => {
    esperarProblema(await id.api.get('/usuario', { token: admin, query: { perfil: 'administrador' } }), 400);
  });

  describe('paging (SPEC 4.1, SPEC §8, DESIGN §4 query parsing)', () => {
    const m = marca('pag');
    let ids: string[];
    beforeAll(async () => {
      const criados = [];
      for (let i = 0; i < 12; i++) criados.push(await semSenha({ nome: `Pagina ${String(i).padStart(2, '0')} ${m}` }));
      ids = criados.map((u) => u.id).reverse(); // most recent first
    });
    const listar = (query: Record<string, string | number>) => id.api.get('/usuario', { token: admin, query: { busca: m, ...query } });

    test('tamanho defaults to 10 and pagina to 1; total counts every match', async () => {
      const res = await listar({});
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ pagina: 1, tamanho: 10, total: 12 });
      expect(res.body.itens.map((u: any) => u.id)).toEqual(ids.slice(0, 10));
    });

    test('pagina 2 holds the rest, and total stays the count of matches', async () => {
      const res = await listar({ pagina: 2 });
      expect(res.body).toMatchObject({ pagina: 2, tamanho: 10, total: 12 });
      expect(res.body.itens.map((u: any) => u.id)).toEqual(ids.slice(10));
    });

    test('a page past the end is empty but still reports total', async () => {
      const res = await listar({ pagina: 5, tamanho: 5 });
      expect(res.body).toMatchObject({ itens: [], pagina: 5, tamanho: 5, total: 12 });
    });

    test('tamanho above 500 is clamped to 500 (SPEC §8: maximum 500)', async () => {
      const res = await listar({ tamanho: 1000 });
      expect(res.status).toBe(200);
      expect(res.body.tamanho).toBe(500);
      expect(res.body.itens).toHaveLength(12);
    });

    test.each([0, -7])('tamanho %p becomes 1 (DESIGN §10: below 1 becomes 1)', async (tamanho) => {
      const res = await listar({ tamanho });
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ tamanho: 1, total: 12 });
      expect(res.body.itens.map((u: any) => u.id)).toEqual([ids[0]]);
    });

    test.each([0, -3])('pagina %p becomes 1 (SPEC 4.1: pagina from 1; DESIGN §10)', async (pagina) => {
      const res = await listar({ pagina, tamanho: 3 });
      expect(res.status).toBe(200);
      expect(res.body.pagina).toBe(1);
      expect(res.body.itens.map((u: any) => u.id)).toEqual(ids.slice(0, 3));
    });

    test.each([['tamanho', 'dez'], ['tamanho', '2.5'], ['pagina', 'primeira'], ['pagina', '1.5']])(
      'a non-integer %s (%p) answers 400 naming the field (DESIGN §4)',
      async (campo, valor) => {
        const problema = esperarProblema(await listar({ [campo]: valor }), 400);
        expect(problema.errors).toEqual(expect.arrayContaining([expect.objectContaining({ campo })]));
      },
    );
  });
});

describe('GET /usuario/autocomplete (SPEC 4.1 buscar_auto_complete_usuario)', () => {
  test('is master only: 403 for a non-master user, 401 without token', async () => {
    esperarProblema(await id.api.get('/usuario/autocomplete', { token: comum.token }), 403);
    esperarProblema(await id.api.get('/usuario/autocomplete'), 401);
  });

  test('is alphabetical and carries only id, nome and email (SPEC §2 autocomplete item)', async () => {
    const m = marca();
    const carla = await semSenha({ nome: `Carla ${m}` });
    const ana = await semSenha({ nome: `ana ${m}` });
    const bruno = await semSenha({ nome: `Bruno ${m}` });
    const res = await id.api.get('/usuario/autocomplete', { token: admin, query: { busca: m } });
    expect(res.status).toBe(200);
    expect(res.body.itens).toEqual([ana, bruno, carla].map((u) => ({ id: u.id, nome: u.nome, email: u.email })));
    for (const item of res.body.itens) expect(chavesOrdenadas(item)).toEqual(['email', 'id', 'nome']);
    expect(res.body).toMatchObject({ pagina: 1, tamanho: 10, total: 3 });
  });

  test('busca looks at the e-mail too, and perfil filters (SPEC 4.1)', async () => {
    const m = marca();
    const porEmail = await semSenha({ nome: 'Nome Qualquer', email: `x.${m}@suite.test`, perfil: 'cliente' });
    await semSenha({ nome: `Colaborador ${m}`, perfil: 'colaborador' });
    const res = await id.api.get('/usuario/autocomplete', { token: admin, query: { busca: m.toUpperCase(), perfil: 'cliente' } });
    expect(res.body.itens).toEqual([{ id: porEmail.id, nome: porEmail.nome, email: porEmail.email }]);
    expect(res.body.total).toBe(1);
  });

  test('pages with pagina and tamanho, total counting every match (SPEC 4.1)', async () => {
    const m = marca();
    const nomes = ['Alfa', 'Beta', 'Gama'].map((n) => `${n} ${m}`);
    for (const nome of [...nomes].reverse()) await semSenha({ nome });
    const res = await id.api.get('/usuario/autocomplete', { token: admin, query: { busca: m, tamanho: 2, pagina: 2 } });
    expect(res.body).toMatchObject({ pagina: 2, tamanho: 2, total: 3 });
    expect(res.body.itens.map((u: any) => u.nome)).toEqual([nomes[2]]);
    const primeira = await id.api.get('/usuario/autocomplete', { token: admin, query: { busca: m, tamanho: 0, pagina: -1 } });
    expect(primeira.body).toMatchObject({ pagina: 1, tamanho: 1 });
    expect(primeira.body.itens.map((u: any) => u.nome)).toEqual([nomes[0]]);
    // SPEC §8 gives this route a default and no maximum (the list's is 500)
    const grande = await id.api.get('/usuario/autocomplete', { token: admin, query: { busca: m, tamanho: 600 } });
    expect(grande.body).toMatchObject({ pagina: 1, tamanho: 600, total: 3 });
    expect(grande.body.itens).toHaveLength(3);
  });
});

describe('GET /usuario/filtro (SPEC 4.1 buscar_pelo_filtro_usuario)', () => {
  test('is master only: 403 for a non-master user', async () => {
    esperarProblema(await id.api.get('/usuario/filtro', { token: comum.token }), 403);
  });

  test('returns an array of Usuario in alphabetical order (SPEC 4.1)', async () => {
    const m = marca();
    const zeca = await semSenha({ nome: `Zeca ${m}` });
    const bia = await semSenha({ nome: `bia ${m}` });
    const res = await id.api.get('/usuario/filtro', { token: admin, query: { busca: m } });
    expect(res.status).toBe(200);
    expect(Array.isArray(res.body)).toBe(true);
    expect(res.body.map((u: any) => u.id)).toEqual([bia.id, zeca.id]);
    for (const u of res.body) expect(chavesOrdenadas(u)).toEqual(CAMPOS_DO_USUARIO);
  });

  test('filters by busca (name or e-mail) and perfil (SPEC 4.1)', async () => {
    const m = marca();
    const clientePorEmail = await semSenha({ nome: 'Ana Sem Marca', email: `c.${m}@suite.test`, perfil: 'cliente' });
    const clientePorNome = await semSenha({ nome: `Beto ${m}`, perfil: 'cliente' });
    await semSenha({ nome: `Colaborador ${m}`, perfil: 'colaborador' });
    const res = await id.api.get('/usuario/filtro', { token: admin, query: { busca: m, perfil: 'cliente' } });
    expect(res.body.map((u: any) => u.id)).toEqual([clientePorEmail.id, clientePorNome.id]);
  });

  test('has no pagination: every match comes back, pagina/tamanho are ignored (SPEC 4.1)', async () => {
    const m = marca();
    for (let i = 0; i < 12; i++) await semSenha({ nome: `Filtro ${String(i).padStart(2, '0')} ${m}` });
    const res = await id.api.get('/usuario/filtro', { token: admin, query: { busca: m, tamanho: 2, pagina: 3 } });
    expect(res.status).toBe(200);
    expect(res.body).toHaveLength(12);
  });
});

describe('GET /usuario/{id} (SPEC 4.1 buscar_pelo_id_usuario, SPEC 5.3)', () => {
  test('answers the Usuario of SPEC §2 exactly, with RFC 3339 timestamps (DESIGN §4)', async () => {
    const u = comum.usuario;
    await id.api.patch(`/usuario/${u.id}`, { token: admin, body: { imagem: 'https://img.suite.test/foto.png' } });
    const res = await id.api.get(`/usuario/${u.id}`, { token: admin });
    expect(res.status).toBe(200);
    expect(chavesOrdenadas(res.body)).toEqual(CAMPOS_DO_USUARIO);
    expect(res.body).toMatchObject({
      id: u.id,
      nome: u.nome,
      email: u.email,
      perfil: 'colaborador',
      e_master: false,
      master_pelo_ambiente: false,
      email_verificado: false,
      dois_fatores_ativo: false,
      tem_senha: true,
      bloqueado_ate: null,
      imagem: 'https://img.suite.test/foto.png',
    });
    for (const campo of ['criado_em', 'atualizado_em', 'ultimo_login_em']) expect(res.body[campo]).toMatch(RFC3339);
    expect(typeof res.body.id).toBe('string');
  });

  test('a non-master reads their own record (SPEC 5.3: the id is the sub of the token)', async () => {
    const { usuario, token } = comum;
    const res = await id.api.get(`/usuario/${usuario.id}`, { token });
    expect(res.status).toBe(200);
    expect(res.body.id).toBe(usuario.id);
    expect(decodeJwt(token).sub).toBe(usuario.id);
    // ids are taken in lower case: the same id in capitals is still their own
    expect((await id.api.get(`/usuario/${usuario.id.toUpperCase()}`, { token })).body.id).toBe(usuario.id);
  });

  test("a non-master gets 403 for another user's record (SPEC §7; DESIGN §4)", async () => {
    const outro = await semSenha();
    esperarProblema(await id.api.get(`/usuario/${outro.id}`, { token: comum.token }), 403);
  });

  test('a non-master asking for a malformed id gets 403, not 400: permission is checked before the input (DESIGN §10)', async () => {
    for (const malformado of ['abc.def', 'x'.repeat(65)]) esperarProblema(await id.api.get(`/usuario/${malformado}`, { token: comum.token }), 403);
    esperarProblema(await id.api.get('/usuario/abc.def', { token: admin }), 400);
  });

  test('a master reads anyone (SPEC 4.1)', async () => {
    const outro = await semSenha({ perfil: 'cliente' });
    const res = await id.api.get(`/usuario/${outro.id}`, { token: admin });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: outro.id, perfil: 'cliente' });
  });

  test('an unknown id answers 404 (DESIGN §4)', async () => {
    esperarProblema(await id.api.get('/usuario/0190a3c4-0000-7000-8000-000000000000', { token: admin }), 404);
  });

  test('without a token, or with one that is not a token, 401 (SPEC §5)', async () => {
    const u = await semSenha();
    esperarProblema(await id.api.get(`/usuario/${u.id}`), 401);
    esperarProblema(await id.api.get(`/usuario/${u.id}`, { token: 'nao-e-um-token' }), 401);
  });

  test('reads arriving together (read in one statement) each get their own user; an unknown and a deleted one, 404, alone', async () => {
    const usuarios = await Promise.all(Array.from({ length: 12 }, (_, i) => semSenha({ nome: `Lote ${marca()} ${i}` })));
    const apagado = await semSenha();
    expect((await id.api.del(`/usuario/${apagado.id}`, { token: admin })).status).toBe(204);
    // newest first: not the order the database reads them in (their ids grow with time)
    const ordem = [...usuarios].reverse();
    const pedidos = [...ordem.map((u) => u.id), apagado.id, '0190a3c4-0000-7000-8000-000000000000', usuarios[3].id.toUpperCase()];
    const respostas = await Promise.all(pedidos.map((u) => id.api.get(`/usuario/${u}`, { token: admin })));
    expect(respostas.map((r) => [r.status, r.body.id ?? null, r.body.nome ?? null])).toEqual([
      ...ordem.map((u) => [200, u.id, u.nome]),
      [404, null, null],
      [404, null, null],
      [200, usuarios[3].id, usuarios[3].nome],
    ]);
  });

  test('a deleted user answers 404 (DESIGN §4: deleted records vanish from every read)', async () => {
    const u = await semSenha();
    expect((await id.api.del(`/usuario/${u.id}`, { token: admin })).status).toBe(204);
    esperarProblema(await id.api.get(`/usuario/${u.id}`, { token: admin }), 404);
  });
});

describe('Usuario fields (SPEC §2, DESIGN §3, DESIGN §10)', () => {
  test('tem_senha is false when created without senha, true with one (DESIGN §10)', async () => {
    const sem = await semSenha();
    expect(sem.tem_senha).toBe(false);
    expect((await id.api.get(`/usuario/${sem.id}`, { token: admin })).body.tem_senha).toBe(false);
    expect(comum.usuario.tem_senha).toBe(true);
    expect((await id.api.get(`/usuario/${comum.usuario.id}`, { token: admin })).body.tem_senha).toBe(true);
  });

  test('setor, cargo and funcao come as name and id, in every read (SPEC §2)', async () => {
    const m = marca();
    const criar = async (tipo: string) => (await id.api.post(`/${tipo}`, { token: admin, body: { nome: `${tipo} ${m}` } })).body;
    const [setor, cargo, funcao] = [await criar('setor'), await criar('cargo'), await criar('funcao')];
    const u = await semSenha({ nome: `Lotado ${m}`, setor_id: setor.id, cargo_id: cargo.id, funcao_id: funcao.id });
    const esperado = {
      setor: setor.nome,
      setor_id: setor.id,
      cargo: cargo.nome,
      cargo_id: cargo.id,
      funcao: funcao.nome,
      funcao_id: funcao.id,
    };
    expect(u).toMatchObject(esperado);
    expect((await id.api.get(`/usuario/${u.id}`, { token: admin })).body).toMatchObject(esperado);
    expect((await id.api.get('/usuario', { token: admin, query: { busca: m } })).body.itens[0]).toMatchObject(esperado);
    expect((await id.api.get('/usuario/filtro', { token: admin, query: { busca: m } })).body[0]).toMatchObject(esperado);
  });

  test('without setor, cargo and funcao those fields are null (SPEC §2)', async () => {
    const u = await semSenha();
    expect(u).toMatchObject({ setor: null, setor_id: null, cargo: null, cargo_id: null, funcao: null, funcao_id: null, imagem: null });
  });

  describe('MASTER_EMAILS (DESIGN §3)', () => {
    let chefe: any;
    beforeAll(async () => {
      chefe = await id.criarUsuario({ email: EMAIL_MASTER_DO_AMBIENTE });
    });

    test('an e-mail listed in MASTER_EMAILS makes e_master and master_pelo_ambiente true', async () => {
      expect(chefe).toMatchObject({ e_master: true, master_pelo_ambiente: true });
      const lido = await id.api.get(`/usuario/${chefe.id}`, { token: admin });
      expect(lido.body).toMatchObject({ e_master: true, master_pelo_ambiente: true });
    });

    test('the token of a master by environment has master power (SPEC 5.1)', async () => {
      const token = await id.login(chefe.email, chefe.senha);
      expect(decodeJwt(token).master).toBe(true);
      expect((await id.api.get('/usuario', { token })).status).toBe(200);
    });
  });

  test('a stored master has e_master true and master_pelo_ambiente false, and master power (DESIGN §3)', async () => {
    const u = await id.criarUsuario({ e_master: true });
    expect(u).toMatchObject({ e_master: true, master_pelo_ambiente: false });
    const token = await id.login(u.email, u.senha);
    expect((await id.api.get('/usuario', { token })).status).toBe(200);
  });

  test('an ordinary user has e_master and master_pelo_ambiente false and a token without master power (DESIGN §3)', async () => {
    const { usuario, token } = comum;
    expect(usuario).toMatchObject({ e_master: false, master_pelo_ambiente: false });
    expect(decodeJwt(token).master).toBe(false);
  });
});
