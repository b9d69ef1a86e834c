import { randomUUID } from 'node:crypto';
import { banco } from '../../lib/database';
import { Colaborador } from '../../models/intranet';
import { comMudancaEmCurso } from '../helpers/espera';
import { chamar as http, esperarProblema } from '../helpers/http';
import { iniciarSuite, SuiteDeTeste } from '../helpers/suite';
import { Intranet, intranetDe, unico } from './apoio';

let suite: SuiteDeTeste;
let it: Intranet;
beforeAll(async () => {
  suite = await iniciarSuite(['identity', 'intranet']);
  it = intranetDe(suite);
});
afterAll(() => suite.encerrar());

const INEXISTENTE = randomUUID();

/** One call of each route, with input that is bad or points at nothing, to see which check answers first. */
const chamadasRuins = (): [string, string, Record<string, unknown>][] => [
  ['GET', '/colaborador', { query: { ativo: 'talvez' } }],
  ['GET', '/colaborador/autocomplete', { query: { tamanho: 'dez' } }],
  ['GET', '/colaborador/filtro', { query: { ativo: 'talvez' } }],
  ['GET', '/colaborador/total', { query: { ativo: 'talvez' } }],
  ['GET', `/colaborador/${INEXISTENTE}`, {}],
  ['PATCH', `/colaborador/${INEXISTENTE}/perfil_acesso`, { body: { perfil_acesso_id: 42 } }],
  ['GET', '/perfil_acesso', { query: { pagina: 'um' } }],
  ['GET', `/perfil_acesso/${INEXISTENTE}`, {}],
  ['POST', '/perfil_acesso', { body: { nome: '' } }],
  ['PATCH', `/perfil_acesso/${INEXISTENTE}`, { body: { permissoes: { vendas: ['ler'] } } }],
  ['DELETE', `/perfil_acesso/${INEXISTENTE}`, {}],
];

function chamar(metodo: string, caminho: string, opcoes: Record<string, unknown>, token?: string) {
  return http(suite.url.intranet, metodo, caminho, { ...opcoes, token });
}

describe('order of checks and who is let in (SPEC 5, DESIGN §3 and §10)', () => {
  test('without a token every route answers 401, before permission, input or existence (DESIGN §10)', async () => {
    for (const [metodo, caminho, opcoes] of chamadasRuins()) {
      const res = await chamar(metodo, caminho, opcoes);
      esperarProblema(res, 401);
    }
  });

  test('a token that is not a valid identity token, or is not sent as Bearer, answers 401 (DESIGN §3)', async () => {
    esperarProblema(await it.api.get('/colaborador/filtro', { token: 'abc.def.ghi' }), 401);
    const valido = await it.admin();
    const adulterado = valido.slice(0, -4) + (valido.endsWith('AAAA') ? 'BBBB' : 'AAAA');
    esperarProblema(await it.api.get('/colaborador/filtro', { token: adulterado }), 401);
    esperarProblema(await it.api.get('/colaborador/filtro', { headers: { authorization: `Basic ${valido}` } }), 401);
  });

  test('a user with no collaborator record in the intranet is refused with 403 on every route, before input or existence (SPEC §7, DESIGN §3)', async () => {
    // created in identity after the last master listing: the intranet has no record of this person
    const { token } = await it.identity.criarUsuarioLogado();
    for (const [metodo, caminho, opcoes] of chamadasRuins()) {
      esperarProblema(await chamar(metodo, caminho, opcoes, token), 403);
    }
    esperarProblema(await it.api.get('/colaborador', { token }), 403);
  });

  test('a collaborator whose profile was removed is refused with 403 on every route (SPEC 4.5 rule 7, DESIGN §3)', async () => {
    const { token } = await it.pessoa({ permissoes: null });
    for (const [metodo, caminho, opcoes] of chamadasRuins()) {
      esperarProblema(await chamar(metodo, caminho, opcoes, token), 403);
    }
  });

  test('a profile with no action in area colaboradores grants nothing: 403 (SPEC 5.2)', async () => {
    const { token } = await it.pessoa({ permissoes: {} });
    esperarProblema(await it.api.get('/colaborador/filtro', { token }), 403);
    esperarProblema(await it.api.get('/perfil_acesso', { token }), 403);
  });

  test('an application token is refused with 403: these routes are for logged users (DESIGN §3)', async () => {
    const app = await it.identity.criarAplicativo();
    esperarProblema(await it.api.get('/colaborador', { token: app.token }), 403);
    esperarProblema(await it.api.get('/colaborador/filtro', { token: app.token }), 403);
    esperarProblema(await it.api.get('/perfil_acesso', { token: app.token }), 403);
    esperarProblema(await it.api.post('/perfil_acesso', { token: app.token, body: { nome: unico(), permissoes: {} } }), 403);
  });

  test('an identity master has every permission without any profile or local record (SPEC 5.1)', async () => {
    const { usuario, token } = await it.identity.criarUsuarioLogado({ e_master: true });
    expect(usuario.e_master).toBe(true);
    // no master listing yet: the master is not registered, and needs not be (the routes' permission
    // is checked before a master's read syncs, which registers them)
    expect(await Colaborador.findOne({ where: { auth_id: usuario.id } })).toBeNull();
    expect((await it.api.get('/colaborador/filtro', { token })).status).toBe(200);
    expect((await it.api.get('/colaborador/total', { token })).status).toBe(200);
    expect((await it.api.get('/perfil_acesso', { token })).status).toBe(200);
    const nome = unico('Perfil do master ');
    const criado = await it.api.post('/perfil_acesso', { token, body: { nome, permissoes: { colaboradores: ['ler'] } } });
    expect(criado.status).toBe(201);
    const editado = await it.api.patch(`/perfil_acesso/${criado.body.id}`, { token, body: { descricao: 'editado' } });
    expect(editado.status).toBe(200);
    const outro = await it.pessoa();
    const vinculado = await it.api.patch(`/colaborador/${outro.colaborador.id}/perfil_acesso`, {
      token,
      body: { perfil_acesso_id: criado.body.id },
    });
    expect(vinculado.status).toBe(200);
    await it.vincular(outro.colaborador.id, null);
    expect((await it.api.del(`/perfil_acesso/${criado.body.id}`, { token })).status).toBe(204);
  });

  test.each(['ler', 'criar', 'editar', 'deletar'])(
    'any action in area colaboradores grants read: a profile with only %s reads every read route (SPEC 4.5 access, SPEC 5.2)',
    async (acao) => {
      const { token, colaborador, perfil } = await it.pessoa({ permissoes: { colaboradores: [acao] } });
      for (const caminho of [
        '/colaborador',
        '/colaborador/autocomplete',
        '/colaborador/filtro',
        '/colaborador/total',
        `/colaborador/${colaborador.id}`,
        '/perfil_acesso',
        '/perfil_acesso/filtro',
        `/perfil_acesso/${perfil.id}`,
      ]) {
        const res = await it.api.get(caminho, { token });
        expect({ caminho, status: res.status }).toEqual({ caminho, status: 200 });
      }
    },
  );

  test('read does not grant writes: with only ler, every write answers 403 and changes nothing (SPEC 4.5 access)', async () => {
    const { token, colaborador, perfil } = await it.pessoa({ permissoes: { colaboradores: ['ler'] } });
    const nome = unico('Não criado ');
    esperarProblema(await it.api.post('/perfil_acesso', { token, body: { nome, permissoes: {} } }), 403);
    esperarProblema(await it.api.patch(`/perfil_acesso/${perfil.id}`, { token, body: { nome: `${nome} 2` } }), 403);
    esperarProblema(await it.api.del(`/perfil_acesso/${perfil.id}`, { token }), 403);
    esperarProblema(await it.api.patch(`/colaborador/${colaborador.id}/perfil_acesso`, { token, body: { perfil_acesso_id: null } }), 403);

    const admin = await it.admin();
    expect((await it.api.get('/perfil_acesso/filtro', { token: admin, query: { nome } })).body).toEqual([]);
    expect((await it.api.get(`/perfil_acesso/${perfil.id}`, { token: admin })).body).toEqual(perfil);
    expect((await it.api.get(`/colaborador/${colaborador.id}`, { token: admin })).body.perfil_acesso_id).toBe(perfil.id);
  });

  test('each write needs its own action in colaboradores: criar creates, editar edits and links, deletar deletes (DESIGN §3)', async () => {
    const criador = await it.pessoa({ permissoes: { colaboradores: ['criar'] } });
    const editor = await it.pessoa({ permissoes: { colaboradores: ['editar'] } });
    const removedor = await it.pessoa({ permissoes: { colaboradores: ['deletar'] } });
    const alvo = await it.pessoa();

    const body = { nome: unico('Perfil '), permissoes: { colaboradores: ['ler'] } };
    esperarProblema(await it.api.post('/perfil_acesso', { token: editor.token, body }), 403);
    esperarProblema(await it.api.post('/perfil_acesso', { token: removedor.token, body }), 403);
    const criado = await it.api.post('/perfil_acesso', { token: criador.token, body });
    expect(criado.status).toBe(201);

    const caminho = `/perfil_acesso/${criado.body.id}`;
    esperarProblema(await it.api.patch(caminho, { token: criador.token, body: { descricao: 'x' } }), 403);
    expect((await it.api.patch(caminho, { token: editor.token, body: { descricao: 'x' } })).status).toBe(200);

    const vinculo = `/colaborador/${alvo.colaborador.id}/perfil_acesso`;
    esperarProblema(await it.api.patch(vinculo, { token: criador.token, body: { perfil_acesso_id: criado.body.id } }), 403);
    esperarProblema(await it.api.patch(vinculo, { token: removedor.token, body: { perfil_acesso_id: criado.body.id } }), 403);
    expect((await it.api.patch(vinculo, { token: editor.token, body: { perfil_acesso_id: criado.body.id } })).status).toBe(200);
    expect((await it.api.patch(vinculo, { token: editor.token, body: { perfil_acesso_id: null } })).status).toBe(200);

    esperarProblema(await it.api.del(caminho, { token: criador.token }), 403);
    esperarProblema(await it.api.del(caminho, { token: editor.token }), 403);
    expect((await it.api.del(caminho, { token: removedor.token })).status).toBe(204);
  });

  test('with the permission, bad input answers 400 before existence is checked (DESIGN §10)', async () => {
    const { token } = await it.pessoa({ permissoes: { colaboradores: ['ler', 'criar', 'editar', 'deletar'] } });
    for (const [metodo, caminho, opcoes] of chamadasRuins()) {
      if (metodo === 'GET' && caminho.includes(INEXISTENTE)) continue; // no input to get wrong
      if (metodo === 'DELETE') continue;
      const res = await chamar(metodo, caminho, opcoes, token);
      const problema = esperarProblema(res, 400);
      expect(problema.errors?.length).toBeGreaterThan(0);
    }
  });

  test('then existence: an unknown id in the path answers 404, even when the body names an unknown profile (DESIGN §10)', async () => {
    const { token } = await it.pessoa({ permissoes: { colaboradores: ['ler', 'editar', 'deletar'] } });
    esperarProblema(await it.api.get(`/colaborador/${INEXISTENTE}`, { token }), 404);
    esperarProblema(await it.api.get(`/perfil_acesso/${INEXISTENTE}`, { token }), 404);
    esperarProblema(await it.api.del(`/perfil_acesso/${INEXISTENTE}`, { token }), 404);
    esperarProblema(
      await it.api.patch(`/colaborador/${INEXISTENTE}/perfil_acesso`, { token, body: { perfil_acesso_id: randomUUID() } }),
      404,
    );
  });
});

describe('a person identity no longer counts as a collaborator (SPEC §3 Collaborator, DESIGN §3)', () => {
  test('made a cliente in identity, their next token has no right in the intranet, even before a master listing removes their record', async () => {
    const admin = await it.admin();
    const { usuario, token } = await it.pessoa({ permissoes: { colaboradores: ['ler', 'criar', 'editar', 'deletar'] } });
    expect((await it.api.get('/colaborador/total', { token })).status).toBe(200);
    expect((await it.identity.api.patch(`/usuario/${usuario.id}`, { token: admin, body: { perfil: 'cliente' } })).status).toBe(200);
    const comoCliente = await it.identity.login(usuario.email, usuario.senha);
    esperarProblema(await it.api.get('/colaborador/total', { token: comoCliente }), 403);
    const nome = unico('Feito por cliente ');
    esperarProblema(await it.api.post('/perfil_acesso', { token: comoCliente, body: { nome, permissoes: { colaboradores: ['ler'] } } }), 403);
    expect((await it.api.get('/perfil_acesso/filtro', { token: admin, query: { nome } })).body).toEqual([]);
  });
});

describe('who administers access grants no more than they hold (SPEC 5.2)', () => {
  test('an editor cannot widen a profile past their own permissions, their own profile included: 403 and nothing changes', async () => {
    const editor = await it.pessoa({ permissoes: { colaboradores: ['ler', 'editar'] } });
    const proprio = `/perfil_acesso/${editor.perfil.id}`;
    esperarProblema(await it.api.patch(proprio, { token: editor.token, body: { permissoes: { colaboradores: ['ler', 'editar', 'deletar'] } } }), 403);
    esperarProblema(await it.api.patch(proprio, { token: editor.token, body: { permissoes: { colaboradores: ['ler', 'criar', 'editar'] } } }), 403);
    expect((await it.api.get(proprio, { token: await it.admin() })).body).toEqual(editor.perfil);
    // within what they hold, editing goes on as before
    const res = await it.api.patch(proprio, { token: editor.token, body: { descricao: 'só leitura e edição' } });
    expect(res.status).toBe(200);
    expect(res.body.permissoes).toEqual({ colaboradores: ['ler', 'editar'] });
  });

  test('a creator cannot create a profile with permissions they do not hold; any action of theirs includes reading its area', async () => {
    const criador = await it.pessoa({ permissoes: { colaboradores: ['criar'] } });
    const nome = unico('Mais forte ');
    esperarProblema(await it.api.post('/perfil_acesso', { token: criador.token, body: { nome, permissoes: { colaboradores: ['criar', 'deletar'] } } }), 403);
    expect((await it.api.get('/perfil_acesso/filtro', { token: await it.admin(), query: { nome } })).body).toEqual([]);
    const leitura = await it.api.post('/perfil_acesso', { token: criador.token, body: { nome: unico('Leitura '), permissoes: { colaboradores: ['ler', 'criar'] } } });
    expect(leitura.status).toBe(201);
  });

  test('an editor cannot link anyone, themselves included, to a stronger profile, nor take a stronger profile away: 403', async () => {
    const editor = await it.pessoa({ permissoes: { colaboradores: ['ler', 'editar'] } });
    const forte = await it.criarPerfil({ colaboradores: ['ler', 'editar', 'deletar'] });
    const chefe = await it.pessoa({ permissoes: { colaboradores: ['ler', 'criar', 'editar', 'deletar'] } });
    esperarProblema(await it.api.patch(`/colaborador/${editor.colaborador.id}/perfil_acesso`, { token: editor.token, body: { perfil_acesso_id: forte.id } }), 403);
    esperarProblema(await it.api.patch(`/colaborador/${chefe.colaborador.id}/perfil_acesso`, { token: editor.token, body: { perfil_acesso_id: null } }), 403);
    esperarProblema(
      await it.api.patch(`/colaborador/${chefe.colaborador.id}/perfil_acesso`, { token: editor.token, body: { perfil_acesso_id: editor.perfil.id } }),
      403,
    );
    const admin = await it.admin();
    expect((await it.api.get(`/colaborador/${editor.colaborador.id}`, { token: admin })).body.perfil_acesso_id).toBe(editor.perfil.id);
    expect((await it.api.get(`/colaborador/${chefe.colaborador.id}`, { token: admin })).body.perfil_acesso_id).toBe(chefe.perfil.id);
  });

  test("a master demoted in identity grants nothing with the token issued before: the token's word is confirmed by identity", async () => {
    const { usuario, token } = await it.identity.criarUsuarioLogado({ e_master: true });
    const outro = await it.pessoa({ permissoes: { colaboradores: ['ler'] } });
    const rebaixado = await it.identity.api.patch(`/usuario/${usuario.id}`, { token: await it.admin(), body: { e_master: false } });
    expect(rebaixado.status).toBe(200);
    // the token still says master, and reads as one until it expires (DESIGN §3)
    expect((await it.api.get('/perfil_acesso', { token })).status).toBe(200);
    const nome = unico('Tudo ');
    const todas = { colaboradores: ['ler', 'criar', 'editar', 'deletar'] };
    esperarProblema(await it.api.post('/perfil_acesso', { token, body: { nome, permissoes: todas } }), 403);
    esperarProblema(await it.api.patch(`/perfil_acesso/${outro.perfil.id}`, { token, body: { permissoes: todas } }), 403);
    esperarProblema(await it.api.del(`/perfil_acesso/${outro.perfil.id}`, { token }), 403);
    esperarProblema(await it.api.patch(`/colaborador/${outro.colaborador.id}/perfil_acesso`, { token, body: { perfil_acesso_id: null } }), 403);
    const admin = await it.admin();
    expect((await it.api.get('/perfil_acesso/filtro', { token: admin, query: { nome } })).body).toEqual([]);
    expect((await it.api.get(`/perfil_acesso/${outro.perfil.id}`, { token: admin })).body).toEqual(outro.perfil);
    expect((await it.api.get(`/colaborador/${outro.colaborador.id}`, { token: admin })).body.perfil_acesso_id).toBe(outro.perfil.id);
    // a master identity still counts as one grants as before
    expect((await it.api.post('/perfil_acesso', { token: admin, body: { nome, permissoes: todas } })).status).toBe(201);
  });

  test('permissions taken away by another process grant nothing, though this one still holds them cached: the grant reads them afresh', async () => {
    const editor = await it.pessoa({ permissoes: { colaboradores: ['ler', 'criar', 'editar'] } });
    // cached in this process by a first request
    expect((await it.api.get('/perfil_acesso', { token: editor.token })).status).toBe(200);
    // another API process (here the database itself) takes the profile away
    await banco('intranet').query('UPDATE colaborador SET perfil_acesso_id = NULL WHERE id = ?', { replacements: [editor.colaborador.id] });
    const nome = unico('Copia ');
    esperarProblema(await it.api.post('/perfil_acesso', { token: editor.token, body: { nome, permissoes: editor.perfil.permissoes } }), 403);
    esperarProblema(await it.api.patch(`/colaborador/${editor.colaborador.id}/perfil_acesso`, { token: editor.token, body: { perfil_acesso_id: editor.perfil.id } }), 403);
    const admin = await it.admin();
    expect((await it.api.get('/perfil_acesso/filtro', { token: admin, query: { nome } })).body).toEqual([]);
    expect((await it.api.get(`/colaborador/${editor.colaborador.id}`, { token: admin })).body.perfil_acesso_id).toBeNull();
  });

  test("the right to grant itself, taken away by another process, is read afresh too: the grant is refused though what it grants is still held", async () => {
    const editor = await it.pessoa({ permissoes: { colaboradores: ['ler', 'criar', 'editar', 'deletar'] } });
    const leitura = await it.criarPerfil({ colaboradores: ['ler'] });
    const outro = await it.pessoa({ permissoes: { colaboradores: ['ler'] } });
    expect((await it.api.get('/perfil_acesso', { token: editor.token })).status).toBe(200);
    // another process narrows the editor's profile to reading
    await banco('intranet').query(`UPDATE perfil_acesso SET permissoes = '{"colaboradores":["ler"]}' WHERE id = ?`, { replacements: [editor.perfil.id] });
    const nome = unico('Leitura ');
    esperarProblema(await it.api.post('/perfil_acesso', { token: editor.token, body: { nome, permissoes: { colaboradores: ['ler'] } } }), 403);
    esperarProblema(await it.api.patch(`/perfil_acesso/${leitura.id}`, { token: editor.token, body: { descricao: 'mudada' } }), 403);
    esperarProblema(await it.api.del(`/perfil_acesso/${leitura.id}`, { token: editor.token }), 403);
    esperarProblema(await it.api.patch(`/colaborador/${outro.colaborador.id}/perfil_acesso`, { token: editor.token, body: { perfil_acesso_id: leitura.id } }), 403);
    const admin = await it.admin();
    expect((await it.api.get('/perfil_acesso/filtro', { token: admin, query: { nome } })).body).toEqual([]);
    expect((await it.api.get(`/perfil_acesso/${leitura.id}`, { token: admin })).body).toEqual(leitura);
    expect((await it.api.get(`/colaborador/${outro.colaborador.id}`, { token: admin })).body.perfil_acesso_id).toBe(outro.perfil.id);
  });

  test('demoted while linking themselves to a profile as strong as the one taken away: 403, and the demotion stands', async () => {
    const forte = { colaboradores: ['ler', 'criar', 'editar', 'deletar'] };
    const editor = await it.pessoa({ permissoes: forte });
    const outroForte = await it.criarPerfil(forte);
    const leitura = await it.criarPerfil({ colaboradores: ['ler'] });
    // a master's demotion of the editor, committed while the editor's link waits for their row
    const res = await comMudancaEmCurso(
      'intranet',
      'colaborador',
      editor.colaborador.id,
      ['%FROM `colaborador`%FOR UPDATE%'],
      (c) => c.query('UPDATE colaborador SET perfil_acesso_id = ? WHERE id = ?', [leitura.id, editor.colaborador.id]),
      () => it.api.patch(`/colaborador/${editor.colaborador.id}/perfil_acesso`, { token: editor.token, body: { perfil_acesso_id: outroForte.id } }),
    );
    esperarProblema(res, 403);
    expect((await it.api.get(`/colaborador/${editor.colaborador.id}`, { token: await it.admin() })).body.perfil_acesso_id).toBe(leitura.id);
  });

  test('their own profile narrowed while they write it back whole: 403, and the narrowing stands', async () => {
    const forte = { colaboradores: ['ler', 'criar', 'editar', 'deletar'] };
    const editor = await it.pessoa({ permissoes: forte });
    // a master narrowing the editor's profile, committed while the editor's change waits for it
    const res = await comMudancaEmCurso(
      'intranet',
      'perfil_acesso',
      editor.perfil.id,
      ['%FROM `perfil_acesso`%FOR UPDATE%'],
      (c) => c.query(`UPDATE perfil_acesso SET permissoes = '{"colaboradores":["ler"]}' WHERE id = ?`, [editor.perfil.id]),
      () => it.api.patch(`/perfil_acesso/${editor.perfil.id}`, { token: editor.token, body: { permissoes: forte } }),
    );
    esperarProblema(res, 403);
    expect((await it.api.get(`/perfil_acesso/${editor.perfil.id}`, { token: await it.admin() })).body.permissoes).toEqual({ colaboradores: ['ler'] });
  });

  test('a remover cannot delete a profile stronger than their own: 403, the profile stays', async () => {
    const removedor = await it.pessoa({ permissoes: { colaboradores: ['deletar'] } });
    const forte = await it.criarPerfil({ colaboradores: ['ler', 'criar', 'deletar'] });
    esperarProblema(await it.api.del(`/perfil_acesso/${forte.id}`, { token: removedor.token }), 403);
    expect((await it.api.get(`/perfil_acesso/${forte.id}`, { token: await it.admin() })).status).toBe(200);
  });
});
