import { randomUUID } from 'node:crypto';
import { chamar, esperarProblema } from '../helpers/http';
import { acessoIntranet } from '../../api/intranet/acesso';
import { config } from '../../config';
import { nomeDaTrava, novaConexao } from '../../lib/database';
import { Colaborador } from '../../models/intranet';
import { iniciarSuite, SuiteDeTeste } from '../helpers/suite';
import { ACESSO_INICIAL, Intranet, intranetDe, unico } from './apoio';

let suite: SuiteDeTeste;
let it: Intranet;
beforeAll(async () => {
  suite = await iniciarSuite(['identity', 'intranet']);
  it = intranetDe(suite);
});
afterAll(() => suite.encerrar());

const vinculo = (id: string) => `/colaborador/${id}/perfil_acesso`;

/** one collaborator that the bad-body cases try (and fail) to change */
let alvo: ReturnType<Intranet['pessoa']> | undefined;

/**
 * Runs `vincular` right after a sync has read every local row (its read with `paranoid: false`),
 * before it writes any: the other reads of the model meanwhile (permissions, lookups) pass by.
 */
async function entreALeituraEAEscritaDoEspelho(sincronizar: () => Promise<unknown>, vincular: () => Promise<void>): Promise<boolean> {
  const ler = Colaborador.findAll.bind(Colaborador);
  let vinculado = false;
  const leitura = jest.spyOn(Colaborador, 'findAll').mockImplementation(async (...args) => {
    const linhas = await ler(...args);
    if (!vinculado && args[0]?.paranoid === false) {
      await vincular();
      vinculado = true;
    }
    return linhas;
  });
  try {
    await sincronizar();
  } finally {
    leitura.mockRestore();
  }
  return vinculado;
}

async function lerComoAdmin(id: string) {
  const res = await it.api.get(`/colaborador/${id}`, { token: await it.admin() });
  expect(res.status).toBe(200);
  return res.body;
}

test('the profile link is the only write on collaborators (SPEC §3): creating, replacing, editing or deleting one answers 405, even to a master, and changes nothing', async () => {
  const { colaborador } = await it.pessoa();
  const antes = await lerComoAdmin(colaborador.id);
  const token = await it.admin();
  const corpo = { nome: 'Outro Nome', email: 'outro@exemplo.test' };
  for (const [metodo, caminho, permitidos] of [
    ['POST', '/colaborador', 'GET, HEAD'],
    ['PUT', `/colaborador/${colaborador.id}`, 'GET, HEAD'],
    ['PATCH', `/colaborador/${colaborador.id}`, 'GET, HEAD'],
    ['DELETE', `/colaborador/${colaborador.id}`, 'GET, HEAD'],
    ['PUT', vinculo(colaborador.id), 'PATCH'],
  ] as const) {
    const res = await chamar(suite.url.intranet, metodo, caminho, { token, body: corpo });
    esperarProblema(res, 405);
    expect(res.headers.get('allow')).toBe(permitidos);
  }
  expect(await lerComoAdmin(colaborador.id)).toEqual(antes);
});

describe('PATCH /colaborador/{id}/perfil_acesso (SPEC 4.5 rule 7, DESIGN §3)', () => {
  test('sets a listed profile: the answer, the record by id and the filter carry its id and name', async () => {
    const { colaborador } = await it.pessoa();
    const perfil = await it.criarPerfil({ colaboradores: ['ler', 'editar'] });
    const res = await it.api.patch(vinculo(colaborador.id), { token: await it.admin(), body: { perfil_acesso_id: perfil.id } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ...colaborador, perfil_acesso_id: perfil.id, perfil_acesso: perfil.nome, atualizado_em: expect.any(String) });
    expect(await lerComoAdmin(colaborador.id)).toEqual(res.body);
    const filtro = await it.api.get('/colaborador/filtro', { token: await it.admin(), query: { perfil_acesso_id: perfil.id } });
    expect(filtro.body.map((c: any) => c.id)).toEqual([colaborador.id]);
  });

  test('the profile then defines what the person sees, at once in the same process: granted, the person reads immediately', async () => {
    const { token, colaborador } = await it.pessoa({ permissoes: null });
    esperarProblema(await it.api.get('/colaborador/filtro', { token }), 403);
    const perfil = await it.criarPerfil({ colaboradores: ['ler'] });
    await it.vincular(colaborador.id, perfil.id);
    expect((await it.api.get('/colaborador/filtro', { token })).status).toBe(200);
    expect((await it.api.get(`/colaborador/${colaborador.id}`, { token })).status).toBe(200);
  });

  test('null removes the profile: perfil_acesso_id and perfil_acesso become null and the person loses every area at once', async () => {
    const { token, colaborador } = await it.pessoa();
    expect(colaborador.perfil_acesso).toBe(ACESSO_INICIAL);
    expect((await it.api.get('/colaborador/filtro', { token })).status).toBe(200);
    const res = await it.api.patch(vinculo(colaborador.id), { token: await it.admin(), body: { perfil_acesso_id: null } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: colaborador.id, perfil_acesso_id: null, perfil_acesso: null });
    expect(await lerComoAdmin(colaborador.id)).toMatchObject({ perfil_acesso_id: null, perfil_acesso: null });
    esperarProblema(await it.api.get('/colaborador/filtro', { token }), 403);
    esperarProblema(await it.api.get(`/colaborador/${colaborador.id}`, { token }), 403);
    esperarProblema(await it.api.get('/perfil_acesso', { token }), 403);
  });

  test('switching to a profile without the area takes effect at once too', async () => {
    const { token, colaborador } = await it.pessoa({ permissoes: { colaboradores: ['ler'] } });
    expect((await it.api.get('/colaborador/total', { token })).status).toBe(200);
    const vazio = await it.criarPerfil({});
    await it.vincular(colaborador.id, vazio.id);
    esperarProblema(await it.api.get('/colaborador/total', { token }), 403);
  });

  test("a change made by another process reaches this one's reads once the access cache lapses (SPEC 4.5 rule 7: within 5 minutes; 1 s here)", async () => {
    const { token, colaborador } = await it.pessoa({ permissoes: { colaboradores: ['ler'] } });
    const segundos = config().acesso.cacheSegundos;
    config().acesso.cacheSegundos = 1;
    try {
      expect((await it.api.get('/colaborador/total', { token })).status).toBe(200);
      // another process's change: written to the database, this process's cache not told
      await Colaborador.update({ perfil_acesso_id: null }, { where: { id: colaborador.id } });
      expect((await it.api.get('/colaborador/total', { token })).status).toBe(200);
      await new Promise((r) => setTimeout(r, 1100));
      esperarProblema(await it.api.get('/colaborador/total', { token }), 403);
    } finally {
      config().acesso.cacheSegundos = segundos;
    }
  });

  test('a collaborator who is an identity master does not accept a profile: 409, and nothing changes (SPEC §7, DESIGN §4)', async () => {
    const usuario = await it.identity.criarUsuario({ e_master: true });
    await it.sincronizar();
    const master = await it.colaboradorDe(usuario);
    expect(master).toMatchObject({ master: true, perfil_acesso_id: null });
    const perfil = await it.criarPerfil({ colaboradores: ['ler'] });
    const res = await it.api.patch(vinculo(master.id), { token: await it.admin(), body: { perfil_acesso_id: perfil.id } });
    const problema = esperarProblema(res, 409);
    expect(problema.detail).toMatch(/master/i);
    expect(await lerComoAdmin(master.id)).toEqual(master);
  });

  test('an editor, who may not ask identity about someone else, is refused by the local record of a master: 409, nothing changes', async () => {
    const usuario = await it.identity.criarUsuario({ e_master: true });
    await it.sincronizar();
    const master = await it.colaboradorDe(usuario);
    const { token } = await it.pessoa({ permissoes: { colaboradores: ['ler', 'editar'] } });
    const perfil = await it.criarPerfil({ colaboradores: ['ler'] });
    const problema = esperarProblema(await it.api.patch(vinculo(master.id), { token, body: { perfil_acesso_id: perfil.id } }), 409);
    expect(problema.detail).toMatch(/master/i);
    expect(await lerComoAdmin(master.id)).toEqual(master);
  });

  test("a master listing that marks the person master after identity was asked (and said no) still refuses: the flag changed since the question, either saying master is enough", async () => {
    const { colaborador } = await it.pessoa();
    const perfil = await it.criarPerfil({ colaboradores: ['ler'] });
    const masterNoIdentity = async () => {
      // the listing's write, committed between the question and the row's lock
      await Colaborador.update({ master: true }, { where: { id: colaborador.id } });
      return false;
    };
    await expect(acessoIntranet.colaboradores.vincularPerfil(colaborador.id, perfil.id, async () => 'todas', masterNoIdentity)).rejects.toThrow(/master/);
    expect(await Colaborador.findByPk(colaborador.id)).toMatchObject({ master: true, perfil_acesso_id: colaborador.perfil_acesso_id });
  });

  test('a master made an ordinary user in identity since the last master listing takes a profile at once: identity, asked, is fresher than the local record', async () => {
    const admin = await it.admin();
    const usuario = await it.identity.criarUsuario({ e_master: true });
    await it.sincronizar();
    const master = await it.colaboradorDe(usuario);
    expect(master).toMatchObject({ master: true });
    expect((await it.identity.api.patch(`/usuario/${usuario.id}`, { token: admin, body: { e_master: false } })).status).toBe(200);
    const perfil = await it.criarPerfil({ colaboradores: ['ler'] });
    const res = await it.api.patch(vinculo(master.id), { token: admin, body: { perfil_acesso_id: perfil.id } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: master.id, master: false, perfil_acesso_id: perfil.id, perfil_acesso: perfil.nome });
    // the next master listing keeps the profile given (a demoted master would get `Acesso inicial`)
    await it.sincronizar();
    expect(await lerComoAdmin(master.id)).toMatchObject({ master: false, perfil_acesso_id: perfil.id, perfil_acesso: perfil.nome });
  });

  test('a collaborator made master in identity since the last master listing does not accept a profile either: identity is asked, 409, nothing changes (SPEC 4.5 rule 7, SPEC §7)', async () => {
    const admin = await it.admin();
    const { usuario, colaborador } = await it.pessoa();
    expect((await it.identity.api.patch(`/usuario/${usuario.id}`, { token: admin, body: { e_master: true } })).status).toBe(200);
    const perfil = await it.criarPerfil({ colaboradores: ['ler'] });
    const problema = esperarProblema(await it.api.patch(vinculo(colaborador.id), { token: admin, body: { perfil_acesso_id: perfil.id } }), 409);
    expect(problema.detail).toMatch(/master/i);
    // the local record still says otherwise: no master listing has run since
    expect(await lerComoAdmin(colaborador.id)).toEqual(colaborador);
    // taking a profile away is no grant: a master may be left with none
    const sem = await it.api.patch(vinculo(colaborador.id), { token: admin, body: { perfil_acesso_id: null } });
    expect(sem.status).toBe(200);
    expect(sem.body).toMatchObject({ master: false, perfil_acesso_id: null });
  });

  test("identity out of reach when asked whether the person is master: 503, as for the caller's own confirmation, and nothing changes", async () => {
    const admin = await it.admin();
    const { usuario, colaborador } = await it.pessoa();
    const perfil = await it.criarPerfil({ colaboradores: ['ler'] });
    // identity answers the caller's confirmation, and fails only the read of this person
    const buscar = globalThis.fetch;
    const pedidos = jest.spyOn(globalThis, 'fetch').mockImplementation((url, init) =>
      String(url).endsWith(`/usuario/${usuario.id}`) ? Promise.reject(new TypeError('fetch failed')) : buscar(url, init),
    );
    try {
      // a profile that does not exist is refused first (422), whatever identity would say (DESIGN §10's order)
      const inexistente = await it.api.patch(vinculo(colaborador.id), { token: admin, body: { perfil_acesso_id: '019a0000-0000-7000-8000-000000000000' } });
      esperarProblema(inexistente, 422);
      const res = await it.api.patch(vinculo(colaborador.id), { token: admin, body: { perfil_acesso_id: perfil.id } });
      esperarProblema(res, 503);
      expect(pedidos.mock.calls.some(([url]) => String(url).endsWith(`/usuario/${usuario.id}`))).toBe(true);
    } finally {
      pedidos.mockRestore();
    }
    expect(await lerComoAdmin(colaborador.id)).toEqual(colaborador);
  });

  test('a profile linked while a sync makes the person master is taken away by that sync (SPEC 4.5 rule 7)', async () => {
    const admin = await it.admin();
    const { usuario, colaborador } = await it.pessoa({ permissoes: null });
    expect(colaborador.perfil_acesso_id).toBeNull();
    const perfil = await it.criarPerfil({ colaboradores: ['ler'] });
    expect((await it.identity.api.patch(`/usuario/${usuario.id}`, { token: admin, body: { e_master: true } })).status).toBe(200);
    // the link lands after the sync read its rows (the person not yet master there) and before it
    // writes; the link's own question to identity was answered before the person became master
    // there, so it is made here past that question, with what a master may grant
    const vinculado = await entreALeituraEAEscritaDoEspelho(
      () => acessoIntranet.sincronizar(admin),
      async () => {
        expect(await acessoIntranet.colaboradores.vincularPerfil(colaborador.id, perfil.id, async () => 'todas')).toMatchObject({ perfil_acesso_id: perfil.id });
      },
    );
    // the link was made between the sync's read and its write (or the race was not set up at all)
    expect(vinculado).toBe(true);
    expect(await lerComoAdmin(colaborador.id)).toMatchObject({ master: true, perfil_acesso_id: null });
  });

  test('a profile linked during a sync to a master demoted before it stays: the sync judges by the row, not by what it read at its start', async () => {
    const admin = await it.admin();
    const usuario = await it.identity.criarUsuario({ e_master: true });
    await it.sincronizar();
    const master = await it.colaboradorDe(usuario);
    expect(master).toMatchObject({ master: true, perfil_acesso_id: null });
    expect((await it.identity.api.patch(`/usuario/${usuario.id}`, { token: admin, body: { e_master: false } })).status).toBe(200);
    const perfil = await it.criarPerfil({ colaboradores: ['ler'] });
    // the link lands after the sync read its rows (the person still master in its copy) and before
    // it writes; identity, asked by the link, says the person is master no more
    const vinculado = await entreALeituraEAEscritaDoEspelho(
      () => acessoIntranet.sincronizar(admin),
      async () => {
        expect(await acessoIntranet.colaboradores.vincularPerfil(master.id, perfil.id, async () => 'todas', async () => false)).toMatchObject({
          master: false,
          perfil_acesso_id: perfil.id,
        });
      },
    );
    expect(vinculado).toBe(true);
    expect(await lerComoAdmin(master.id)).toMatchObject({ master: false, perfil_acesso_id: perfil.id, perfil_acesso: perfil.nome });
  });

  test('a profile id that names no profile answers 422 and nothing changes (DESIGN §4)', async () => {
    const { colaborador } = await it.pessoa();
    const res = await it.api.patch(vinculo(colaborador.id), { token: await it.admin(), body: { perfil_acesso_id: randomUUID() } });
    const problema = esperarProblema(res, 422);
    expect(problema.errors).toEqual([expect.objectContaining({ campo: 'perfil_acesso_id' })]);
    expect(await lerComoAdmin(colaborador.id)).toEqual(colaborador);
  });

  test('a deleted profile is no longer listed, so it cannot be linked: 422', async () => {
    const { colaborador } = await it.pessoa();
    const perfil = await it.criarPerfil({ colaboradores: ['ler'] });
    expect((await it.api.del(`/perfil_acesso/${perfil.id}`, { token: await it.admin() })).status).toBe(204);
    const res = await it.api.patch(vinculo(colaborador.id), { token: await it.admin(), body: { perfil_acesso_id: perfil.id } });
    esperarProblema(res, 422);
    expect(await lerComoAdmin(colaborador.id)).toEqual(colaborador);
  });

  test('an unknown collaborator answers 404', async () => {
    const perfil = await it.criarPerfil({ colaboradores: ['ler'] });
    esperarProblema(await it.api.patch(vinculo(randomUUID()), { token: await it.admin(), body: { perfil_acesso_id: perfil.id } }), 404);
    esperarProblema(await it.api.patch(vinculo(randomUUID()), { token: await it.admin(), body: { perfil_acesso_id: null } }), 404);
  });

  test.each([
    ['a number', { body: { perfil_acesso_id: 42 } }],
    ['a malformed id', { body: { perfil_acesso_id: 'não é um id' } }],
    ['an unknown field', { body: { perfil: 'x' } }],
    ['an array', { body: [] }],
    ['no body', {}],
    ['malformed JSON', { raw: '{"perfil_acesso_id": ' }],
  ])('a bad body (%s) answers 400 problem+json and changes nothing', async (_caso, opcoes) => {
    const { colaborador } = await (alvo ??= it.pessoa());
    const res = await it.api.patch(vinculo(colaborador.id), { token: await it.admin(), ...opcoes });
    const problema = esperarProblema(res, 400);
    expect(problema.detail.length).toBeGreaterThan(0);
    expect(await lerComoAdmin(colaborador.id)).toEqual(colaborador);
  });

  test('a body without perfil_acesso_id (optional, SPEC §2) answers 200 and changes nothing: absent is not null', async () => {
    const perfil = await it.criarPerfil({ colaboradores: ['ler'] });
    const { colaborador } = await it.pessoa();
    expect((await it.api.patch(vinculo(colaborador.id), { token: await it.admin(), body: { perfil_acesso_id: perfil.id } })).status).toBe(200);
    const antes = await lerComoAdmin(colaborador.id);
    expect(antes.perfil_acesso_id).toBe(perfil.id);
    const res = await it.api.patch(vinculo(colaborador.id), { token: await it.admin(), body: {} });
    expect(res.status).toBe(200);
    expect(res.body.perfil_acesso_id).toBe(perfil.id);
    expect(await lerComoAdmin(colaborador.id)).toEqual(antes);
  });

  test('a bad id in the path answers 400', async () => {
    const res = await it.api.patch(vinculo(`${unico()}$`), { token: await it.admin(), body: { perfil_acesso_id: null } });
    esperarProblema(res, 400);
  });

  test('needs editar in colaboradores: with only ler the answer is 403 and nothing changes', async () => {
    const leitor = await it.pessoa({ permissoes: { colaboradores: ['ler'] } });
    const { colaborador } = await it.pessoa();
    const res = await it.api.patch(vinculo(colaborador.id), { token: leitor.token, body: { perfil_acesso_id: null } });
    esperarProblema(res, 403);
    expect(await lerComoAdmin(colaborador.id)).toEqual(colaborador);

    const editor = await it.pessoa({ permissoes: { colaboradores: ['editar'] } });
    const feito = await it.api.patch(vinculo(colaborador.id), { token: editor.token, body: { perfil_acesso_id: null } });
    expect(feito.status).toBe(200);
    expect(feito.body.perfil_acesso_id).toBeNull();
  });
});

test('a collaborator sync waiting for another run ends the wait at shutdown and mirrors nothing; a later run mirrors', async () => {
  const admin = await it.admin();
  const tag = unico('Encerramento');
  const nova = await it.identity.criarUsuario({ senha: undefined, nome: `${tag} Nova` });
  const outra = await novaConexao('intranet');
  try {
    // another process's run under way
    await outra.query('SELECT GET_LOCK(?, 0)', [nomeDaTrava('intranet', 'sincronizar-colaboradores')]);
    const parada = new AbortController();
    const inicio = Date.now();
    setTimeout(() => parada.abort(), 300);
    expect(await acessoIntranet.sincronizar(admin, undefined, parada.signal)).toBeNull();
    expect(Date.now() - inicio).toBeLessThan(5_000);
    expect(await Colaborador.findOne({ where: { auth_id: nova.id } })).toBeNull();
  } finally {
    await outra.end();
  }
  await acessoIntranet.sincronizar(admin);
  expect(await Colaborador.findOne({ where: { auth_id: nova.id } })).not.toBeNull();
});
