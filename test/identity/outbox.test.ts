import { randomUUID } from 'node:crypto';
import { AddressInfo } from 'node:net';
import { createLocalJWKSet, jwtVerify } from 'jose';
import { config } from '../../config';
import { banco } from '../../lib/database';
import { enviar, esquecerTokenDoOutbox, varrer } from '../../api/identity/outbox';
import { Aplicativo, EventoPendente } from '../../models/identity';
import { fila } from '../../queues/fila';
import { filaIdentityOutbox } from '../../queues/identity-outbox';
import { identityDe } from '../helpers/identity';
import { iniciarSuite, SuiteDeTeste } from '../helpers/suite';
import { Registro } from '../helpers/registros';
import { comMudancaEmCurso } from '../helpers/espera';
import { esperarProblema, servidorQueLeOCorpo } from '../helpers/http';
import { CAMPOS_DO_USUARIO, chavesOrdenadas, dormir, esperarAte, proximoSegundo } from './apoio';

const mockRegistros: Registro[] = [];
jest.mock('../../lib/logger', () => jest.requireActual('../helpers/registros').loggerQueRegistra(['identity-outbox', 'worker'], ['error', 'warn'], () => mockRegistros));

/**
 * DESIGN §3: creating, changing or deleting a `colaborador` user publishes colaborador.criado,
 * colaborador.atualizado or colaborador.removido to the hub (POST {HUB_URL}/eventos with the
 * identity service's own application token) through a queue, so an outage of the hub loses no
 * event. A local HTTP server stands in for the hub.
 */

interface Chamada {
  metodo: string;
  caminho: string;
  autorizacao?: string;
  corpo: any;
  /** what the stand-in answered; 0 when it dropped the connection */
  status: number;
}

/** How the stand-in hub behaves now: accept (202), be unavailable (503), refuse the token (401) or drop the connection. */
let modo: 'aceitar' | 'indisponivel' | 'recusarToken' | 'derrubar' = 'aceitar';
/** collaborators whose `colaborador.criado` the stand-in answers 503, whatever the mode */
const indisponiveis = new Set<string>();
/** names of collaborators whose `colaborador.criado` the stand-in forbids (403), as a hub whose rules refuse it */
const proibidos = new Set<string>();
const chamadas: Chamada[] = [];

const hub = servidorQueLeOCorpo((bruto, req, res) => {
  let corpo: any;
  try {
    corpo = JSON.parse(bruto);
  } catch {
    corpo = bruto;
  }
  const chamada = { metodo: req.method!, caminho: req.url!, autorizacao: req.headers.authorization, corpo, status: 0 };
  chamadas.push(chamada);
  if (modo === 'derrubar') {
    req.socket.destroy();
    return;
  }
  const indisponivel = modo === 'indisponivel' || (indisponiveis.has(corpo?.dados?.id) && corpo?.tipo === 'colaborador.criado');
  const proibir = proibidos.has(corpo?.dados?.nome) && corpo?.tipo === 'colaborador.criado';
  if (modo === 'recusarToken') {
    chamada.status = 401;
    res.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ title: 'Não autenticado' }));
    return;
  }
  chamada.status = proibir ? 403 : indisponivel ? 503 : 202;
  res.writeHead(chamada.status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(proibir ? { title: 'Proibido' } : indisponivel ? { title: 'indisponível' } : { id: corpo?.id, entregas: 0 }));
});

let suite: SuiteDeTeste;
let id: ReturnType<typeof identityDe>;
let admin: string;

beforeAll(async () => {
  await new Promise<void>((resolve) => hub.listen(0, '127.0.0.1', resolve));
  const hubUrl = `http://127.0.0.1:${(hub.address() as AddressInfo).port}`;
  suite = await iniciarSuite(['identity'], { env: { HUB_URL: hubUrl } });
  id = identityDe(suite.url.identity);
  admin = await id.admin();
});
afterAll(async () => {
  await suite.encerrar();
  hub.closeAllConnections();
  await new Promise((resolve) => hub.close(resolve));
});
beforeEach(() => {
  modo = 'aceitar';
});

const doUsuario = (usuarioId: string) => chamadas.filter((c) => c.corpo?.dados?.id === usuarioId);
const aceitas = (usuarioId: string, tipo: string) => doUsuario(usuarioId).filter((c) => c.status === 202 && c.corpo.tipo === tipo);
const esperarEvento = (usuarioId: string, tipo: string) =>
  esperarAte(() => aceitas(usuarioId, tipo)[0], `${tipo} of ${usuarioId} at the hub`);
const pendentesDo = async (usuarioId: string) =>
  (await EventoPendente.findAll({ order: [['criado_em', 'ASC']] })).filter((e) => e.dados.id === usuarioId);
const colaborador = (campos: Record<string, unknown> = {}) => id.criarUsuario({ senha: undefined, perfil: 'colaborador', ...campos });

test('creating a colaborador publishes colaborador.criado: POST /eventos {id, tipo, versao 1, dados} with dados the Usuario', async () => {
  const u = await colaborador();
  const chamada = await esperarEvento(u.id, 'colaborador.criado');
  expect(chamada.metodo).toBe('POST');
  expect(chamada.caminho).toBe('/eventos');
  expect(chavesOrdenadas(chamada.corpo)).toEqual(['dados', 'id', 'tipo', 'versao']);
  expect(chamada.corpo).toMatchObject({ id: expect.any(String), tipo: 'colaborador.criado', versao: 1 });
  expect(chavesOrdenadas(chamada.corpo.dados)).toEqual([...CAMPOS_DO_USUARIO, 'sequencia'].sort());
  const { senha: _s, ...usuario } = u;
  expect(chamada.corpo.dados).toEqual({ ...usuario, sequencia: expect.any(Number) });
});

test('the initial master, created at the first start, is published as colaborador.criado like any collaborator (DESIGN §2, §3)', async () => {
  const usuarios: { id: string; email: string }[] = (await id.api.get('/usuario/filtro', { token: admin, query: { busca: 'admin@suite.test' } })).body;
  const adminId = usuarios.find((u) => u.email === 'admin@suite.test')!.id;
  const chamada = await esperarEvento(adminId, 'colaborador.criado');
  expect(chamada.corpo.dados).toMatchObject({ email: 'admin@suite.test', perfil: 'colaborador', e_master: true });
});

test('two DELETEs of one colaborador at once: one answers 204, the other 404, and one colaborador.removido is published', async () => {
  const u = await colaborador();
  await esperarEvento(u.id, 'colaborador.criado');
  const respostas = await Promise.all([1, 2].map(() => id.api.del(`/usuario/${u.id}`, { token: admin })));
  expect(respostas.map((r) => r.status).sort()).toEqual([204, 404]);
  await esperarEvento(u.id, 'colaborador.removido');
  await dormir(300);
  expect((await pendentesDo(u.id)).map((e) => e.tipo)).toEqual(['colaborador.criado', 'colaborador.removido']);
});

test('a PATCH racing a DELETE never changes the deleted user: it answers 200 before the deletion or 404 after it, and the events say so', async () => {
  const u = await colaborador();
  await esperarEvento(u.id, 'colaborador.criado');
  // the password makes the PATCH slow (its hash), so the DELETE usually lands while it is under way
  const [patch, del] = await Promise.all([
    id.api.patch(`/usuario/${u.id}`, { token: admin, body: { nome: 'Mudado Durante a Remoção', senha: 'Outra-Senha-Forte-9' } }),
    id.api.del(`/usuario/${u.id}`, { token: admin }),
  ]);
  expect(del.status).toBe(204);
  expect([200, 404]).toContain(patch.status);
  await dormir(300);
  const tipos = (await pendentesDo(u.id)).map((e) => e.tipo);
  expect(tipos).toEqual(
    patch.status === 200 ? ['colaborador.criado', 'colaborador.atualizado', 'colaborador.removido'] : ['colaborador.criado', 'colaborador.removido'],
  );
  const [linhas] = (await banco('identity').query('SELECT nome, deletado_em FROM usuario WHERE id = ?', { replacements: [u.id] })) as any[];
  expect(linhas[0].deletado_em).not.toBeNull();
  // the PATCH's change stays only when it came first
  expect(linhas[0].nome).toBe(patch.status === 200 ? 'Mudado Durante a Remoção' : u.nome);
});

test('a PATCH waiting on the row of a user whose deletion then commits answers 404, changes nothing and publishes nothing', async () => {
  const u = await colaborador();
  await esperarEvento(u.id, 'colaborador.criado');
  // the deletion, held where the PATCH must wait for it: the row locked, then marked deleted
  const patch = await comMudancaEmCurso(
    'identity',
    'usuario',
    u.id,
    ['%FROM `usuario`%FOR UPDATE%'],
    (c) => c.query('UPDATE usuario SET deletado_em = UTC_TIMESTAMP(3) WHERE id = ?', [u.id]),
    () => id.api.patch(`/usuario/${u.id}`, { token: admin, body: { nome: 'Mudado Depois da Remoção' } }),
  );
  esperarProblema(patch, 404);
  await dormir(300);
  expect((await pendentesDo(u.id)).map((e) => e.tipo)).toEqual(['colaborador.criado']);
  const [linhas] = (await banco('identity').query('SELECT nome FROM usuario WHERE id = ?', { replacements: [u.id] })) as any[];
  expect(linhas[0].nome).toBe(u.nome);
});

test('the event carries an application token of the identity service, verified by the identity JWKS (DESIGN §3)', async () => {
  const u = await colaborador();
  const chamada = await esperarEvento(u.id, 'colaborador.criado');
  const token = /^Bearer (.+)$/.exec(chamada.autorizacao ?? '')?.[1];
  expect(token).toBeDefined();
  const jwks = (await id.api.get('/.well-known/jwks.json')).body;
  const { payload } = await jwtVerify(token!, createLocalJWKSet(jwks), { issuer: suite.url.identity });
  const doIdentity = await Aplicativo.findOne({ where: { servico_da_suite: 'identity' } });
  expect(payload).toMatchObject({ tipo: 'aplicativo', sub: doIdentity!.id });
});

test('one token serves event after event for most of its life (a backlog drained after an outage signed one per event); one the hub refuses (401) is signed anew for the next try', async () => {
  // a token of its own, whatever the file's earlier events left (one near its renewal would be signed again between the two)
  esquecerTokenDoOutbox();
  const a = await colaborador();
  const ca = await esperarEvento(a.id, 'colaborador.criado');
  // a second later: a token signed again would differ (its iat)
  await proximoSegundo();
  const b = await colaborador();
  const cb = await esperarEvento(b.id, 'colaborador.criado');
  expect(cb.autorizacao).toBe(ca.autorizacao);
  // the hub refuses the token once (a signing key taken out of service, say)
  await proximoSegundo();
  modo = 'recusarToken';
  const c = await colaborador();
  try {
    await esperarAte(() => doUsuario(c.id).some((x) => x.status === 401), 'the token refused');
  } finally {
    modo = 'aceitar';
  }
  const aceita = await esperarEvento(c.id, 'colaborador.criado');
  expect(aceita.autorizacao).not.toBe(ca.autorizacao);
}, 60_000);

test('updating a colaborador publishes colaborador.atualizado with the new data', async () => {
  const u = await colaborador();
  await esperarEvento(u.id, 'colaborador.criado');
  const res = await id.api.patch(`/usuario/${u.id}`, { token: admin, body: { nome: 'Nome Novo Do Colaborador' } });
  const chamada = await esperarEvento(u.id, 'colaborador.atualizado');
  expect(chamada.corpo.versao).toBe(1);
  expect(chamada.corpo.dados).toEqual({ ...res.body, sequencia: expect.any(Number) });
});

test('a PATCH that changes nothing collaborators see (same values, or a password replaced by another, which also clears failed logins) publishes nothing', async () => {
  const u = await colaborador({ senha: 'Primeira-Senha-Longa-1' });
  await esperarEvento(u.id, 'colaborador.criado');
  expect((await id.api.patch(`/usuario/${u.id}`, { token: admin, body: { nome: u.nome } })).status).toBe(200);
  // a failed login the new password clears: a count nobody sees, so no change to publish
  expect((await id.api.post('/auth/login', { body: { email: u.email, senha: 'Senha-Errada-Longa-0' } })).status).toBe(401);
  expect((await id.api.patch(`/usuario/${u.id}`, { token: admin, body: { senha: 'Outra-Senha-Longa-9' } })).status).toBe(200);
  // a later visible change is published, and it is the only atualizado stored
  await id.api.patch(`/usuario/${u.id}`, { token: admin, body: { nome: `${u.nome} Novo` } });
  await esperarEvento(u.id, 'colaborador.atualizado');
  expect((await pendentesDo(u.id)).map((e) => e.tipo)).toEqual(['colaborador.criado', 'colaborador.atualizado']);
});

test('a first password is seen (tem_senha turns true): colaborador.atualizado carries it', async () => {
  const u = await colaborador();
  expect(u.tem_senha).toBe(false);
  await esperarEvento(u.id, 'colaborador.criado');
  const res = await id.api.patch(`/usuario/${u.id}`, { token: admin, body: { senha: 'Primeira-Senha-Longa-1' } });
  expect(res.body.tem_senha).toBe(true);
  const chamada = await esperarEvento(u.id, 'colaborador.atualizado');
  expect(chamada.corpo.dados).toEqual({ ...res.body, sequencia: expect.any(Number) });
});

test('deleting a colaborador publishes colaborador.removido', async () => {
  const u = await colaborador();
  await esperarEvento(u.id, 'colaborador.criado');
  expect((await id.api.del(`/usuario/${u.id}`, { token: admin })).status).toBe(204);
  const chamada = await esperarEvento(u.id, 'colaborador.removido');
  expect(chamada.corpo.dados).toMatchObject({ id: u.id, email: u.email, perfil: 'colaborador' });
  expect(chavesOrdenadas(chamada.corpo.dados)).toEqual([...CAMPOS_DO_USUARIO, 'sequencia'].sort());
});

test("a collaborator's events carry sequencia, greater at each later change: the order subscribers apply them in, whatever the processes' clocks", async () => {
  const u = await colaborador();
  await esperarEvento(u.id, 'colaborador.criado');
  expect((await id.api.patch(`/usuario/${u.id}`, { token: admin, body: { nome: 'Primeiro Nome Novo' } })).status).toBe(200);
  await esperarEvento(u.id, 'colaborador.atualizado');
  expect((await id.api.del(`/usuario/${u.id}`, { token: admin })).status).toBe(204);
  await esperarEvento(u.id, 'colaborador.removido');
  const aceitas = doUsuario(u.id).filter((c) => c.status === 202);
  const porTipo = (tipo: string) => aceitas.find((c) => c.corpo.tipo === tipo)!.corpo.dados.sequencia as number;
  const [criado, atualizado, removido] = ['colaborador.criado', 'colaborador.atualizado', 'colaborador.removido'].map(porTipo);
  expect(criado).toBeLessThan(atualizado);
  expect(atualizado).toBeLessThan(removido);
  // the number identity stored the event under
  const guardados = await pendentesDo(u.id);
  expect(guardados.map((e) => Number(e.sequencia))).toEqual([criado, atualizado, removido]);
});

test('each event has its own id, and every event stored is marked enviado_em once the hub accepted it', async () => {
  const u = await colaborador();
  await id.api.patch(`/usuario/${u.id}`, { token: admin, body: { nome: 'Outro Nome' } });
  await id.api.del(`/usuario/${u.id}`, { token: admin });
  await esperarEvento(u.id, 'colaborador.removido');
  await esperarEvento(u.id, 'colaborador.atualizado');
  const pendentes = await esperarAte(async () => {
    const p = await pendentesDo(u.id);
    return p.length === 3 && p.every((e) => e.enviado_em) && p;
  }, 'three events marked enviado_em');
  expect(pendentes.map((e) => e.tipo).sort()).toEqual(['colaborador.atualizado', 'colaborador.criado', 'colaborador.removido']);
  expect(new Set(doUsuario(u.id).map((c) => c.corpo.id))).toEqual(new Set(pendentes.map((e) => e.id)));
});

test('a cliente user publishes nothing: created, changed or deleted (DESIGN §3: perfil colaborador only)', async () => {
  const c = await id.criarUsuario({ senha: undefined, perfil: 'cliente' });
  expect((await id.api.patch(`/usuario/${c.id}`, { token: admin, body: { nome: 'Cliente Renomeado' } })).status).toBe(200);
  expect((await id.api.del(`/usuario/${c.id}`, { token: admin })).status).toBe(204);
  // a colaborador changed afterwards: once its event arrived, the queue has had its chance
  const sentinela = await colaborador();
  await esperarEvento(sentinela.id, 'colaborador.criado');
  await dormir(300);
  expect(await pendentesDo(c.id)).toEqual([]);
  expect(doUsuario(c.id)).toEqual([]);
});

test('a user moving into colaborador publishes criado, moving out publishes removido (DESIGN §3)', async () => {
  const u = await id.criarUsuario({ senha: undefined, perfil: 'cliente' });
  await id.api.patch(`/usuario/${u.id}`, { token: admin, body: { perfil: 'colaborador' } });
  expect((await esperarEvento(u.id, 'colaborador.criado')).corpo.dados.perfil).toBe('colaborador');
  await id.api.patch(`/usuario/${u.id}`, { token: admin, body: { perfil: 'cliente' } });
  expect((await esperarEvento(u.id, 'colaborador.removido')).corpo.dados.perfil).toBe('cliente');
});

test('while the hub answers 503 the event is retried; once it answers 202 it arrives, marked enviado_em, and is not sent again', async () => {
  modo = 'indisponivel';
  const u = await colaborador();
  await esperarAte(() => doUsuario(u.id).filter((c) => c.status === 503).length >= 2, 'two attempts answered 503');
  const [pendente] = await pendentesDo(u.id);
  await pendente.reload();
  expect(pendente.enviado_em).toBeNull();
  expect(pendente.tentativas).toBeGreaterThanOrEqual(2);
  expect(pendente.ultimo_erro).toContain('503');

  modo = 'aceitar';
  const chamada = await esperarEvento(u.id, 'colaborador.criado');
  expect(chamada.corpo.id).toBe(pendente.id);
  await esperarAte(async () => (await pendente.reload()).enviado_em, 'enviado_em set');
  // the job is done for good: no retry is left scheduled that could send it again
  const job = await esperarAte(async () => {
    const j = await fila(filaIdentityOutbox).getJob(pendente.id);
    // read again once completed: the first read may be from before, without its return value
    return (await j?.getState()) === 'completed' && fila(filaIdentityOutbox).getJob(pendente.id);
  }, 'the outbox job completed');
  expect(job.returnvalue).toBe('enviado');
  await dormir(300);
  expect(aceitas(u.id, 'colaborador.criado')).toHaveLength(1);
  expect(new Set(doUsuario(u.id).map((c) => c.corpo.id))).toEqual(new Set([pendente.id]));
  expect((await pendentesDo(u.id)).map((e) => e.enviado_em)).toEqual([expect.any(Date)]);
});

test('while the hub is out of reach the event waits, and arrives once the hub is back', async () => {
  modo = 'derrubar';
  const u = await colaborador();
  await esperarAte(() => doUsuario(u.id).length >= 1, 'a dropped attempt');
  const [pendente] = await esperarAte(async () => {
    const p = await pendentesDo(u.id);
    return p[0]?.ultimo_erro && p;
  }, 'the failure recorded');
  expect(pendente.enviado_em).toBeNull();
  // with what the connection met, not only fetch's own "fetch failed"
  expect(pendente.ultimo_erro).toMatch(/^hub out of reach: fetch failed \(.+\)$/);

  modo = 'aceitar';
  await esperarEvento(u.id, 'colaborador.criado');
  await esperarAte(async () => (await pendente.reload()).enviado_em, 'enviado_em set');
  expect(aceitas(u.id, 'colaborador.criado')).toHaveLength(1);
});

test('after an outage a collaborator\'s events reach the hub in the order they happened, though each job backs off on its own', async () => {
  modo = 'indisponivel';
  const u = await colaborador();
  // criado's job has backed off a few times: its next try is seconds away
  await esperarAte(() => doUsuario(u.id).filter((c) => c.status === 503).length >= 3, 'three attempts of criado answered 503');
  const antes = doUsuario(u.id).length;
  expect((await id.api.patch(`/usuario/${u.id}`, { token: admin, body: { nome: 'Nome Novo' } })).status).toBe(200);
  expect((await id.api.del(`/usuario/${u.id}`, { token: admin })).status).toBe(204);
  // the jobs of atualizado and removido have run once (and failed) while criado backs off
  await esperarAte(() => doUsuario(u.id).length >= antes + 2, 'the newer events\' jobs tried');

  modo = 'aceitar';
  await esperarEvento(u.id, 'colaborador.removido');
  const primeiraAceita = (tipo: string) => chamadas.findIndex((c) => c.corpo?.dados?.id === u.id && c.status === 202 && c.corpo.tipo === tipo);
  const ordem = ['colaborador.criado', 'colaborador.atualizado', 'colaborador.removido'].map(primeiraAceita);
  expect(ordem.every((i) => i >= 0)).toBe(true);
  expect([...ordem].sort((a, b) => a - b)).toEqual(ordem);
  await esperarAte(async () => (await pendentesDo(u.id)).every((e) => e.enviado_em), 'every event marked sent');
});

test('an event the hub keeps failing (503) holds back only its own collaborator\'s later events, not other collaborators\'', async () => {
  const preso = await colaborador();
  indisponiveis.add(preso.id);
  try {
    await esperarAte(() => doUsuario(preso.id).some((c) => c.status === 503), 'an attempt answered 503');
    expect((await id.api.patch(`/usuario/${preso.id}`, { token: admin, body: { nome: 'Ainda Preso' } })).status).toBe(200);
    const livre = await colaborador();
    await esperarEvento(livre.id, 'colaborador.criado');
    await dormir(300);
    // the later event of the stuck collaborator waits for its criado: not even tried (the hub
    // here would take it)
    expect(doUsuario(preso.id).filter((c) => c.corpo?.tipo === 'colaborador.atualizado')).toHaveLength(0);
  } finally {
    indisponiveis.delete(preso.id);
  }
  await esperarEvento(preso.id, 'colaborador.atualizado');
  expect(aceitas(preso.id, 'colaborador.criado')).not.toHaveLength(0);
});

test('a refusal (4xx) is logged as an error naming the event, an outage (503) only as a failed job: the one waits for someone to fix its cause', async () => {
  mockRegistros.splice(0);
  const nome = `Proibido ${randomUUID()}`;
  proibidos.add(nome);
  modo = 'indisponivel';
  let proibido: { id: string };
  let fora: { id: string };
  try {
    proibido = await colaborador({ nome });
    fora = await colaborador();
    await esperarAte(() => doUsuario(proibido.id).some((c) => c.status === 403), 'a forbidden attempt');
    await esperarAte(() => doUsuario(fora.id).some((c) => c.status === 503), 'an attempt answered 503');
    await esperarAte(
      () =>
        mockRegistros.some((r) => r.nivel === 'error') &&
        mockRegistros.some((r) => r.args[1] === 'job falhou' && /^hub answered 503/.test(String((r.args[0] as { erro: unknown }).erro))) &&
        mockRegistros.some((r) => r.args[1] === 'job falhou' && /^hub answered 403/.test(String((r.args[0] as { erro: unknown }).erro))),
      'the error and both failed jobs logged',
    );
  } finally {
    proibidos.delete(nome);
    modo = 'aceitar';
  }
  const erros = mockRegistros.filter((r) => r.nivel === 'error').map((r) => r.args[0] as Record<string, unknown>);
  expect(erros.length).toBeGreaterThan(0);
  expect(erros.every((e) => e.colaborador_id === proibido.id)).toBe(true);
  expect(erros[0]).toMatchObject({ tipo: 'colaborador.criado', erro: expect.stringMatching(/^hub answered 403/) });
  // each failed attempt's line says why in one line, no stack: the outage fails every event at each retry
  const falhas = mockRegistros.filter((r) => r.args[1] === 'job falhou').map((r) => (r.args[0] as { erro: unknown }).erro);
  expect(falhas).toEqual(expect.arrayContaining([expect.stringMatching(/^hub answered 503/), expect.stringMatching(/^hub answered 403/)]));
  expect(falhas.every((e) => typeof e === 'string')).toBe(true);
  await esperarEvento(proibido.id, 'colaborador.criado');
  await esperarEvento(fora.id, 'colaborador.criado');
});

test('an event with more than a hundred unsent events of its collaborator before it is sent after every one of them, in order', async () => {
  // a long outage: 120 changes of one collaborator stored, none sent (no jobs: sent by hand below)
  const colaboradorId = randomUUID();
  const inicio = Date.now() - 10_000;
  const eventos = await EventoPendente.bulkCreate(
    Array.from({ length: 120 }, (_, n) => ({
      tipo: 'colaborador.atualizado',
      versao: 1,
      dados: { id: colaboradorId, n },
      colaborador_id: colaboradorId,
      criado_em: new Date(inicio + n),
    })),
  );
  expect(await enviar(eventos[eventos.length - 1].id)).toBe('enviado');
  expect(doUsuario(colaboradorId).map((c) => c.corpo.dados.n)).toEqual(eventos.map((_, n) => n));
  expect((await pendentesDo(colaboradorId)).every((e) => e.enviado_em)).toBe(true);
});

test("identity without an application of its own records that it has no token, not that the hub is out of reach", async () => {
  const clientId = config().servicos.identity.clientId;
  const colaboradorId = randomUUID();
  const [evento] = await EventoPendente.bulkCreate([{ tipo: 'colaborador.atualizado', versao: 1, dados: { id: colaboradorId }, colaborador_id: colaboradorId }]);
  config().servicos.identity.clientId = randomUUID();
  try {
    await expect(enviar(evento.id)).rejects.toThrow('no token to publish with: the identity service has no application of its own');
  } finally {
    config().servicos.identity.clientId = clientId;
  }
  expect((await evento.reload()).ultimo_erro).toBe('no token to publish with: the identity service has no application of its own (IDENTITY_CLIENT_ID)');
  expect(doUsuario(colaboradorId)).toEqual([]);
  expect(await enviar(evento.id)).toBe('enviado');
});

describe('the sweep (varrer): stored events whose job is missing or finished go back to the queue', () => {
  /** Makes the event look stored a minute ago and unsent, as the sweep looks for them. */
  const comoEsquecido = (eventoId: string) =>
    banco('identity').query('UPDATE evento_pendente SET enviado_em = NULL, criado_em = NOW(3) - INTERVAL 1 MINUTE WHERE id = ?', {
      replacements: [eventoId],
    });
  /** Sent, and its job done: the processor marks the event before its job completes, and a job still running cannot be removed. */
  const enviado = (eventoId: string) =>
    esperarAte(
      async () =>
        (await EventoPendente.findByPk(eventoId))?.enviado_em && ['completed', 'unknown'].includes(await fila(filaIdentityOutbox).getJobState(eventoId)),
      `event ${eventoId} marked sent, its job done`,
    );

  test('an event stored without a job (Redis out of reach at the change) is enqueued and sent', async () => {
    const u = await colaborador();
    const criado = await esperarEvento(u.id, 'colaborador.criado');
    await enviado(criado.corpo.id);
    // the job is gone as if it never existed
    await (await fila(filaIdentityOutbox).getJob(criado.corpo.id))?.remove();
    await comoEsquecido(criado.corpo.id);
    const antes = aceitas(u.id, 'colaborador.criado').length;
    expect(await varrer()).toBeGreaterThanOrEqual(1);
    await esperarAte(() => aceitas(u.id, 'colaborador.criado').length > antes, 'the swept event at the hub');
    await enviado(criado.corpo.id);
  });

  test('an unsent event whose finished job is still kept is sent again: the sweep is not blocked by that job\'s id', async () => {
    const u = await colaborador();
    const criado = await esperarEvento(u.id, 'colaborador.criado');
    await enviado(criado.corpo.id);
    expect(await fila(filaIdentityOutbox).getJobState(criado.corpo.id)).toBe('completed');
    await comoEsquecido(criado.corpo.id);
    const antes = aceitas(u.id, 'colaborador.criado').length;
    await varrer();
    await esperarAte(() => aceitas(u.id, 'colaborador.criado').length > antes, 'the swept event at the hub');
    await enviado(criado.corpo.id);
  });
});
