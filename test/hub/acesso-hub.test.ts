import { randomUUID } from 'node:crypto';
import { chamar, esperarProblema } from '../helpers/http';
import { iniciarSuite, SuiteDeTeste } from '../helpers/suite';
import { Hub, hubDe, unico, URL_LOCAL } from './apoio-admin';

/**
 * Who may use the hub's administration routes (SPEC 4.3 and 4.4 access, SPEC §5, DESIGN §3 and
 * §5): non-master identity users registered as hub collaborators, each with a hub profile of the
 * permissions under test.
 */

let suite: SuiteDeTeste;
let hub: Hub;
let admin: string;
const tag = unico('Acesso');

let dono: any;
let assinante: any;
let tipo: any;
let assinatura: any;
/** one logged-in collaborator per profile */
const p: Record<string, { token: string }> = {};

const PERFIS: Record<string, Record<string, string[]> | undefined> = {
  leitorAssinaturas: { assinaturas: ['ler'] },
  leitorMonitoramento: { monitoramento: ['ler'] },
  leitorAplicativos: { aplicativos: ['ler'] },
  leitorContratos: { contratos: ['ler'] },
  criador: { assinaturas: ['criar'] },
  editor: { assinaturas: ['editar'] },
  removedor: { assinaturas: ['deletar'] },
  monitorTotal: { monitoramento: ['ler', 'criar', 'editar', 'deletar'] },
  contratosTotal: { contratos: ['ler', 'criar', 'editar', 'deletar'] },
  soColaboradores: { colaboradores: ['ler', 'criar', 'editar', 'deletar'] },
  acessoInicial: undefined,
};

beforeAll(async () => {
  suite = await iniciarSuite(['identity', 'hub']);
  hub = hubDe(suite);
  admin = await hub.admin();
  [dono, assinante] = await hub.aplicativos(`${tag} Dono`, `${tag} Assinante`);
  tipo = await hub.criarTipo(dono.id, { versoes: 1 });
  assinatura = await hub.criarAssinatura({ aplicativo_assinante_id: assinante.id, tipo_de_evento_id: tipo.id });
  const nomes = Object.keys(PERFIS);
  const pessoas = await hub.pessoas(...nomes.map((n) => PERFIS[n]));
  nomes.forEach((n, i) => (p[n] = pessoas[i]));
});
afterAll(() => suite.encerrar());

const INEXISTENTE = randomUUID();

/** Every administration route of this helper's scope, with input that is bad or points at nothing. */
const rotas = (): [string, string, Record<string, unknown>][] => [
  ['GET', '/assinatura', { query: { pagina: 'um' } }],
  ['GET', '/assinatura/autocomplete', { query: { tamanho: 'dez' } }],
  ['GET', '/assinatura/filtro', { query: { ativa: 'talvez' } }],
  ['GET', `/assinatura/${INEXISTENTE}`, {}],
  ['POST', '/assinatura', { body: { url_de_destino: 'ftp://x' } }],
  ['PATCH', `/assinatura/${INEXISTENTE}`, { body: { maximo_de_tentativas: 99 } }],
  ['DELETE', `/assinatura/${INEXISTENTE}`, {}],
  ['GET', '/aplicativo', { query: { pagina: 'um' } }],
  ['GET', '/aplicativo/autocomplete', { query: { tamanho: 'dez' } }],
  ['GET', '/aplicativo/filtro', { query: { ativo: 'talvez' } }],
  ['GET', `/aplicativo/${INEXISTENTE}`, {}],
  ['GET', '/tipo_de_evento', { query: { pagina: 'um' } }],
  ['POST', '/tipo_de_evento', { body: { nome: 'com espaço' } }],
  ['GET', `/tipo_de_evento/${INEXISTENTE}`, {}],
  ['PATCH', `/tipo_de_evento/${INEXISTENTE}`, { body: { nome: 'com espaço' } }],
  ['DELETE', `/tipo_de_evento/${INEXISTENTE}`, {}],
  ['POST', `/tipo_de_evento/${INEXISTENTE}/versao`, { body: {} }],
  ['PATCH', `/tipo_de_evento/${INEXISTENTE}/versao/1`, { body: { situacao: 'apagada' } }],
];

const chamada = (metodo: string, caminho: string, opcoes: Record<string, unknown>, token?: string) =>
  chamar(suite.url.hub, metodo, caminho, { ...opcoes, token });

/** The routes that read subscriptions, with a real subscription. */
const leiturasDeAssinaturas = () => ['/assinatura', '/assinatura/autocomplete', '/assinatura/filtro', `/assinatura/${assinatura.id}`];
const leiturasDeAplicativos = () => ['/aplicativo', '/aplicativo/autocomplete', '/aplicativo/filtro', `/aplicativo/${dono.id}`];
const leiturasDeTipos = () => ['/tipo_de_evento', `/tipo_de_evento/${tipo.id}`, `/tipo_de_evento/${tipo.id}/versao/1`];

async function statusDe(token: string, caminhos: string[]) {
  const saida: Record<string, number> = {};
  for (const c of caminhos) saida[c] = (await hub.api.get(c, { token })).status;
  return saida;
}
const todos = (caminhos: string[], status: number) => Object.fromEntries(caminhos.map((c) => [c, status]));

describe('authentication first (SPEC §5, DESIGN §10)', () => {
  test('without a token every route answers 401, before permission, input or existence', async () => {
    for (const [metodo, caminho, opcoes] of rotas()) {
      const res = await chamada(metodo, caminho, opcoes);
      expect({ metodo, caminho, status: res.status }).toEqual({ metodo, caminho, status: 401 });
      esperarProblema(res, 401);
    }
  });

  test('an invalid token answers 401', async () => {
    esperarProblema(await hub.api.get('/assinatura', { token: 'abc.def.ghi' }), 401);
    const adulterado = admin.slice(0, -4) + (admin.endsWith('AAAA') ? 'BBBB' : 'AAAA');
    esperarProblema(await hub.api.get('/aplicativo/filtro', { token: adulterado }), 401);
  });

  test('an application token answers 403 on every route: they are for logged users (DESIGN §3)', async () => {
    const app = await hub.identity.criarAplicativo(`${tag} Chamador`);
    for (const [metodo, caminho, opcoes] of rotas()) {
      const res = await chamada(metodo, caminho, opcoes, app.token);
      expect({ metodo, caminho, status: res.status }).toEqual({ metodo, caminho, status: 403 });
    }
  });

  test('a user the hub has not registered as collaborator answers 403 on every route, before input or existence', async () => {
    const { token } = await hub.identity.criarUsuarioLogado();
    for (const [metodo, caminho, opcoes] of rotas()) {
      const res = await chamada(metodo, caminho, opcoes, token);
      expect({ metodo, caminho, status: res.status }).toEqual({ metodo, caminho, status: 403 });
      esperarProblema(res, 403);
    }
  });

  test('an identity master may do everything without any hub profile (SPEC 5.1)', async () => {
    const { token } = await hub.identity.criarUsuarioLogado({ e_master: true });
    expect(await statusDe(token, [...leiturasDeAssinaturas(), ...leiturasDeAplicativos(), ...leiturasDeTipos()])).toEqual(
      todos([...leiturasDeAssinaturas(), ...leiturasDeAplicativos(), ...leiturasDeTipos()], 200),
    );
    const t = await hub.criarTipo(dono.id);
    const criada = await hub.api.post('/assinatura', {
      token,
      body: { aplicativo_assinante_id: assinante.id, tipo_de_evento_id: t.id, versao_do_esquema: 1, url_de_destino: URL_LOCAL },
    });
    expect(criada.status).toBe(201);
    expect((await hub.api.patch(`/assinatura/${criada.body.id}`, { token, body: { ativa: false } })).status).toBe(200);
    expect((await hub.api.del(`/assinatura/${criada.body.id}`, { token })).status).toBe(204);
  });

  test("a master demoted in identity neither creates nor redirects a subscription with the token issued before (deliveries would outlive the token's 8 hours); reads and deletions go by the token", async () => {
    const { usuario, token } = await hub.identity.criarUsuarioLogado({ e_master: true });
    const t = await hub.criarTipo(dono.id);
    const alvo = await hub.criarAssinatura({ aplicativo_assinante_id: assinante.id, tipo_de_evento_id: (await hub.criarTipo(dono.id)).id });
    const criar = () =>
      hub.api.post('/assinatura', {
        token,
        body: { aplicativo_assinante_id: assinante.id, tipo_de_evento_id: t.id, versao_do_esquema: 1, url_de_destino: 'https://desvio.test/x' },
      });
    const desviar = () => hub.api.patch(`/assinatura/${alvo.id}`, { token, body: { url_de_destino: 'https://desvio.test/y' } });
    // while identity takes them as master, the same change passes (undone at once)
    expect((await desviar()).status).toBe(200);
    const restaurada = (await hub.api.patch(`/assinatura/${alvo.id}`, { token: admin, body: { url_de_destino: alvo.url_de_destino } })).body;
    expect((await hub.identity.api.patch(`/usuario/${usuario.id}`, { token: admin, body: { e_master: false } })).status).toBe(200);
    esperarProblema(await criar(), 403);
    esperarProblema(await desviar(), 403);
    expect((await hub.api.get('/assinatura/filtro', { token: admin, query: { tipo_de_evento_id: t.id } })).body).toEqual([]);
    expect((await hub.api.get(`/assinatura/${alvo.id}`, { token })).body).toEqual(restaurada);
    expect((await hub.api.del(`/assinatura/${alvo.id}`, { token })).status).toBe(204);
  });

  test('a master demoted in identity who holds criar in assinaturas by their hub profile creates with the token issued before, as any collaborator', async () => {
    const [pessoa] = await hub.pessoas({ assinaturas: ['criar'] });
    expect((await hub.identity.api.patch(`/usuario/${pessoa.usuario.id}`, { token: admin, body: { e_master: true } })).status).toBe(200);
    const token = await hub.identity.login(pessoa.usuario.email, pessoa.usuario.senha);
    expect((await hub.identity.api.patch(`/usuario/${pessoa.usuario.id}`, { token: admin, body: { e_master: false } })).status).toBe(200);
    const t = await hub.criarTipo(dono.id);
    const res = await hub.api.post('/assinatura', {
      token,
      body: { aplicativo_assinante_id: assinante.id, tipo_de_evento_id: t.id, versao_do_esquema: 1, url_de_destino: URL_LOCAL },
    });
    expect(res.status).toBe(201);
  });
});

describe('reading subscriptions needs ler in assinaturas or monitoramento (SPEC 4.3 access)', () => {
  test.each(['leitorAssinaturas', 'leitorMonitoramento', 'acessoInicial'])('%s reads every subscription route', async (quem) => {
    expect(await statusDe(p[quem].token, leiturasDeAssinaturas())).toEqual(todos(leiturasDeAssinaturas(), 200));
    const porId = await hub.api.get(`/assinatura/${assinatura.id}`, { token: p[quem].token });
    expect(porId.body).toEqual((await hub.api.get(`/assinatura/${assinatura.id}`, { token: admin })).body);
  });

  test.each(['leitorAplicativos', 'leitorContratos', 'contratosTotal', 'soColaboradores', 'criador', 'editor', 'removedor'])(
    '%s, without ler in either area, is refused on every subscription read: 403 (SPEC 4.3 asks for ler, not any action)',
    async (quem) => {
      expect(await statusDe(p[quem].token, leiturasDeAssinaturas())).toEqual(todos(leiturasDeAssinaturas(), 403));
    },
  );
});

describe('writing subscriptions needs criar, editar, deletar in assinaturas (SPEC 4.3 access)', () => {
  const corpo = (t: any) => ({ aplicativo_assinante_id: assinante.id, tipo_de_evento_id: t.id, versao_do_esquema: 1, url_de_destino: URL_LOCAL });
  const doTipo = async (t: any) => (await hub.api.get('/assinatura/filtro', { token: admin, query: { tipo_de_evento_id: t.id } })).body;

  test('only criar creates: readers, monitoring with every action, editar and deletar get 403 and nothing is created', async () => {
    const t = await hub.criarTipo(dono.id);
    for (const quem of ['leitorAssinaturas', 'monitorTotal', 'editor', 'removedor', 'contratosTotal']) {
      const res = await hub.api.post('/assinatura', { token: p[quem].token, body: corpo(t) });
      expect({ quem, status: res.status }).toEqual({ quem, status: 403 });
    }
    expect(await doTipo(t)).toEqual([]);
    const res = await hub.api.post('/assinatura', { token: p.criador.token, body: corpo(t) });
    expect(res.status).toBe(201);
    expect(await doTipo(t)).toEqual([res.body]);
  });

  test('only editar updates: the others get 403 and nothing changes', async () => {
    const alvo = await hub.criarAssinatura({ aplicativo_assinante_id: assinante.id, tipo_de_evento_id: (await hub.criarTipo(dono.id)).id });
    for (const quem of ['leitorAssinaturas', 'monitorTotal', 'criador', 'removedor']) {
      const res = await hub.api.patch(`/assinatura/${alvo.id}`, { token: p[quem].token, body: { ativa: false } });
      expect({ quem, status: res.status }).toEqual({ quem, status: 403 });
    }
    expect((await hub.api.get(`/assinatura/${alvo.id}`, { token: admin })).body).toEqual(alvo);
    const res = await hub.api.patch(`/assinatura/${alvo.id}`, { token: p.editor.token, body: { ativa: false } });
    expect(res.status).toBe(200);
    expect(res.body.ativa).toBe(false);
  });

  test('only deletar deletes: the others get 403 and the subscription stays', async () => {
    const alvo = await hub.criarAssinatura({ aplicativo_assinante_id: assinante.id, tipo_de_evento_id: (await hub.criarTipo(dono.id)).id });
    for (const quem of ['leitorAssinaturas', 'monitorTotal', 'criador', 'editor']) {
      const res = await hub.api.del(`/assinatura/${alvo.id}`, { token: p[quem].token });
      expect({ quem, status: res.status }).toEqual({ quem, status: 403 });
    }
    expect((await hub.api.get(`/assinatura/${alvo.id}`, { token: admin })).status).toBe(200);
    expect((await hub.api.del(`/assinatura/${alvo.id}`, { token: p.removedor.token })).status).toBe(204);
    expect((await hub.api.get(`/assinatura/${alvo.id}`, { token: admin })).status).toBe(404);
  });

  test('with the permission, bad input answers 400 before existence (DESIGN §10)', async () => {
    esperarProblema(await hub.api.post('/assinatura', { token: p.criador.token, body: { ...corpo({ id: INEXISTENTE }), maximo_de_tentativas: 0 } }), 400);
    esperarProblema(await hub.api.patch(`/assinatura/${INEXISTENTE}`, { token: p.editor.token, body: { maximo_de_tentativas: 99 } }), 400);
    esperarProblema(await hub.api.patch(`/assinatura/${INEXISTENTE}`, { token: p.editor.token, body: { url_de_destino: 'http://fora.example/x' } }), 400);
    esperarProblema(await hub.api.patch(`/assinatura/${INEXISTENTE}`, { token: p.editor.token, body: { maximo_de_tentativas: 9 } }), 404);
    esperarProblema(await hub.api.del(`/assinatura/${INEXISTENTE}`, { token: p.removedor.token }), 404);
  });
});

describe('reading applications needs ler in aplicativos, contratos, assinaturas or monitoramento (SPEC 4.4 access)', () => {
  test.each(['leitorAplicativos', 'leitorContratos', 'leitorAssinaturas', 'leitorMonitoramento', 'acessoInicial'])(
    '%s reads every application route',
    async (quem) => {
      expect(await statusDe(p[quem].token, leiturasDeAplicativos())).toEqual(todos(leiturasDeAplicativos(), 200));
    },
  );

  test.each(['soColaboradores', 'criador', 'editor', 'removedor'])('%s, without ler in those areas, is refused: 403', async (quem) => {
    expect(await statusDe(p[quem].token, leiturasDeAplicativos())).toEqual(todos(leiturasDeAplicativos(), 403));
  });
});

describe('event types and versions are area contratos (DESIGN §5)', () => {
  test('ler in contratos reads types and versions, and so does ler in assinaturas (a subscription names a type and its version); no ler in either is refused', async () => {
    expect(await statusDe(p.leitorContratos.token, leiturasDeTipos())).toEqual(todos(leiturasDeTipos(), 200));
    expect(await statusDe(p.leitorAssinaturas.token, leiturasDeTipos())).toEqual(todos(leiturasDeTipos(), 200));
    for (const quem of ['leitorAplicativos', 'leitorMonitoramento', 'soColaboradores']) {
      expect(await statusDe(p[quem].token, leiturasDeTipos())).toEqual(todos(leiturasDeTipos(), 403));
    }
  });

  test('creating, editing and deleting types and versions needs criar, editar, deletar in contratos', async () => {
    const nome = `${unico('c').toLowerCase()}.criado`;
    const body = { nome, aplicativo_id: dono.id };
    for (const quem of ['leitorContratos', 'leitorAssinaturas', 'monitorTotal']) {
      expect((await hub.api.post('/tipo_de_evento', { token: p[quem].token, body })).status).toBe(403);
    }
    const criado = await hub.api.post('/tipo_de_evento', { token: p.contratosTotal.token, body });
    expect(criado.status).toBe(201);
    const id = criado.body.id;
    expect((await hub.api.post(`/tipo_de_evento/${id}/versao`, { token: p.leitorContratos.token, body: { esquema: {} } })).status).toBe(403);
    expect((await hub.api.post(`/tipo_de_evento/${id}/versao`, { token: p.contratosTotal.token, body: { esquema: {} } })).status).toBe(201);
    const situacao = { situacao: 'depreciada' };
    expect((await hub.api.patch(`/tipo_de_evento/${id}/versao/1`, { token: p.leitorContratos.token, body: situacao })).status).toBe(403);
    expect((await hub.api.patch(`/tipo_de_evento/${id}/versao/1`, { token: p.contratosTotal.token, body: situacao })).status).toBe(200);
    const descricao = { descricao: 'editada' };
    expect((await hub.api.patch(`/tipo_de_evento/${id}`, { token: p.leitorContratos.token, body: descricao })).status).toBe(403);
    expect((await hub.api.patch(`/tipo_de_evento/${id}`, { token: p.contratosTotal.token, body: descricao })).status).toBe(200);
    expect((await hub.api.del(`/tipo_de_evento/${id}`, { token: p.leitorContratos.token })).status).toBe(403);
    expect((await hub.api.get(`/tipo_de_evento/${id}`, { token: admin })).body).toMatchObject({ descricao: 'editada', versoes: [{ situacao: 'depreciada' }] });
    expect((await hub.api.del(`/tipo_de_evento/${id}`, { token: p.contratosTotal.token })).status).toBe(204);
  });

  test('with the permission, an invalid JSON Schema answers 400 before the type is looked up (DESIGN §10)', async () => {
    const res = await hub.api.post(`/tipo_de_evento/${INEXISTENTE}/versao`, { token: p.contratosTotal.token, body: { esquema: { type: 'texto' } } });
    expect(esperarProblema(res, 400).errors).toEqual([expect.objectContaining({ campo: 'esquema' })]);
  });
});

describe('a profile change takes effect at once in the process that made it (SPEC 5.2, DESIGN §3)', () => {
  test('linking a profile with ler in assinaturas opens the reads; removing it closes them again', async () => {
    const [pessoa] = await hub.pessoas({ colaboradores: ['ler'] });
    expect((await hub.api.get('/assinatura', { token: pessoa.token })).status).toBe(403);
    const perfil = await hub.api.post('/perfil_acesso', { token: admin, body: { nome: unico('Perfil '), permissoes: { assinaturas: ['ler'] } } });
    const vincular = (perfil_acesso_id: string | null) =>
      hub.api.patch(`/colaborador/${pessoa.colaborador.id}/perfil_acesso`, { token: admin, body: { perfil_acesso_id } });
    expect((await vincular(perfil.body.id)).status).toBe(200);
    expect((await hub.api.get('/assinatura', { token: pessoa.token })).status).toBe(200);
    expect((await vincular(null)).status).toBe(200);
    expect((await hub.api.get('/assinatura', { token: pessoa.token })).status).toBe(403);
  });
});

describe('who administers access grants no more than they hold (SPEC 5.2 "where stated", SPEC 4.3 and 4.4)', () => {
  test('in the hub another action does not include ler: creating, linking or widening to a profile that reads subscriptions is refused', async () => {
    const [pessoa] = await hub.pessoas({ assinaturas: ['criar'], monitoramento: ['deletar'], colaboradores: ['ler', 'criar', 'editar'] });
    const token = pessoa.token;
    expect((await hub.api.get('/assinatura', { token })).status).toBe(403);
    expect((await hub.api.get('/entrega', { token })).status).toBe(403);

    for (const permissoes of [{ assinaturas: ['ler', 'criar'] }, { monitoramento: ['ler'] }]) {
      const nome = unico('Escalada ');
      esperarProblema(await hub.api.post('/perfil_acesso', { token, body: { nome, permissoes } }), 403);
      expect((await hub.api.get('/perfil_acesso/filtro', { token: admin, query: { nome } })).body).toEqual([]);
    }
    const leitor = await hub.api.post('/perfil_acesso', { token: admin, body: { nome: unico('Leitor '), permissoes: { assinaturas: ['ler'] } } });
    esperarProblema(await hub.api.patch(`/colaborador/${pessoa.colaborador.id}/perfil_acesso`, { token, body: { perfil_acesso_id: leitor.body.id } }), 403);
    const proprio = (await hub.api.get(`/colaborador/${pessoa.colaborador.id}`, { token: admin })).body.perfil_acesso_id;
    esperarProblema(
      await hub.api.patch(`/perfil_acesso/${proprio}`, { token, body: { permissoes: { assinaturas: ['ler', 'criar'], colaboradores: ['ler', 'criar', 'editar'] } } }),
      403,
    );
    expect((await hub.api.get('/assinatura', { token })).status).toBe(403);

    // in colaboradores, the access module's own area, any action still includes reading (SPEC 4.5)
    const criado = await hub.api.post('/perfil_acesso', { token, body: { nome: unico('Equipe '), permissoes: { colaboradores: ['ler', 'criar'] } } });
    expect(criado.status).toBe(201);
  });
});
