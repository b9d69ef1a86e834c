import { decodeJwt } from 'jose';
import { config } from '../../config';
import { novaConexao } from '../../lib/database';
import { esperarOutraConexao } from '../helpers/espera';
import { Usuario } from '../../models/identity';
import { esperarProblema } from '../helpers/http';
import { identityDe } from '../helpers/identity';
import { iniciarSuite, SuiteDeTeste } from '../helpers/suite';
import { CAMPOS_DO_USUARIO, chavesOrdenadas, dormir, marca } from './apoio';

/** Administration of users (DESIGN §3, DESIGN §10): POST, PATCH and DELETE /usuario. */

let suite: SuiteDeTeste;
let id: ReturnType<typeof identityDe>;
let admin: string;
/** The admin's own id (the `sub` of its token). */
let adminId: string;
/** One logged non-master user for the whole file: password hashes are slow on purpose. */
let comum: { usuario: any; token: string };

beforeAll(async () => {
  // no outbox worker: only outbox.test.ts has a hub to publish colaborador events to
  suite = await iniciarSuite(['identity'], { workers: false });
  id = identityDe(suite.url.identity);
  admin = await id.admin();
  adminId = decodeJwt(admin).sub!;
  comum = await id.criarUsuarioLogado();
});
afterAll(() => suite.encerrar());

const semSenha = (campos: Record<string, unknown> = {}) => id.criarUsuario({ senha: undefined, ...campos });
const ler = (usuarioId: string) => id.api.get(`/usuario/${usuarioId}`, { token: admin });
const buscar = (busca: string) => id.api.get('/usuario/filtro', { token: admin, query: { busca } });

describe('POST /usuario (DESIGN §3, §10)', () => {
  test('creates a user: 201 with the Usuario of SPEC §2, and Location where it is read', async () => {
    const m = marca();
    const res = await id.api.post('/usuario', { token: admin, body: { nome: `Nova ${m}`, email: `${m}@suite.test`, perfil: 'cliente' } });
    expect(res.status).toBe(201);
    expect(chavesOrdenadas(res.body)).toEqual(CAMPOS_DO_USUARIO);
    expect(res.body).toMatchObject({ nome: `Nova ${m}`, email: `${m}@suite.test`, perfil: 'cliente', tem_senha: false, e_master: false });
    expect(res.headers.get('location')).toBe(`/usuario/${res.body.id}`);
    expect((await id.api.get(res.headers.get('location')!, { token: admin })).body).toEqual(res.body);
  });

  test('senha null is no password (a `?` field may be absent or null, SPEC §2): tem_senha false', async () => {
    const m = marca();
    const res = await id.api.post('/usuario', { token: admin, body: { nome: `Sem ${m}`, email: `${m}@suite.test`, perfil: 'cliente', senha: null } });
    expect(res.status).toBe(201);
    expect(res.body.tem_senha).toBe(false);
  });

  test('is master only: a non-master user gets 403 and nothing is created', async () => {
    const m = marca();
    const body = { nome: `X ${m}`, email: `${m}@suite.test`, perfil: 'cliente' };
    esperarProblema(await id.api.post('/usuario', { token: comum.token, body }), 403);
    expect((await buscar(m)).body).toEqual([]);
  });

  test.each([
    ['nome missing', { email: 'EMAIL', perfil: 'cliente' }, 'nome'],
    ['nome blank', { nome: '   ', email: 'EMAIL', perfil: 'cliente' }, 'nome'],
    ['e-mail malformed', { nome: 'NOME', email: 'sem-arroba', perfil: 'cliente' }, 'email'],
    ['perfil unknown', { nome: 'NOME', email: 'EMAIL', perfil: 'gerente' }, 'perfil'],
    ['senha too short', { nome: 'NOME', email: 'EMAIL', perfil: 'cliente', senha: 'curta' }, 'senha'],
    ['imagem not a URL', { nome: 'NOME', email: 'EMAIL', perfil: 'cliente', imagem: 'foto.png' }, 'imagem'],
    ['e_master a string', { nome: 'NOME', email: 'EMAIL', perfil: 'cliente', e_master: 'false' }, 'e_master'],
    ['unknown field', { nome: 'NOME', email: 'EMAIL', perfil: 'cliente', salario: 10 }, 'salario'],
  ])('refuses a body with %s: 400 problem naming the field, nothing created (DESIGN §4)', async (_caso, modelo, campo) => {
    const m = marca();
    const body = JSON.parse(JSON.stringify(modelo).replace('EMAIL', `${m}@suite.test`).replace('NOME', `Nome ${m}`));
    const problema = esperarProblema(await id.api.post('/usuario', { token: admin, body }), 400);
    expect(problema.errors).toEqual(expect.arrayContaining([expect.objectContaining({ campo, mensagem: expect.any(String) })]));
    expect((await buscar(m)).body).toEqual([]);
  });

  test('refuses a malformed JSON body with 400, creating nothing (DESIGN §4)', async () => {
    const m = marca();
    esperarProblema(await id.api.post('/usuario', { token: admin, raw: `{"nome": "x", "email": "${m}@suite.test", "perfil": "cliente",` }), 400);
    expect((await buscar(m)).body).toEqual([]);
  });

  test('refuses a body over 1 MiB with 413, creating nothing (DESIGN §4)', async () => {
    const m = marca();
    const imagem = `https://x.test/${'a'.repeat(1024 * 1024)}`;
    const body = { nome: 'Grande', email: `${m}@suite.test`, perfil: 'cliente', imagem };
    esperarProblema(await id.api.post('/usuario', { token: admin, body }), 413);
    expect((await buscar(m)).body).toEqual([]);
  });

  test('an unknown setor_id, cargo_id or funcao_id answers 422 and creates nothing (DESIGN §4)', async () => {
    for (const campo of ['setor_id', 'cargo_id', 'funcao_id']) {
      const m = marca();
      const body = { nome: `Ref ${m}`, email: `${m}@suite.test`, perfil: 'colaborador', [campo]: '0190a3c4-0000-7000-8000-000000000000' };
      const problema = esperarProblema(await id.api.post('/usuario', { token: admin, body }), 422);
      expect(problema.errors).toEqual([expect.objectContaining({ campo })]);
      expect((await buscar(m)).body).toEqual([]);
    }
  });

  test('a duplicate e-mail answers 409, whatever its case (DESIGN §4)', async () => {
    const u = await semSenha();
    const body = { nome: 'Outra Pessoa', email: u.email.toUpperCase(), perfil: 'cliente' };
    esperarProblema(await id.api.post('/usuario', { token: admin, body }), 409);
    expect((await buscar(u.email)).body.map((x: any) => x.id)).toEqual([u.id]);
  });

  test('e-mails that differ by an accent or a ß are different addresses: both are created, and each logs in only with its own password', async () => {
    const m = marca();
    const pares = [
      [`josé.${m}@suite.test`, `jose.${m}@suite.test`],
      [`straße.${m}@suite.test`, `strasse.${m}@suite.test`],
    ];
    for (const [com, sem] of pares) {
      const a = await id.criarUsuario({ email: com, perfil: 'cliente' });
      const b = await id.criarUsuario({ email: sem, perfil: 'cliente' });
      expect([a.email, b.email]).toEqual([com, sem]);
      expect(decodeJwt(await id.login(com, a.senha)).sub).toBe(a.id);
      expect(decodeJwt(await id.login(sem, b.senha)).sub).toBe(b.id);
      esperarProblema(await id.api.post('/auth/login', { body: { email: sem, senha: a.senha } }), 401);
      // the case still does not make another address (ß has no capital of its own: only the first letter)
      const maiuscula = com[0].toUpperCase() + com.slice(1);
      esperarProblema(await id.api.post('/usuario', { token: admin, body: { nome: 'Outra', email: maiuscula, perfil: 'cliente' } }), 409);
      esperarProblema(await id.api.patch(`/usuario/${b.id}`, { token: admin, body: { email: maiuscula } }), 409);
    }
  });

  test('an address is one address however its accents are encoded (RFC 6532: NFC): composed or decomposed, 409 for the second and the same login; invisible characters are refused', async () => {
    const m = marca();
    const composto = `jos\u00e9.${m}@suite.test`;
    const decomposto = `jose\u0301.${m}@suite.test`;
    const a = await id.criarUsuario({ email: decomposto, perfil: 'cliente' });
    expect(a.email).toBe(composto);
    esperarProblema(await id.api.post('/usuario', { token: admin, body: { nome: 'Outra', email: composto, perfil: 'cliente' } }), 409);
    expect(decodeJwt(await id.login(composto, a.senha)).sub).toBe(a.id);
    expect(decodeJwt(await id.login(decomposto, a.senha)).sub).toBe(a.id);
    for (const email of [`invisivel\u200b.${m}@suite.test`, `controle\u0007.${m}@suite.test`]) {
      const erros = esperarProblema(await id.api.post('/usuario', { token: admin, body: { nome: 'Invisível', email, perfil: 'cliente' } }), 400).errors;
      expect(erros.length).toBeGreaterThan(0);
      expect(erros.map((e: { campo: string }) => e.campo)).toEqual(erros.map(() => 'email'));
    }
  });

  test('two simultaneous creations with one e-mail: one 201, one 409 (DESIGN §4)', async () => {
    const m = marca();
    const body = { nome: `Corrida ${m}`, email: `${m}@suite.test`, perfil: 'cliente' };
    const respostas = await Promise.all([1, 2, 3].map(() => id.api.post('/usuario', { token: admin, body })));
    expect(respostas.map((r) => r.status).sort()).toEqual([201, 409, 409]);
    for (const r of respostas.filter((x) => x.status === 409)) esperarProblema(r, 409);
    expect((await buscar(m)).body).toHaveLength(1);
  });

  test.each(['pessoa@empresa.test', 'pessoa@maquina.local', 'pessoa@intranet.corp', 'pessoa@localhost'])(
    'accepts %s: e-mails are validated by syntax only (DESIGN §10)',
    async (modelo) => {
      const email = `${marca()}.${modelo}`;
      const res = await id.api.post('/usuario', { token: admin, body: { nome: 'Interno', email, perfil: 'colaborador' } });
      expect(res.status).toBe(201);
      expect(res.body.email).toBe(email);
    },
  );

  test('stores the e-mail trimmed and in lower case (DESIGN §10)', async () => {
    const m = marca();
    const body = { nome: 'Caixa', email: `  Pessoa.${m.toUpperCase()}@Suite.Test `, perfil: 'cliente' };
    const res = await id.api.post('/usuario', { token: admin, body });
    expect(res.status).toBe(201);
    expect(res.body.email).toBe(`pessoa.${m}@suite.test`);
  });

  test('the password is never returned, in any form (DESIGN §3)', async () => {
    const m = marca();
    const senha = `Segredo-${m}`;
    const body = { nome: `S ${m}`, email: `${m}@suite.test`, perfil: 'cliente', senha };
    const res = await id.api.post('/usuario', { token: admin, body });
    expect(res.status).toBe(201);
    expect(res.body.tem_senha).toBe(true);
    const leituras = [
      res,
      await ler(res.body.id),
      await id.api.get('/usuario', { token: admin, query: { busca: m } }),
      await buscar(m),
      await id.api.post('/auth/login', { body: { email: `${m}@suite.test`, senha } }),
    ];
    for (const l of leituras) {
      expect(l.text).not.toContain(senha);
      expect(l.text).not.toMatch(/senha_hash|scrypt|"senha"/);
    }
  });
});

test('passwords are stored as salted scrypt hashes: one password, two different hashes (DESIGN §3)', async () => {
  const senha = `Mesma-Senha-${marca()}`;
  const [a, b] = [await id.criarUsuario({ senha }), await id.criarUsuario({ senha })];
  const hashes = (await Usuario.findAll({ where: { id: [a.id, b.id] } })).map((u) => u.senha_hash!);
  for (const h of hashes) {
    expect(h).toMatch(/^scrypt\$\d+\$8\$5\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/);
    expect(h).not.toContain(senha);
  }
  expect(hashes[0]).not.toBe(hashes[1]);
  expect(Number(hashes[0].split('$')[1])).toBe(2 ** config().identity.senhaCusto);
});

describe('PATCH /usuario/{id} (DESIGN §10: same fields, all optional)', () => {
  test('changes only the fields sent (partial update)', async () => {
    const m = marca();
    const setor = (await id.api.post('/setor', { token: admin, body: { nome: `Setor ${m}` } })).body;
    const u = await semSenha({ perfil: 'cliente', setor_id: setor.id, imagem: 'https://img.suite.test/a.png' });
    await dormir(5);
    const res = await id.api.patch(`/usuario/${u.id}`, { token: admin, body: { nome: `Renomeada ${m}` } });
    expect(res.status).toBe(200);
    const { nome, atualizado_em, ...resto } = res.body;
    const { nome: _n, atualizado_em: antes, senha: _s, ...restoAntes } = u;
    expect(nome).toBe(`Renomeada ${m}`);
    expect(resto).toEqual(restoAntes);
    expect(Date.parse(atualizado_em)).toBeGreaterThan(Date.parse(antes));
    expect((await ler(u.id)).body).toEqual(res.body);
  });

  test('null clears setor, cargo, funcao and imagem', async () => {
    const m = marca();
    const cargo = (await id.api.post('/cargo', { token: admin, body: { nome: `Cargo ${m}` } })).body;
    const u = await semSenha({ cargo_id: cargo.id, imagem: 'https://img.suite.test/b.png' });
    const res = await id.api.patch(`/usuario/${u.id}`, { token: admin, body: { cargo_id: null, imagem: null } });
    expect(res.body).toMatchObject({ cargo: null, cargo_id: null, imagem: null });
  });

  test('an invalid body answers 400 and changes nothing (DESIGN §4)', async () => {
    const u = await semSenha();
    for (const body of [{ email: 'nao-e-email' }, { perfil: 'dono' }, { nome: '' }, { senha: 'curta' }, { apelido: 'x' }]) {
      esperarProblema(await id.api.patch(`/usuario/${u.id}`, { token: admin, body }), 400);
    }
    const { senha: _s, ...semASenha } = u;
    expect((await ler(u.id)).body).toEqual(semASenha);
  });

  test('an unknown reference answers 422 and changes nothing (DESIGN §4)', async () => {
    const u = await semSenha();
    const body = { nome: 'Nao Muda', funcao_id: '0190a3c4-0000-7000-8000-000000000000' };
    esperarProblema(await id.api.patch(`/usuario/${u.id}`, { token: admin, body }), 422);
    const { senha: _s, ...semASenha } = u;
    expect((await ler(u.id)).body).toEqual(semASenha);
  });

  test("another user's e-mail answers 409 and changes nothing (DESIGN §4)", async () => {
    const [a, b] = [await semSenha(), await semSenha()];
    esperarProblema(await id.api.patch(`/usuario/${a.id}`, { token: admin, body: { email: b.email } }), 409);
    expect((await ler(a.id)).body.email).toBe(a.email);
  });

  test('keeping its own e-mail is accepted', async () => {
    const u = await semSenha();
    const res = await id.api.patch(`/usuario/${u.id}`, { token: admin, body: { email: u.email, nome: 'Mesmo E-mail' } });
    expect(res.status).toBe(200);
  });

  test('an unknown id answers 404, before an unknown reference; an invalid body still answers 400 first (DESIGN §10 order)', async () => {
    const desconhecido = '0190a3c4-0000-7000-8000-000000000000';
    esperarProblema(await id.api.patch(`/usuario/${desconhecido}`, { token: admin, body: { nome: 'X' } }), 404);
    esperarProblema(await id.api.patch(`/usuario/${desconhecido}`, { token: admin, body: { setor_id: desconhecido } }), 404);
    esperarProblema(await id.api.patch(`/usuario/${desconhecido}`, { token: admin, body: { perfil: 'x' } }), 400);
  });

  test('is master only: a non-master gets 403, even on their own record', async () => {
    const { usuario, token } = comum;
    esperarProblema(await id.api.patch(`/usuario/${usuario.id}`, { token, body: { e_master: true } }), 403);
    expect((await ler(usuario.id)).body.e_master).toBe(false);
  });

  test('senha sets a new password: the new one logs in, the old one no longer (DESIGN §3)', async () => {
    const u = await id.criarUsuario();
    const nova = `Nova-${marca()}`;
    const res = await id.api.patch(`/usuario/${u.id}`, { token: admin, body: { senha: nova } });
    expect(res.status).toBe(200);
    expect(res.text).not.toContain(nova);
    esperarProblema(await id.api.post('/auth/login', { body: { email: u.email, senha: u.senha } }), 401);
    expect((await id.api.post('/auth/login', { body: { email: u.email, senha: nova } })).status).toBe(200);
  });

  test('senha gives a password to a user created without one (tem_senha becomes true)', async () => {
    const u = await semSenha();
    const res = await id.api.patch(`/usuario/${u.id}`, { token: admin, body: { senha: 'Primeira-Senha-1' } });
    expect(res.body.tem_senha).toBe(true);
  });
});

describe('DELETE /usuario/{id} (DESIGN §3, §4: logical deletion)', () => {
  test('answers 204 with no body', async () => {
    const u = await semSenha();
    const res = await id.api.del(`/usuario/${u.id}`, { token: admin });
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
  });

  test('the deleted user vanishes from the list, the autocomplete and the filter', async () => {
    const m = marca();
    const fica = await semSenha({ nome: `Fica ${m}` });
    const sai = await semSenha({ nome: `Sai ${m}` });
    const antes = (await id.api.get('/usuario', { token: admin })).body.total;
    await id.api.del(`/usuario/${sai.id}`, { token: admin });
    const lista = await id.api.get('/usuario', { token: admin, query: { busca: m } });
    expect(lista.body.itens.map((u: any) => u.id)).toEqual([fica.id]);
    expect(lista.body.total).toBe(1);
    expect((await id.api.get('/usuario', { token: admin })).body.total).toBe(antes - 1);
    const auto = await id.api.get('/usuario/autocomplete', { token: admin, query: { busca: m } });
    expect(auto.body.itens.map((u: any) => u.id)).toEqual([fica.id]);
    expect((await buscar(m)).body.map((u: any) => u.id)).toEqual([fica.id]);
  });

  test('the deleted user can no longer log in (401)', async () => {
    const u = await id.criarUsuario();
    await id.api.del(`/usuario/${u.id}`, { token: admin });
    esperarProblema(await id.api.post('/auth/login', { body: { email: u.email, senha: u.senha } }), 401);
  });

  test('the e-mail of a deleted user can be used again', async () => {
    const u = await semSenha();
    await id.api.del(`/usuario/${u.id}`, { token: admin });
    const res = await id.api.post('/usuario', { token: admin, body: { nome: 'Sucessora', email: u.email, perfil: 'cliente' } });
    expect(res.status).toBe(201);
    expect(res.body.id).not.toBe(u.id);
    expect((await buscar(u.email)).body.map((x: any) => x.id)).toEqual([res.body.id]);
  });

  test('deleting twice, or an unknown id, answers 404', async () => {
    const u = await semSenha();
    expect((await id.api.del(`/usuario/${u.id}`, { token: admin })).status).toBe(204);
    esperarProblema(await id.api.del(`/usuario/${u.id}`, { token: admin }), 404);
    esperarProblema(await id.api.patch(`/usuario/${u.id}`, { token: admin, body: { nome: 'Zumbi' } }), 404);
  });

  test('a master cannot delete itself (409) and stays', async () => {
    esperarProblema(await id.api.del(`/usuario/${adminId}`, { token: admin }), 409);
    expect((await ler(adminId)).status).toBe(200);
  });

  test('nor take its own master away (409), which would leave the suite without a way in; another master may', async () => {
    esperarProblema(await id.api.patch(`/usuario/${adminId}`, { token: admin, body: { e_master: false } }), 409);
    expect((await ler(adminId)).body.e_master).toBe(true);
    expect((await id.api.get('/usuario', { token: admin })).status).toBe(200);
    const outro = await id.criarUsuarioLogado({ e_master: true });
    expect((await id.api.patch(`/usuario/${outro.usuario.id}`, { token: admin, body: { e_master: false } })).body.e_master).toBe(false);
  });

  test('nor leave, by changing its e-mail, the MASTER_EMAILS that make it master (409); the flag set, it may', async () => {
    const email = `${marca()}@pelo-ambiente.test`;
    const usuario = await id.criarUsuario({ email });
    config().identity.masterEmails.push(email);
    try {
      const pelaLista = await id.login(email, usuario.senha);
      const outroEmail = `${marca()}@fora-da-lista.test`;
      esperarProblema(await id.api.patch(`/usuario/${usuario.id}`, { token: pelaLista, body: { email: outroEmail } }), 409);
      expect((await ler(usuario.id)).body).toMatchObject({ email, e_master: true });
      // clearing a flag it never had leaves it master by the list: allowed
      expect((await id.api.patch(`/usuario/${usuario.id}`, { token: pelaLista, body: { e_master: false } })).body.e_master).toBe(true);
      expect((await id.api.patch(`/usuario/${usuario.id}`, { token: pelaLista, body: { e_master: true, email: outroEmail } })).body).toMatchObject({
        email: outroEmail,
        e_master: true,
      });
    } finally {
      config().identity.masterEmails.splice(config().identity.masterEmails.indexOf(email), 1);
    }
  });

  test('two masters taking the master from each other at once: the second finds itself demoted (403), so one master stays', async () => {
    const a = await id.criarUsuarioLogado({ e_master: true });
    const b = await id.criarUsuarioLogado({ e_master: true });
    // the test's connection stands for B's PATCH of A midway: A's row locked, its master about to go
    const conexao = await novaConexao('identity');
    try {
      await conexao.query('START TRANSACTION');
      await conexao.query('SELECT id FROM usuario WHERE id = ? FOR UPDATE', [a.usuario.id]);
      const deA = id.api.patch(`/usuario/${b.usuario.id}`, { token: a.token, body: { e_master: false } });
      await esperarOutraConexao(conexao, "A's change waiting on its own row", ['%FROM `usuario`%LOCK IN SHARE MODE%']);
      await conexao.query('UPDATE usuario SET master = 0 WHERE id = ?', [a.usuario.id]);
      await conexao.query('COMMIT');
      esperarProblema(await deA, 403);
      expect({ a: (await ler(a.usuario.id)).body.e_master, b: (await ler(b.usuario.id)).body.e_master }).toEqual({ a: false, b: true });
    } finally {
      await conexao.end();
    }
  });

  test('is master only: a non-master gets 403 and the user stays', async () => {
    const alvo = await semSenha();
    esperarProblema(await id.api.del(`/usuario/${alvo.id}`, { token: comum.token }), 403);
    expect((await ler(alvo.id)).status).toBe(200);
  });
});
