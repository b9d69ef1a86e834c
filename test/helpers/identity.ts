import { randomBytes } from 'node:crypto';
import { cliente } from './http';

export const ADMIN = { email: 'admin@suite.test', senha: 'Admin-Senha-Forte-1' };

/** Helpers over the identity API, as any client would use it. */
export function identityDe(base: string) {
  const api = cliente(base);
  let tokenDoAdmin: string | undefined;

  async function login(email: string, senha: string): Promise<string> {
    const res = await api.post('/auth/login', { body: { email, senha } });
    if (res.status !== 200) throw new Error(`login of ${email}: ${res.status} ${res.text}`);
    return res.body.access_token;
  }

  async function admin(): Promise<string> {
    return (tokenDoAdmin ??= await login(ADMIN.email, ADMIN.senha));
  }

  async function criarUsuario(campos: Record<string, unknown> = {}) {
    const sufixo = randomBytes(4).toString('hex');
    const senha = `Senha-${sufixo}-Forte`;
    const body = { nome: `Pessoa ${sufixo}`, email: `p${sufixo}@suite.test`, perfil: 'colaborador', senha, ...campos };
    const res = await api.post('/usuario', { token: await admin(), body });
    if (res.status !== 201) throw new Error(`create user: ${res.status} ${res.text}`);
    return { ...res.body, senha: body.senha as string };
  }

  async function criarUsuarioLogado(campos: Record<string, unknown> = {}) {
    const u = await criarUsuario(campos);
    return { usuario: u, token: await login(u.email, u.senha) };
  }

  async function criarAplicativo(nome = `App ${randomBytes(3).toString('hex')}`) {
    const res = await api.post('/aplicativo', { token: await admin(), body: { nome } });
    if (res.status !== 201) throw new Error(`create app: ${res.status} ${res.text}`);
    const t = await api.post('/auth/token', { body: { client_id: res.body.client_id, client_secret: res.body.client_secret } });
    return { ...res.body, token: t.body.access_token as string };
  }

  return { api, login, admin, criarUsuario, criarUsuarioLogado, criarAplicativo };
}
