import crypto, { createHash } from 'node:crypto';
import { decodeJwt } from 'jose';
import { LIMITE_SEM_REDIS } from '../../api/identity/login';
import * as senhas from '../../api/identity/senhas';
import { hashDeSenha } from '../../api/identity/senhas';
import { ErroDeDominio } from '../../api/shared/errors';
import { config } from '../../config';
import { redis } from '../../lib/redis';
import { Usuario } from '../../models/identity';
import { comMudancaEmCurso } from '../helpers/espera';
import { esperarProblema } from '../helpers/http';
import { identityDe } from '../helpers/identity';
import { iniciarSuite, SuiteDeTeste } from '../helpers/suite';
import { CAMPOS_DO_USUARIO, chavesOrdenadas, RFC3339 } from './apoio';

/** POST /auth/login (DESIGN §3, DESIGN §10): token, lockout after 5 failures, ultimo_login_em. */

let suite: SuiteDeTeste;
let id: ReturnType<typeof identityDe>;
let admin: string;
/** A user with a password for the tests that only log in (password hashes are slow on purpose). */
let pessoa: any;

beforeAll(async () => {
  // no outbox worker: only outbox.test.ts has a hub to publish colaborador events to
  suite = await iniciarSuite(['identity'], { workers: false });
  id = identityDe(suite.url.identity);
  admin = await id.admin();
  pessoa = await id.criarUsuario();
});
afterAll(() => suite.encerrar());

const entrar = (email: string, senha: string) => id.api.post('/auth/login', { body: { email, senha } });
const ler = async (usuarioId: string) => (await id.api.get(`/usuario/${usuarioId}`, { token: admin })).body;
const QUINZE_MINUTOS = 15 * 60_000;

test('answers {access_token, token_type "Bearer", expires_in 28800, usuario} (DESIGN §10: user tokens last 8 hours)', async () => {
  const u = pessoa;
  const res = await entrar(u.email, u.senha);
  expect(res.status).toBe(200);
  expect(chavesOrdenadas(res.body)).toEqual(['access_token', 'expires_in', 'token_type', 'usuario']);
  expect(res.body).toMatchObject({ token_type: 'Bearer', expires_in: 28800 });
  expect(chavesOrdenadas(res.body.usuario)).toEqual(CAMPOS_DO_USUARIO);
  expect(res.body.usuario).toMatchObject({ id: u.id, email: u.email, tem_senha: true, bloqueado_ate: null });
  const claims = decodeJwt(res.body.access_token);
  expect(claims.sub).toBe(u.id);
  expect(claims.exp! - claims.iat!).toBe(28800);
  expect(await ler(u.id)).toEqual(res.body.usuario);
});

test('the e-mail is matched ignoring case and surrounding spaces (DESIGN §10)', async () => {
  const u = pessoa;
  const res = await entrar(`  ${u.email.toUpperCase()} `, u.senha);
  expect(res.status).toBe(200);
  expect(res.body.usuario.id).toBe(u.id);
});

test('a wrong password answers 401 (DESIGN §3)', async () => {
  const u = pessoa;
  const problema = esperarProblema(await entrar(u.email, `${u.senha}-errada`), 401);
  expect(problema.detail).not.toContain(u.senha);
});

test('an unknown e-mail answers 401, the same problem as a wrong password (DESIGN §3: no hint of who exists)', async () => {
  const u = pessoa;
  const desconhecido = esperarProblema(await entrar('ninguem.aqui@suite.test', 'Qualquer-Senha-1'), 401);
  const errada = esperarProblema(await entrar(u.email, 'Qualquer-Senha-1'), 401);
  expect(desconhecido).toEqual(errada);
});

test('a user created without senha cannot log in (401) (DESIGN §10)', async () => {
  const u = await id.criarUsuario({ senha: undefined });
  esperarProblema(await entrar(u.email, 'Alguma-Senha-1'), 401);
});

test('a body without e-mail or senha answers 400 (DESIGN §4)', async () => {
  esperarProblema(await id.api.post('/auth/login', { body: { email: 'a@suite.test' } }), 400);
  esperarProblema(await id.api.post('/auth/login', { body: { senha: 'x' } }), 400);
  esperarProblema(await id.api.post('/auth/login', {}), 400);
});

test('success sets ultimo_login_em (DESIGN §3)', async () => {
  const u = await id.criarUsuario();
  expect(u.ultimo_login_em).toBeNull();
  const antes = Date.now();
  const res = await entrar(u.email, u.senha);
  expect(res.body.usuario.ultimo_login_em).toMatch(RFC3339);
  const lido = await ler(u.id);
  expect(lido.ultimo_login_em).toBe(res.body.usuario.ultimo_login_em);
  expect(Date.parse(lido.ultimo_login_em)).toBeGreaterThanOrEqual(antes - 1000);
  expect(Date.parse(lido.ultimo_login_em)).toBeLessThanOrEqual(Date.now() + 1000);
});

test('a failed login does not touch ultimo_login_em (DESIGN §3)', async () => {
  const u = await id.criarUsuario({ senha: 'Senha-Certa-1' });
  esperarProblema(await entrar(u.email, 'Errada-Errada-1'), 401);
  expect((await ler(u.id)).ultimo_login_em).toBeNull();
});

describe('5 failures in a row lock the login for 15 minutes (DESIGN §3, §10)', () => {
  let u: any;
  let statuses: number[];
  let inicio: number;
  beforeAll(async () => {
    u = await id.criarUsuario();
    inicio = Date.now();
    statuses = [];
    for (let i = 0; i < 5; i++) statuses.push((await entrar(u.email, `Errada-${i}-Senha`)).status);
  });

  test('each of the 5 failures answers 401, the one reaching the limit included', () => {
    expect(statuses).toEqual([401, 401, 401, 401, 401]);
  });

  test('the 5th failure sets bloqueado_ate about 15 minutes ahead, visible in GET /usuario/{id}', async () => {
    const { bloqueado_ate } = await ler(u.id);
    expect(bloqueado_ate).toMatch(RFC3339);
    expect(Date.parse(bloqueado_ate)).toBeGreaterThanOrEqual(inicio + QUINZE_MINUTOS - 1000);
    expect(Date.parse(bloqueado_ate)).toBeLessThanOrEqual(Date.now() + QUINZE_MINUTOS + 1000);
  });

  test('while locked, even the right password answers 423 with Retry-After', async () => {
    const res = await entrar(u.email, u.senha);
    esperarProblema(res, 423);
    const segundos = Number(res.headers.get('retry-after'));
    expect(segundos).toBeGreaterThan(0);
    expect(segundos).toBeLessThanOrEqual(15 * 60);
  });

  test('attempts during the lock answer 423 and do not move bloqueado_ate', async () => {
    const antes = (await ler(u.id)).bloqueado_ate;
    esperarProblema(await entrar(u.email, 'Outra-Errada-1'), 423);
    expect((await ler(u.id)).bloqueado_ate).toBe(antes);
  });

  test('once bloqueado_ate has passed, the right password logs in and clears the lock (DESIGN §3: "until then")', async () => {
    await Usuario.update({ bloqueado_ate: new Date(Date.now() - 1000) }, { where: { id: u.id } });
    const res = await entrar(u.email, u.senha);
    expect(res.status).toBe(200);
    expect(res.body.usuario.bloqueado_ate).toBeNull();
    expect((await ler(u.id)).bloqueado_ate).toBeNull();
  });
});

test('an e-mail no user has is locked alike (no hint of who exists): five 401s, then 423 with Retry-After; a burst counted as a user\'s', async () => {
  const quem = async (email: string) => {
    const statuses = [];
    for (let i = 0; i < 6; i++) {
      const res = await entrar(email, `Errada-${i}-Senha`);
      statuses.push(res.status);
      if (res.status === 423) expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(14 * 60);
    }
    return statuses;
  };
  const existe = await id.criarUsuario();
  const ninguem = `ninguem-${Date.now()}@exemplo.test`;
  expect(await quem(ninguem)).toEqual(await quem(existe.email));
  expect(await quem(ninguem)).toEqual([423, 423, 423, 423, 423, 423]);
  // the same e-mail written otherwise is the same e-mail
  esperarProblema(await entrar(`  ${ninguem.toUpperCase()} `, 'Outra-Errada-1'), 423);
  const outro = `rajada-${Date.now()}@exemplo.test`;
  const rajada = await Promise.all(Array.from({ length: 8 }, (_, i) => entrar(outro, `Rajada-${i}-Errada`)));
  expect(rajada.map((r) => r.status).sort()).toEqual([401, 401, 401, 401, 401, 423, 423, 423]);
});

test("Redis out of reach, an e-mail no user has is still locked as a user's is (counted in the process): the sixth answer tells no one who has an account", async () => {
  const quem = async (email: string) => {
    const statuses = [];
    for (let i = 0; i < 6; i++) statuses.push((await entrar(email, `Errada-${i}-Senha`)).status);
    return statuses;
  };
  const existe = await id.criarUsuario();
  const ninguem = `sem-redis-${Date.now()}@exemplo.test`;
  const foraDoAr = jest.spyOn(redis('produtor'), 'eval').mockRejectedValue(new Error('Connection is closed.'));
  try {
    expect(await quem(ninguem)).toEqual([401, 401, 401, 401, 401, 423]);
    expect(await quem(existe.email)).toEqual([401, 401, 401, 401, 401, 423]);
    // the lock holds for the same e-mail written otherwise, while Redis stays away, and answers
    // before the (slow) password check, as a locked user's does: no time to tell them apart
    const verificacao = jest.spyOn(senhas, 'senhaConfere');
    try {
      esperarProblema(await entrar(`  ${ninguem.toUpperCase()} `, 'Outra-Errada-1'), 423);
      esperarProblema(await entrar(existe.email, 'Outra-Errada-1'), 423);
      expect(verificacao).not.toHaveBeenCalled();
    } finally {
      verificacao.mockRestore();
    }
    expect(foraDoAr).toHaveBeenCalled();

    // full, a flood of other e-mails does not lift the lock: they go uncounted instead
    const limite = LIMITE_SEM_REDIS.emails;
    LIMITE_SEM_REDIS.emails = 1;
    try {
      for (let i = 0; i < 5; i++) esperarProblema(await entrar(`enchente-${i}-${Date.now()}@exemplo.test`, 'Errada-Senha-1'), 401);
      esperarProblema(await entrar(ninguem, 'Outra-Errada-2'), 423);
    } finally {
      LIMITE_SEM_REDIS.emails = limite;
    }
  } finally {
    foraDoAr.mockRestore();
  }
  // Redis back, a lock set without it holds to its end, as a user's row does
  esperarProblema(await entrar(ninguem, 'Outra-Errada-3'), 423);
});

test('every 423 of a lock names the same instant, the locking attempt\'s start plus 15 minutes, for a user and for an e-mail no user has alike', async () => {
  const fimDoBloqueio = async (email: string) => {
    let inicioDaQuinta = 0;
    for (let i = 0; i < 5; i++) {
      inicioDaQuinta = Date.now();
      esperarProblema(await entrar(email, `Errada-${i}-Senha`), 401);
    }
    const fimDaQuinta = Date.now();
    const instantes = new Set<string>();
    for (let i = 0; i < 3; i++) instantes.add(/até (\S+)\.$/.exec(esperarProblema(await entrar(email, 'Outra-Errada-1'), 423).detail!)![1]);
    expect(instantes.size).toBe(1);
    const [fim] = [...instantes].map((t) => new Date(t).getTime());
    expect(fim).toBeGreaterThanOrEqual(inicioDaQuinta + 15 * 60_000);
    expect(fim).toBeLessThanOrEqual(fimDaQuinta + 15 * 60_000);
    return [...instantes][0];
  };
  const u = await id.criarUsuario();
  const doUsuario = await fimDoBloqueio(u.email);
  expect(doUsuario).toBe((await ler(u.id)).bloqueado_ate);
  // an unknown e-mail's lock keeps its end as the row does, not a time left that each call would
  // add to its own clock (a 423 moving by a millisecond from call to call told who had no account)
  const ninguem = `ninguem-instante-${Date.now()}@exemplo.test`;
  const doDesconhecido = await fimDoBloqueio(ninguem);
  const chave = `${config().queuePrefix}:identity:login-desconhecido:${createHash('sha256').update(ninguem).digest('hex')}:bloqueio`;
  expect(new Date(Number(await redis('produtor').get(chave))).toISOString()).toBe(doDesconhecido);
});

test("an unknown e-mail's lock stored by an earlier version (no end kept, only its time left) still locks, until its time left ends", async () => {
  const ninguem = `ninguem-antigo-${Date.now()}@exemplo.test`;
  const chave = `${config().queuePrefix}:identity:login-desconhecido:${createHash('sha256').update(ninguem).digest('hex')}:bloqueio`;
  await redis('produtor').set(chave, '1', 'PX', 60_000);
  const antes = Date.now();
  const res = await entrar(ninguem, 'Errada-1-Senha');
  const fim = new Date(/até (\S+)\.$/.exec(esperarProblema(res, 423).detail!)![1]).getTime();
  expect(fim).toBeGreaterThan(antes + 55_000);
  expect(fim).toBeLessThanOrEqual(Date.now() + 60_000);
  await redis('produtor').pexpire(chave, 1);
  await new Promise((r) => setTimeout(r, 20));
  esperarProblema(await entrar(ninguem, 'Errada-2-Senha'), 401);
});

test("a count of failures lasts a day from its first, a user's as an unknown e-mail's: four failures, a day, and a fifth counts as the first of a new count", async () => {
  const u = await id.criarUsuario();
  for (let i = 0; i < 4; i++) esperarProblema(await entrar(u.email, `Errada-${i}-Senha`), 401);
  // the first failure a day old (less a minute, then more by a second)
  const haUmDia = (ms: number) => Usuario.update({ primeira_falha_de_login_em: new Date(Date.now() - ms) }, { where: { id: u.id } });
  await haUmDia(24 * 3600_000 - 60_000);
  esperarProblema(await entrar(u.email, 'Errada-5-Senha'), 401);
  esperarProblema(await entrar(u.email, u.senha), 423);
  await Usuario.update({ bloqueado_ate: null, falhas_de_login: 0, primeira_falha_de_login_em: null }, { where: { id: u.id } });

  for (let i = 0; i < 4; i++) esperarProblema(await entrar(u.email, `Errada-${i}-Senha`), 401);
  await haUmDia(24 * 3600_000 + 1000);
  esperarProblema(await entrar(u.email, 'Errada-5-Senha'), 401);
  expect((await Usuario.findByPk(u.id))!.falhas_de_login).toBe(1);
  for (let i = 0; i < 3; i++) esperarProblema(await entrar(u.email, `Outra-${i}-Senha`), 401);
  expect((await entrar(u.email, u.senha)).status).toBe(200);
  expect((await Usuario.findByPk(u.id))!).toMatchObject({ falhas_de_login: 0, primeira_falha_de_login_em: null, bloqueado_ate: null });
});

test('a count an earlier version kept (no first failure) starts over at the next failure', async () => {
  const u = await id.criarUsuario();
  await Usuario.update({ falhas_de_login: 4, primeira_falha_de_login_em: null }, { where: { id: u.id } });
  esperarProblema(await entrar(u.email, 'Errada-1-Senha'), 401);
  expect((await Usuario.findByPk(u.id))!.falhas_de_login).toBe(1);
});

test('a master setting a new password lifts the lock at once (anyone may lock a login: it is public)', async () => {
  const u = await id.criarUsuario();
  for (let i = 0; i < 5; i++) esperarProblema(await entrar(u.email, `Errada-${i}-Senha`), 401);
  esperarProblema(await entrar(u.email, u.senha), 423);
  const mudou = await id.api.patch(`/usuario/${u.id}`, { token: admin, body: { senha: 'Senha-Nova-Depois-1' } });
  expect(mudou.status).toBe(200);
  expect(mudou.body.bloqueado_ate).toBeNull();
  expect((await entrar(u.email, 'Senha-Nova-Depois-1')).status).toBe(200);
  // and the count starts afresh: four failures do not lock again
  for (let i = 0; i < 4; i++) esperarProblema(await entrar(u.email, `Errada-${i}-Senha`), 401);
  expect((await ler(u.id)).bloqueado_ate).toBeNull();
});

test('token answers, and their refusals, are kept by no cache (RFC 6749 §5.1): Cache-Control no-store', async () => {
  const ok = await entrar(pessoa.email, pessoa.senha);
  expect(ok.status).toBe(200);
  expect(ok.headers.get('cache-control')).toBe('no-store');
  expect((await entrar(pessoa.email, 'Errada-Errada-9')).headers.get('cache-control')).toBe('no-store');
  const app = await id.api.post('/auth/token', { body: { client_id: '00000000-0000-7000-8000-000000000000', client_secret: 'x'.repeat(43) } });
  expect(app.status).toBe(401);
  expect(app.headers.get('cache-control')).toBe('no-store');
});

test('after a lock ends, the count starts again: one failure does not lock (DESIGN §3)', async () => {
  const u = await id.criarUsuario({ senha: undefined });
  await Usuario.update({ bloqueado_ate: new Date(Date.now() - 1000), falhas_de_login: 4 }, { where: { id: u.id } });
  esperarProblema(await entrar(u.email, 'Errada-Depois-1'), 401);
  expect((await ler(u.id)).bloqueado_ate).toBeNull();
  expect((await Usuario.findByPk(u.id))!.falhas_de_login).toBe(1);
});

test('a success resets the failure count: 4 failures, a success, then 4 failures do not lock (DESIGN §3: "in a row")', async () => {
  const u = await id.criarUsuario();
  for (let i = 0; i < 4; i++) esperarProblema(await entrar(u.email, `Errada-${i}-Senha`), 401);
  expect((await entrar(u.email, u.senha)).status).toBe(200);
  for (let i = 0; i < 4; i++) esperarProblema(await entrar(u.email, `Errada-${i}-Senha`), 401);
  expect((await ler(u.id)).bloqueado_ate).toBeNull();
});

test('simultaneous failures are all counted: of a burst of 8 wrong passwords 5 answer 401 and lock, the other 3 meet the lock: 423 (DESIGN §3)', async () => {
  const u = await id.criarUsuario();
  const rajada = await Promise.all(Array.from({ length: 8 }, (_, i) => entrar(u.email, `Rajada-${i}-Errada`)));
  expect(rajada.map((r) => r.status).sort()).toEqual([401, 401, 401, 401, 401, 423, 423, 423]);
  expect((await ler(u.id)).bloqueado_ate).toMatch(RFC3339);
  esperarProblema(await entrar(u.email, u.senha), 423);
});

/** A login waiting on the user's row: locking it, or writing it (a failure counted) */
const NO_USUARIO = ['%FROM `usuario`%FOR UPDATE%', 'UPDATE `usuario`%'];

test('the right password whose check ends after another attempt set the lock answers 423, and does not log in (DESIGN §3)', async () => {
  const u = await id.criarUsuario();
  // the test's connection stands for the attempt that locks: it holds the row while this one checks
  const res = await comMudancaEmCurso(
    'identity',
    'usuario',
    u.id,
    NO_USUARIO,
    (c) => c.query('UPDATE usuario SET bloqueado_ate = NOW(3) + INTERVAL 15 MINUTE, falhas_de_login = 0 WHERE id = ?', [u.id]),
    () => entrar(u.email, u.senha),
  );
  esperarProblema(res, 423);
  expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(890);
  expect((await ler(u.id)).ultimo_login_em).toBeNull();
});

test('the token carries the user as stored when the login is decided: a master demoted, or made a cliente, while the password was checked gets neither in the token', async () => {
  const u = await id.criarUsuario();
  await Usuario.update({ master: true }, { where: { id: u.id } });
  const res = await comMudancaEmCurso(
    'identity',
    'usuario',
    u.id,
    NO_USUARIO,
    (c) => c.query("UPDATE usuario SET master = 0, perfil = 'cliente', nome = 'Nome Novo' WHERE id = ?", [u.id]),
    () => entrar(u.email, u.senha),
  );
  expect(res.status).toBe(200);
  expect(decodeJwt(res.body.access_token)).toMatchObject({ master: false, perfil: 'cliente', nome: 'Nome Novo' });
  expect(res.body.usuario).toMatchObject({ perfil: 'cliente', nome: 'Nome Novo' });
});

test('a password replaced while the login checked the old one answers 401: no token on the old password that the change would not cut off', async () => {
  const u = await id.criarUsuario();
  const nova = 'Senha-Trocada-Durante-1';
  // the test's connection stands for the password change: it holds the row while the login checks
  const hash = await hashDeSenha(nova);
  const antiga = await comMudancaEmCurso(
    'identity',
    'usuario',
    u.id,
    NO_USUARIO,
    // as a password change writes it (usuarios.ts): the new hash and the moment tokens count from
    (c) => c.query('UPDATE usuario SET senha_hash = ?, tokens_validos_desde = NOW(3) WHERE id = ?', [hash, u.id]),
    () => entrar(u.email, u.senha),
  );
  esperarProblema(antiga, 401);
  expect((await ler(u.id)).ultimo_login_em).toBeNull();
  expect((await entrar(u.email, nova)).status).toBe(200);
});

test('after IDENTITY_SENHA_CUSTO is raised, a successful login hashes the password again at the new cost, and it still logs in; a failed one changes nothing (DESIGN §3)', async () => {
  const u = await id.criarUsuario();
  const hash = async () => (await Usuario.findByPk(u.id))!.senha_hash!;
  const custoDe = (h: string) => Number(h.split('$')[1]);
  const antes = await hash();
  expect(custoDe(antes)).toBe(2 ** config().identity.senhaCusto);
  const custo = config().identity.senhaCusto;
  config().identity.senhaCusto = custo + 1;
  try {
    esperarProblema(await entrar(u.email, 'Errada-Errada-1'), 401);
    expect(await hash()).toBe(antes);
    const res = await entrar(u.email, u.senha);
    expect(res.status).toBe(200);
    expect(chavesOrdenadas(res.body)).toEqual(['access_token', 'expires_in', 'token_type', 'usuario']);
    const depois = await hash();
    expect(depois).toMatch(/^scrypt\$\d+\$8\$5\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/);
    expect(custoDe(depois)).toBe(2 ** (custo + 1));
    expect((await entrar(u.email, u.senha)).status).toBe(200);
    // made once: a login at the cost of the day leaves the hash as it is
    expect(await hash()).toBe(depois);
    esperarProblema(await entrar(u.email, 'Errada-Errada-1'), 401);
  } finally {
    config().identity.senhaCusto = custo;
  }
});

test('after IDENTITY_SENHA_CUSTO is raised, a proven password whose new hash finds every turn taken (429 for a check) still logs in: the hash is made again by a later login', async () => {
  const u = await id.criarUsuario();
  const hash = async () => (await Usuario.findByPk(u.id))!.senha_hash!;
  const antes = await hash();
  const custo = config().identity.senhaCusto;
  config().identity.senhaCusto = custo + 1;
  // as the hashes' limit refuses a hash when its wait is full
  const semVez = jest
    .spyOn(senhas, 'hashDeSenha')
    .mockRejectedValueOnce(new ErroDeDominio('limite_excedido', 'Muitas senhas sendo verificadas agora; tente de novo em instantes.', undefined, { retryAfterSegundos: 1 }));
  try {
    expect((await entrar(u.email, u.senha)).status).toBe(200);
    expect(semVez).toHaveBeenCalledTimes(1);
    expect(await hash()).toBe(antes);
    expect((await Usuario.findByPk(u.id))!.falhas_de_login).toBe(0);
    expect((await entrar(u.email, u.senha)).status).toBe(200);
    expect(Number((await hash()).split('$')[1])).toBe(2 ** (custo + 1));
  } finally {
    semVez.mockRestore();
    config().identity.senhaCusto = custo;
  }
});

test("after IDENTITY_SENHA_CUSTO is raised, a wrong password for an older hash costs what an unknown e-mail's check does: the e-mails in use are not told by timing", async () => {
  const u = await id.criarUsuario();
  const custo = config().identity.senhaCusto;
  // scrypt's time grows with N: the work of a check is the sum of the N it derived with
  const trabalho: number[] = [];
  const real = crypto.scrypt;
  const espiao = jest.spyOn(crypto, 'scrypt').mockImplementation(((...args: Parameters<typeof crypto.scrypt>) => {
    trabalho.push((args[3] as crypto.ScryptOptions).N!);
    return (real as (...a: unknown[]) => void)(...args);
  }) as typeof crypto.scrypt);
  const custoDaVerificacao = async (email: string) => {
    trabalho.length = 0;
    esperarProblema(await entrar(email, 'Errada-Errada-1'), 401);
    return trabalho.reduce((soma, n) => soma + n, 0);
  };
  try {
    // at the cost of the day, a wrong password is one check at it
    expect(await custoDaVerificacao(u.email)).toBe(2 ** custo);
    config().identity.senhaCusto = custo + 2;
    const desconhecido = await custoDaVerificacao(`ninguem-${Date.now()}@exemplo.com.br`);
    expect(desconhecido).toBe(2 ** (custo + 2));
    expect(await custoDaVerificacao(u.email)).toBe(desconhecido);
  } finally {
    config().identity.senhaCusto = custo;
    espiao.mockRestore();
  }
});

test('after IDENTITY_SENHA_CUSTO is raised, right-password logins at the same moment all get in: the hash one of them made again is the same password, no failure counted', async () => {
  const u = await id.criarUsuario();
  const custo = config().identity.senhaCusto;
  config().identity.senhaCusto = custo + 1;
  try {
    const respostas = await Promise.all(Array.from({ length: 6 }, () => entrar(u.email, u.senha)));
    expect(respostas.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 200]);
    const depois = (await Usuario.findByPk(u.id))!;
    expect(Number(depois.senha_hash!.split('$')[1])).toBe(2 ** (custo + 1));
    expect({ falhas: depois.falhas_de_login, bloqueado_ate: depois.bloqueado_ate }).toEqual({ falhas: 0, bloqueado_ate: null });
    expect((await entrar(u.email, u.senha)).status).toBe(200);
  } finally {
    config().identity.senhaCusto = custo;
  }
});
