import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { config, resetConfig } from '../../config';
import { credenciaisDe, gravarCredenciaisLocais, idDoAplicativoDe } from '../../lib/credenciais';

/**
 * Outside LOCALHOST a suite application's credentials come from the environment only. A service
 * that merely recognises another's application (the hub creating identity's `colaborador.*` types,
 * DESIGN §10 Hub) needs its id alone, not its secret.
 */
const ambiente = { ...process.env };
afterEach(() => {
  process.env = { ...ambiente };
  resetConfig();
});

function producao(extra: Record<string, string>) {
  for (const s of ['IDENTITY', 'LEADS', 'HUB', 'INTRANET', 'SALES', 'AI', 'TRACING', 'FILES']) process.env[`${s}_URL`] = `https://${s.toLowerCase()}.example.com`;
  Object.assign(process.env, { APP_ENV: 'PRODUCTION', IDENTITY_CHAVE_PRIVADA_ARQUIVO: '/run/secrets/chave.pem' });
  delete process.env.IDENTITY_CLIENT_ID;
  delete process.env.IDENTITY_CLIENT_SECRET;
  Object.assign(process.env, extra);
  resetConfig();
  expect(config().ambiente).toBe('PRODUCTION');
}

test("the id alone is enough to recognise an application; the credentials need the secret too", async () => {
  producao({ IDENTITY_CLIENT_ID: 'app-identity' });
  expect(await idDoAplicativoDe('identity')).toBe('app-identity');
  expect(await credenciaisDe('identity')).toBeUndefined();

  producao({ IDENTITY_CLIENT_ID: 'app-identity', IDENTITY_CLIENT_SECRET: 'segredo' });
  expect(await credenciaisDe('identity')).toEqual({ clientId: 'app-identity', clientSecret: 'segredo', configuracao: 'IDENTITY_CLIENT_ID/IDENTITY_CLIENT_SECRET' });
});

test('the file LOCALHOST generates is read there, and never outside it', async () => {
  const pasta = await mkdtemp(path.join(tmpdir(), 'credenciais-'));
  try {
    process.env.DATA_DIR = pasta;
    delete process.env.IDENTITY_CLIENT_ID;
    resetConfig();
    await gravarCredenciaisLocais({ identity: { clientId: 'do-arquivo', clientSecret: 's' } });
    expect(await idDoAplicativoDe('identity')).toBe('do-arquivo');

    producao({ DATA_DIR: pasta });
    expect(await idDoAplicativoDe('identity')).toBeUndefined();
    expect(await credenciaisDe('identity')).toBeUndefined();
  } finally {
    await rm(pasta, { recursive: true, force: true });
  }
});
