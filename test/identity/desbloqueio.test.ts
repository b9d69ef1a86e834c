import { createHash } from 'node:crypto';
import { desbloquearLogin, DesbloqueioRecusado } from '../../api/identity/login';
import { Op } from 'sequelize';
import { config } from '../../config';
import { EventoPendente } from '../../models/identity';
import { redis } from '../../lib/redis';
import { esperarProblema } from '../helpers/http';
import { identityDe } from '../helpers/identity';
import { ateOFim, comandoDaSuite, portaLivre } from '../helpers/processo';
import { iniciarSuite, SuiteDeTeste } from '../helpers/suite';

/**
 * `suite unlock-login <email>` (README): anyone may lock a login, a master's too (five wrong
 * passwords, DESIGN §3); the operator's way back in when no master is left to set a new password.
 */

let suite: SuiteDeTeste;
let id: ReturnType<typeof identityDe>;
let admin: string;

beforeAll(async () => {
  suite = await iniciarSuite(['identity'], { workers: false });
  id = identityDe(suite.url.identity);
  admin = await id.admin();
});
afterAll(() => suite.encerrar());

const entrar = (email: string, senha: string) => id.api.post('/auth/login', { body: { email, senha } });

async function trancar(email: string) {
  for (let i = 0; i < 5; i++) esperarProblema(await entrar(email, `Errada-${i}-Senha`), 401);
  esperarProblema(await entrar(email, 'Outra-Errada-1'), 423);
}

test("a locked user's login is unlocked and its count restarts: the right password logs in, four failures do not lock again", async () => {
  const u = await id.criarUsuario();
  await trancar(u.email);
  // the address as an operator may type it: spaces, capitals
  expect(await desbloquearLogin(`  ${u.email.toUpperCase()} `)).toEqual({ email: u.email, usuario_id: u.id, estava_bloqueado: true });
  expect((await entrar(u.email, u.senha)).status).toBe(200);
  for (let i = 0; i < 4; i++) esperarProblema(await entrar(u.email, `Errada-${i}-Senha`), 401);
  expect((await id.api.get(`/usuario/${u.id}`, { token: admin })).body.bloqueado_ate).toBeNull();
  // a login not locked is said so, and stays as it is
  expect(await desbloquearLogin(u.email)).toEqual({ email: u.email, usuario_id: u.id, estava_bloqueado: false });
});

test("the lock lifted is a change collaborators see: colaborador.atualizado, bloqueado_ate null, stored with it; nothing lifted, no event", async () => {
  const u = await id.criarUsuario({ perfil: 'colaborador' });
  await trancar(u.email);
  const antes = Number((await EventoPendente.max('sequencia')) ?? 0);
  await desbloquearLogin(u.email);
  const eventos = await EventoPendente.findAll({ where: { sequencia: { [Op.gt]: antes } } });
  expect(eventos.filter((e) => e.dados.id === u.id).map((e) => [e.tipo, e.dados.bloqueado_ate])).toEqual([['colaborador.atualizado', null]]);
  // a second unlock lifts nothing
  const depois = Number(await EventoPendente.max('sequencia'));
  await desbloquearLogin(u.email);
  expect((await EventoPendente.findAll({ where: { sequencia: { [Op.gt]: depois } } })).filter((e) => e.dados.id === u.id)).toEqual([]);
});

test('four failures before the unlock are forgotten: after it, a fifth does not lock', async () => {
  const u = await id.criarUsuario();
  for (let i = 0; i < 4; i++) esperarProblema(await entrar(u.email, `Errada-${i}-Senha`), 401);
  await desbloquearLogin(u.email);
  esperarProblema(await entrar(u.email, 'Errada-5-Senha'), 401);
  expect((await entrar(u.email, u.senha)).status).toBe(200);
});

test("unlocking a user also forgets the count its address had before it was a user's (it would be back were the user removed)", async () => {
  const email = `antes-de-usuario-${Date.now()}@exemplo.test`;
  await trancar(email);
  const u = await id.criarUsuario({ email });
  const chaves = ['falhas', 'bloqueio'].map((k) => `${config().queuePrefix}:identity:login-desconhecido:${createHash('sha256').update(email).digest('hex')}:${k}`);
  expect(await redis('produtor').exists(...chaves)).toBe(1);
  expect(await desbloquearLogin(email)).toEqual({ email, usuario_id: u.id, estava_bloqueado: false });
  expect(await redis('produtor').exists(...chaves)).toBe(0);
});

test('an e-mail no user has is unlocked alike', async () => {
  const ninguem = `ninguem-desbloqueio-${Date.now()}@exemplo.test`;
  await trancar(ninguem);
  expect(await desbloquearLogin(ninguem)).toEqual({ email: ninguem, usuario_id: null, estava_bloqueado: true });
  esperarProblema(await entrar(ninguem, 'Errada-6-Senha'), 401);
});

test('something that is no e-mail address is refused, nothing changed', async () => {
  await expect(desbloquearLogin('admin')).rejects.toThrow(DesbloqueioRecusado);
  await expect(desbloquearLogin('')).rejects.toThrow(/not an e-mail address/);
});

test('as an operator runs it: the result on stdout as JSON, exit 0, Redis out of reach or not; a refusal said on stderr, exit non-zero', async () => {
  const u = await id.criarUsuario();
  await trancar(u.email);
  const feito = await ateOFim(comandoDaSuite(['unlock-login', u.email]));
  expect(feito.codigo).toBe(0);
  expect(JSON.parse(feito.saida)).toEqual({ email: u.email, usuario_id: u.id, estava_bloqueado: true });
  expect((await entrar(u.email, u.senha)).status).toBe(200);
  // Redis out of reach: a user's lock is in its row, and is lifted all the same
  const outro = await id.criarUsuario();
  await trancar(outro.email);
  const semRedis = await ateOFim(comandoDaSuite(['unlock-login', outro.email], { ...process.env, REDIS_URL: `redis://127.0.0.1:${await portaLivre()}` }));
  expect(semRedis.codigo).toBe(0);
  expect(JSON.parse(semRedis.saida)).toEqual({ email: outro.email, usuario_id: outro.id, estava_bloqueado: true });
  expect((await entrar(outro.email, outro.senha)).status).toBe(200);
  const recusado = await ateOFim(comandoDaSuite(['unlock-login', 'nao-e-email']));
  expect(recusado.codigo).not.toBe(0);
  expect(recusado.saida).toBe('');
  expect(recusado.erros).toMatch(/^unlock-login refused: not an e-mail address/m);
}, 60_000);
