import { acessoIntranet } from '../../api/intranet/acesso';
import { REGISTROS_POR_INSERT } from '../../api/shared/acesso/colaboradores';
import * as leituraDoIdentity from '../../api/shared/leitura-do-identity';
import { nomeDaTrava, novaConexao } from '../../lib/database';
import { Colaborador } from '../../models/intranet';
import { dormir } from '../helpers/espera';
import { esperarProblema } from '../helpers/http';
import { iniciarSuite, SuiteDeTeste } from '../helpers/suite';
import { ACESSO_INICIAL, Intranet, intranetDe, unico } from './apoio';

let suite: SuiteDeTeste;
let it: Intranet;
let admin: string;
/** a non-master with `Acesso inicial`: their reads show what is registered without syncing */
let leitor: string;
beforeAll(async () => {
  suite = await iniciarSuite(['identity', 'intranet']);
  it = intranetDe(suite);
  admin = await it.admin();
  ({ token: leitor } = await it.pessoa());
});
afterAll(() => suite.encerrar());

/** Creates a sector, position or function in identity (DESIGN §10) and returns its id. */
async function cadastro(tipo: 'setor' | 'cargo' | 'funcao', nome: string): Promise<string> {
  const res = await it.identity.api.post(`/${tipo}`, { token: admin, body: { nome } });
  if (res.status !== 201) throw new Error(`create ${tipo}: ${res.status} ${res.text}`);
  return res.body.id;
}

/** A collaborator of identity who needs not log in (no password: no slow hash). */
const usuario = (campos: Record<string, unknown> = {}) => it.identity.criarUsuario({ senha: undefined, ...campos });

async function registrados(tag: string): Promise<any[]> {
  const res = await it.api.get('/colaborador/filtro', { token: leitor, query: { busca: tag } });
  expect(res.status).toBe(200);
  return res.body;
}

describe('the master listing mirrors identity collaborators (SPEC 4.5 rule 2, DESIGN §3 and §10)', () => {
  test('registers identity collaborators that do not exist locally, with the profile `Acesso inicial`, before listing them', async () => {
    const tag = unico('Sinc');
    const a = await usuario({ nome: `${tag} Ana` });
    const b = await usuario({ nome: `${tag} Bruno` });
    expect(await registrados(tag)).toEqual([]);

    // the master's own listing already shows what it registered
    const pagina = await it.sincronizar({ nome: tag });
    const inicial = await it.acessoInicial();
    const esperado = [a, b].map((u) =>
      expect.objectContaining({
        auth_id: u.id,
        nome: u.nome,
        email: u.email,
        ativo: true,
        master: false,
        perfil_acesso_id: inicial.id,
        perfil_acesso: ACESSO_INICIAL,
      }),
    );
    expect(pagina.itens).toEqual(esperado);
    expect(await registrados(tag)).toEqual(esperado);
  });

  test('`Acesso inicial` is read-only: a registered person reads but cannot write', async () => {
    const { token, colaborador } = await it.pessoa();
    expect(colaborador.perfil_acesso).toBe(ACESSO_INICIAL);
    expect((await it.api.get('/colaborador', { token })).status).toBe(200);
    expect((await it.api.get('/perfil_acesso', { token })).status).toBe(200);
    esperarProblema(await it.api.patch(`/colaborador/${colaborador.id}/perfil_acesso`, { token, body: { perfil_acesso_id: null } }), 403);
    esperarProblema(await it.api.post('/perfil_acesso', { token, body: { nome: unico(), permissoes: {} } }), 403);
  });

  test('identity masters are registered without a profile, flagged master', async () => {
    const tag = unico('Master');
    const m = await usuario({ nome: `${tag} Chefe`, e_master: true });
    await it.sincronizar();
    expect(await registrados(tag)).toEqual([
      expect.objectContaining({ auth_id: m.id, master: true, perfil_acesso_id: null, perfil_acesso: null }),
    ]);
  });

  test('`cliente` users of identity are not registered', async () => {
    const tag = unico('Cliente');
    await usuario({ nome: `${tag} Loja`, perfil: 'cliente' });
    // a colaborador made with it shows the sync did run
    const colaborador = await usuario({ nome: `${tag} Vendedora` });
    await it.sincronizar();
    expect((await registrados(tag)).map((c) => c.auth_id)).toEqual([colaborador.id]);
  });

  test('one sync at a time across processes, identity read under the lock: one waiting for another reads identity after it', async () => {
    const tag = unico('Vez');
    const trava = await novaConexao('intranet');
    try {
      const [[{ obtida }]] = (await trava.query('SELECT GET_LOCK(?, 0) AS obtida', [nomeDaTrava('intranet', 'sincronizar-colaboradores')])) as any;
      expect(obtida).toBe(1);
      // a run under way elsewhere holds the lock; this one waits, and reads identity only after it
      const sincronizacao = acessoIntranet.sincronizar(admin);
      let terminou = false;
      void sincronizacao.then(() => (terminou = true), () => (terminou = true));
      await dormir(300);
      expect(terminou).toBe(false);
      const depois = await usuario({ nome: `${tag} Depois` });
      await trava.query('DO RELEASE_LOCK(?)', [nomeDaTrava('intranet', 'sincronizar-colaboradores')]);
      await sincronizacao;
      expect((await registrados(tag)).map((c) => c.auth_id)).toEqual([depois.id]);
    } finally {
      await trava.end();
    }
  });

  test("an answer of identity not shaped as its list of collaborators (a proxy's page, items without ids, one person twice) mirrors nothing: nobody is marked deleted", async () => {
    const tag = unico('Forma');
    const pessoa = await usuario({ nome: `${tag} Fica` });
    await it.sincronizar();
    const repetida = { id: 'a', nome: 'A', email: 'a@b.c', e_master: false };
    for (const resposta of [[{ nome: 'sem id', email: 'x@y.z', e_master: false }], { itens: [] }, [{ ...repetida, e_master: 'false' }], [repetida, repetida]]) {
      const leitura = jest.spyOn(leituraDoIdentity, 'lerDoIdentity').mockResolvedValueOnce(resposta);
      try {
        await expect(acessoIntranet.sincronizar(admin)).rejects.toThrow(/not as expected/);
      } finally {
        leitura.mockRestore();
      }
    }
    expect((await registrados(tag)).map((c) => c.auth_id)).toEqual([pessoa.id]);
  });

  test('a non-master listing does not sync; the next master listing does', async () => {
    const { token } = await it.pessoa();
    const tag = unico('NaoMaster');
    const novo = await usuario({ nome: `${tag} Nova` });
    const res = await it.api.get('/colaborador', { token, query: { nome: tag } });
    expect(res.status).toBe(200);
    expect(res.body.itens).toEqual([]);
    expect((await it.api.get('/colaborador/total', { token, query: { nome: tag } })).body).toEqual({ total: 0 });
    expect((await it.api.get('/colaborador/autocomplete', { token, query: { busca: tag } })).body.itens).toEqual([]);
    expect(await registrados(tag)).toEqual([]);
    await it.sincronizar();
    expect((await registrados(tag)).map((c) => c.auth_id)).toEqual([novo.id]);
  });

  test("a master's first page and total asked together count the same people just added in identity, with one sync (SPEC 4.5 rules 2 and 4)", async () => {
    const tag = unico('Paralelo');
    const novos = [await usuario({ nome: `${tag} A` }), await usuario({ nome: `${tag} B` }), await usuario({ nome: `${tag} C` })];
    // a slow mirror: the second request surely arrives while the first one's sync is under way
    const espelhar = acessoIntranet.colaboradores.espelhar;
    const espelhos = jest.spyOn(acessoIntranet.colaboradores, 'espelhar').mockImplementation(async (...args) => {
      await new Promise((r) => setTimeout(r, 300));
      return espelhar(...args);
    });
    try {
      const [pagina, total] = await Promise.all([
        it.api.get('/colaborador', { token: admin, query: { nome: tag } }),
        it.api.get('/colaborador/total', { token: admin, query: { nome: tag } }),
      ]);
      expect(pagina.body.itens.map((c: any) => c.auth_id)).toEqual(novos.map((u) => u.id));
      expect(total.body).toEqual({ total: 3 });
      // the two requests shared the queue's one job
      expect(espelhos).toHaveBeenCalledTimes(1);
    } finally {
      espelhos.mockRestore();
    }
  });

  test("a master's cursor walk syncs at its first page only: it lists as many as the total asked with that page; one added meanwhile waits for the next walk (SPEC 4.5 rules 1, 2 and 4)", async () => {
    const tag = unico('Caminho');
    for (let i = 1; i <= 51; i++) await usuario({ nome: `${tag} B${String(i).padStart(2, '0')}` });
    const [p1, total] = await Promise.all([
      it.api.get('/colaborador', { token: admin, query: { nome: tag } }),
      it.api.get('/colaborador/total', { token: admin, query: { nome: tag } }),
    ]);
    expect(p1.body.itens).toHaveLength(50);
    expect(total.body).toEqual({ total: 51 });

    // registered in identity between the pages, by a name that sorts before the cursor
    const novo = await usuario({ nome: `${tag} A00` });
    const p2 = await it.api.get('/colaborador', { token: admin, query: { nome: tag, cursor: p1.body.proximo_cursor } });
    expect(p2.body).toMatchObject({ itens: [expect.objectContaining({ nome: `${tag} B51` })], proximo_cursor: null });
    expect(p1.body.itens.length + p2.body.itens.length).toBe(total.body.total);
    expect(await registrados(tag)).toHaveLength(51);

    const [outra, depois] = await Promise.all([
      it.api.get('/colaborador', { token: admin, query: { nome: tag } }),
      it.api.get('/colaborador/total', { token: admin, query: { nome: tag } }),
    ]);
    expect(outra.body.itens[0].auth_id).toBe(novo.id);
    expect(depois.body).toEqual({ total: 52 });
  });

  test("a master's filter registers identity's new collaborators before answering, as the list does (SPEC 4.5 rule 2); the autocomplete, asked at every keystroke, does not sync", async () => {
    const tag = unico('Filtra');
    const ana = await usuario({ nome: `${tag} Ana` });
    const filtro = await it.api.get('/colaborador/filtro', { token: admin, query: { busca: tag } });
    expect(filtro.body.map((c: any) => c.auth_id)).toEqual([ana.id]);
    const bia = await usuario({ nome: `${tag} Bia` });
    const auto = await it.api.get('/colaborador/autocomplete', { token: admin, query: { busca: tag } });
    expect(auto.body.itens.map((c: any) => c.nome)).toEqual([ana.nome]);
    expect((await registrados(tag)).map((c) => c.auth_id)).toEqual([ana.id]);
    // the next list registers her, and the autocomplete finds her from then on
    await it.api.get('/colaborador', { token: admin, query: { nome: tag } });
    const depois = await it.api.get('/colaborador/autocomplete', { token: admin, query: { busca: tag } });
    expect(depois.body.itens.map((c: any) => c.nome)).toEqual([ana.nome, bia.nome]);
  });

  test('updates what changed in identity: name, e-mail, sector, position and function names, master; the local profile stays until the person becomes master', async () => {
    const tag = unico('Muda');
    const [setor1, setor2] = [await cadastro('setor', `${tag} Financeiro`), await cadastro('setor', `${tag} Comercial`)];
    const [cargo1, cargo2] = [await cadastro('cargo', `${tag} Analista`), await cadastro('cargo', `${tag} Gerente`)];
    const [funcao1, funcao2] = [await cadastro('funcao', `${tag} Contas`), await cadastro('funcao', `${tag} Vendas`)];
    const u = await usuario({ nome: `${tag} Antes`, setor_id: setor1, cargo_id: cargo1, funcao_id: funcao1 });
    await it.sincronizar();
    const [antes] = await registrados(tag);
    expect(antes).toMatchObject({ setor: `${tag} Financeiro`, cargo: `${tag} Analista`, funcao: `${tag} Contas`, master: false });
    const perfil = await it.criarPerfil({ colaboradores: ['ler', 'editar'] });
    await it.vincular(antes.id, perfil.id);

    const email = `${tag.toLowerCase()}.depois@suite.test`;
    const patch = await it.identity.api.patch(`/usuario/${u.id}`, {
      token: admin,
      body: { nome: `${tag} Depois`, email, setor_id: setor2, cargo_id: cargo2, funcao_id: funcao2 },
    });
    expect(patch.status).toBe(200);
    await it.sincronizar();
    const depois = (await it.api.get(`/colaborador/${antes.id}`, { token: admin })).body;
    expect(depois).toEqual({
      ...antes,
      nome: `${tag} Depois`,
      email,
      setor: `${tag} Comercial`,
      cargo: `${tag} Gerente`,
      funcao: `${tag} Vendas`,
      perfil_acesso_id: perfil.id,
      perfil_acesso: perfil.nome,
      atualizado_em: expect.any(String),
    });

    await it.identity.api.patch(`/usuario/${u.id}`, { token: admin, body: { setor_id: null, cargo_id: null, funcao_id: null, e_master: true } });
    await it.sincronizar();
    expect((await it.api.get(`/colaborador/${antes.id}`, { token: admin })).body).toMatchObject({
      setor: null,
      cargo: null,
      funcao: null,
      master: true,
      // a master takes no profile (SPEC 4.5 rule 7): the one it had is dropped
      perfil_acesso_id: null,
      perfil_acesso: null,
    });
  });

  test("a sync reports how far it got (its job's progress on the dashboard): identity's people looked at after each one updated, then the counts at the end", async () => {
    const tag = unico('Progresso');
    const [a, b, c] = [await usuario({ nome: `${tag} A` }), await usuario({ nome: `${tag} B` }), await usuario({ nome: `${tag} C` })];
    await it.sincronizar();
    for (const u of [a, c]) expect((await it.identity.api.patch(`/usuario/${u.id}`, { token: admin, body: { nome: `${u.nome} Novo` } })).status).toBe(200);
    expect((await it.identity.api.del(`/usuario/${b.id}`, { token: admin })).status).toBe(204);
    const novo = await usuario({ nome: `${tag} D` });

    const relatorios: unknown[] = [];
    const resultado = await acessoIntranet.sincronizar(admin, (p) => relatorios.push(p));
    expect(resultado).toEqual({ criados: 1, atualizados: 2, removidos: 1 });
    const listados: { id: string }[] = (await it.identity.api.get('/usuario/filtro', { token: admin, query: { perfil: 'colaborador' } })).body;
    const de = listados.length;
    const posicao = (id: string) => listados.findIndex((u) => u.id === id) + 1;
    expect(posicao(novo.id)).toBeGreaterThan(0);
    const [primeiro, segundo] = [posicao(a.id), posicao(c.id)].sort((x, y) => x - y);
    expect(relatorios).toEqual([
      { criados: 0, atualizados: 1, removidos: 0, vistas: primeiro, de },
      { criados: 0, atualizados: 2, removidos: 0, vistas: segundo, de },
      { criados: 1, atualizados: 2, removidos: 1, vistas: de, de },
    ]);
  });

  test('a listing that finds nothing changed in identity leaves the record untouched', async () => {
    const tag = unico('Igual');
    await usuario({ nome: `${tag} Fixa` });
    await it.sincronizar();
    const [antes] = await registrados(tag);
    await new Promise((r) => setTimeout(r, 20));
    await it.sincronizar();
    expect(await registrados(tag)).toEqual([antes]);
  });

  test('many new people at once are registered in slices (one INSERT of tens of thousands passed the packet limit), every one of them', async () => {
    const tag = unico('Lote');
    for (let i = 0; i < 5; i++) await usuario({ nome: `${tag} ${i}` });
    const antes = REGISTROS_POR_INSERT.maximo;
    REGISTROS_POR_INSERT.maximo = 2;
    const insercoes = jest.spyOn(Colaborador, 'bulkCreate');
    try {
      await it.sincronizar();
      const deste = insercoes.mock.calls.map(([linhas]) => (linhas as { nome: string }[]).filter((l) => l.nome.startsWith(tag)).length).filter(Boolean);
      expect(deste.reduce((a, b) => a + b, 0)).toBe(5);
      expect(deste.every((n) => n <= 2)).toBe(true);
    } finally {
      insercoes.mockRestore();
      REGISTROS_POR_INSERT.maximo = antes;
    }
    expect((await registrados(tag)).map((c) => c.nome).sort()).toEqual([0, 1, 2, 3, 4].map((i) => `${tag} ${i}`));
  });

  test('a record made inactive here is active again at the next master listing: identity has no status, and everyone it lists is active (DESIGN §10)', async () => {
    const tag = unico('Ativo');
    await usuario({ nome: `${tag} Volta` });
    await it.sincronizar();
    const [registrado] = await registrados(tag);
    await Colaborador.update({ ativo: false }, { where: { id: registrado.id } });
    expect((await registrados(tag))[0]).toMatchObject({ id: registrado.id, ativo: false });
    await it.sincronizar();
    expect((await registrados(tag))[0]).toMatchObject({ id: registrado.id, ativo: true, perfil_acesso_id: registrado.perfil_acesso_id });
  });

  test('identity users that were removed are marked deleted: gone from list, filter, total and autocomplete, 404 by id (DESIGN §10, SPEC 4.5 rule 3)', async () => {
    const tag = unico('Sai');
    const fica = await usuario({ nome: `${tag} Fica` });
    const sai = await usuario({ nome: `${tag} Sai` });
    const vira = await usuario({ nome: `${tag} Vira cliente` });
    await it.sincronizar();
    const antes = await registrados(tag);
    expect(antes).toHaveLength(3);
    const idDe = (u: { id: string }) => antes.find((c) => c.auth_id === u.id).id;

    expect((await it.identity.api.del(`/usuario/${sai.id}`, { token: admin })).status).toBe(204);
    expect((await it.identity.api.patch(`/usuario/${vira.id}`, { token: admin, body: { perfil: 'cliente' } })).status).toBe(200);
    const lista = await it.sincronizar({ nome: tag });

    expect(lista.itens.map((c: any) => c.auth_id)).toEqual([fica.id]);
    expect((await registrados(tag)).map((c) => c.auth_id)).toEqual([fica.id]);
    expect((await it.api.get('/colaborador/total', { token: admin, query: { nome: tag } })).body).toEqual({ total: 1 });
    const auto = await it.api.get('/colaborador/autocomplete', { token: admin, query: { busca: tag } });
    expect(auto.body.itens.map((c: any) => c.id)).toEqual([idDe(fica)]);
    esperarProblema(await it.api.get(`/colaborador/${idDe(sai)}`, { token: admin }), 404);
    esperarProblema(await it.api.get(`/colaborador/${idDe(vira)}`, { token: admin }), 404);
    esperarProblema(
      await it.api.patch(`/colaborador/${idDe(sai)}/perfil_acesso`, { token: admin, body: { perfil_acesso_id: null } }),
      404,
    );
  });

  test('a removed person loses access at once in the same process (DESIGN §3)', async () => {
    const { usuario: u, token } = await it.pessoa();
    expect((await it.api.get('/colaborador/total', { token })).status).toBe(200);
    expect((await it.identity.api.del(`/usuario/${u.id}`, { token: admin })).status).toBe(204);
    await it.sincronizar();
    esperarProblema(await it.api.get('/colaborador/total', { token }), 403);
  });

  test('a person refused before being registered reads at once after a master listing registers them (DESIGN §3)', async () => {
    const { usuario: u, token } = await it.identity.criarUsuarioLogado();
    esperarProblema(await it.api.get('/colaborador/total', { token }), 403);
    await it.sincronizar();
    expect(await it.colaboradorDe(u)).toMatchObject({ perfil_acesso: ACESSO_INICIAL });
    expect((await it.api.get('/colaborador/total', { token })).status).toBe(200);
  });

  test('a person who comes back after their profile was deleted comes back with `Acesso inicial`, not the deleted profile (SPEC 4.5 rule 6)', async () => {
    const { usuario: u, perfil } = await it.pessoa({ permissoes: { colaboradores: ['ler', 'editar'] } });
    expect((await it.identity.api.patch(`/usuario/${u.id}`, { token: admin, body: { perfil: 'cliente' } })).status).toBe(200);
    await it.sincronizar();
    // nobody present holds the profile any more: it can go
    expect((await it.api.del(`/perfil_acesso/${perfil.id}`, { token: admin })).status).toBe(204);
    expect((await it.identity.api.patch(`/usuario/${u.id}`, { token: admin, body: { perfil: 'colaborador' } })).status).toBe(200);
    await it.sincronizar();
    const volta = await it.colaboradorDe(u);
    expect(volta).toMatchObject({ perfil_acesso: ACESSO_INICIAL });
    expect((await it.api.get(`/colaborador/${volta.id}`, { token: admin })).body).toMatchObject({ perfil_acesso: ACESSO_INICIAL, perfil_acesso_id: volta.perfil_acesso_id });
    expect((await it.api.get('/colaborador/filtro', { token: admin, query: { perfil_acesso_id: perfil.id } })).body).toEqual([]);
  });

  test('a master made an ordinary user in identity gets `Acesso inicial` at the next master listing, as one registered anew (DESIGN §10), and reads with a new token', async () => {
    const tag = unico('Rebaixado');
    const { usuario: u } = await it.identity.criarUsuarioLogado({ nome: `${tag} Ex-chefe`, e_master: true });
    await it.sincronizar();
    expect(await registrados(tag)).toEqual([expect.objectContaining({ master: true, perfil_acesso_id: null })]);

    expect((await it.identity.api.patch(`/usuario/${u.id}`, { token: admin, body: { e_master: false } })).status).toBe(200);
    await it.sincronizar();
    const inicial = await it.acessoInicial();
    const [depois] = await registrados(tag);
    expect(depois).toMatchObject({ master: false, perfil_acesso_id: inicial.id, perfil_acesso: ACESSO_INICIAL });
    expect((await it.api.get(`/colaborador/${depois.id}`, { token: admin })).body).toMatchObject({ perfil_acesso_id: inicial.id });
    // the token issued after the demotion carries no master: the profile is what lets them read
    const token = await it.identity.login(u.email, u.senha);
    expect((await it.api.get('/colaborador/total', { token })).status).toBe(200);
    esperarProblema(await it.api.post('/perfil_acesso', { token, body: { nome: unico(), permissoes: {} } }), 403);
  });

  test('a master removed from identity who comes back as an ordinary user comes back with `Acesso inicial`', async () => {
    const tag = unico('VoltaRebaixado');
    const u = await usuario({ nome: `${tag} Ex-chefe`, e_master: true });
    await it.sincronizar();
    expect((await it.identity.api.patch(`/usuario/${u.id}`, { token: admin, body: { perfil: 'cliente', e_master: false } })).status).toBe(200);
    await it.sincronizar();
    expect(await registrados(tag)).toEqual([]);
    expect((await it.identity.api.patch(`/usuario/${u.id}`, { token: admin, body: { perfil: 'colaborador' } })).status).toBe(200);
    await it.sincronizar();
    expect(await registrados(tag)).toEqual([expect.objectContaining({ master: false, perfil_acesso: ACESSO_INICIAL })]);
  });
});
