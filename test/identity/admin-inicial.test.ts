import { prepararIdentity } from '../../api/identity/preparar';
import * as configuracao from '../../config';
import { Usuario } from '../../models/identity';
import { cliente } from '../helpers/http';
import { iniciarSuite, SuiteDeTeste } from '../helpers/suite';

/**
 * DESIGN §2: when the identity database has no user, a master is created at start; without
 * IDENTITY_ADMIN_SENHA its password is random and printed once, the only place it can be read.
 */

let suite: SuiteDeTeste | undefined;
afterAll(() => suite?.encerrar());

/** What `trabalho` writes to the standard output, kept out of the test's own. */
async function saidaDe(trabalho: () => Promise<void>): Promise<string> {
  const escrito: string[] = [];
  const espiao = jest.spyOn(process.stdout, 'write').mockImplementation((texto: string | Uint8Array) => {
    escrito.push(String(texto));
    return true;
  });
  try {
    await trabalho();
  } finally {
    espiao.mockRestore();
  }
  return escrito.join('');
}

test('without IDENTITY_ADMIN_SENHA the first master gets a random password, printed once, that logs in', async () => {
  const primeira = await saidaDe(async () => {
    suite = await iniciarSuite(['identity'], { workers: false, env: { IDENTITY_ADMIN_SENHA: '' } });
  });
  const [, email, senha] = /Usuário master inicial: (\S+)\nSenha \(mostrada só agora\): (\S+)/.exec(primeira) ?? [];
  expect(email).toBe('admin@suite.test');
  expect(senha).toMatch(/^[A-Za-z0-9_-]{16}$/);

  const api = cliente(suite!.url.identity);
  const login = await api.post('/auth/login', { body: { email, senha } });
  expect(login.status).toBe(200);
  expect(login.body.usuario).toMatchObject({ email, e_master: true });
  expect((await api.get('/usuario', { token: login.body.access_token })).status).toBe(200);
  // the default of the tests' environment is not what was set
  expect((await api.post('/auth/login', { body: { email, senha: 'Admin-Senha-Forte-1' } })).status).toBe(401);

  // a later start finds a user: no master is made, no password is printed again
  const segunda = await saidaDe(() => prepararIdentity());
  expect(segunda).not.toContain('Senha');
  expect((await api.post('/auth/login', { body: { email, senha } })).status).toBe(200);
});

test('outside LOCALHOST, a first start without IDENTITY_ADMIN_SENHA refuses, naming it, and prints no password: the standard output is the logs there', async () => {
  // the same suite, its users gone: a first start again, as on a new host
  await Usuario.destroy({ where: {}, force: true });
  const real = configuracao.config();
  const ambiente = jest.spyOn(configuracao, 'config').mockReturnValue({ ...real, ambiente: 'SANDBOX' });
  let saida = '';
  try {
    saida = await saidaDe(() => expect(prepararIdentity()).rejects.toThrow(/IDENTITY_ADMIN_SENHA/));
  } finally {
    ambiente.mockRestore();
  }
  expect(saida).not.toContain('Senha');
  expect(await Usuario.count({ paranoid: false })).toBe(0);
});
