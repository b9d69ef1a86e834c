import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { config, resetConfig } from '../../config';
import { credenciaisDe, gravarCredenciaisLocais, idDoAplicativoDe, lerCredenciaisLocais } from '../../lib/credenciais';

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
  Object.assign(process.env, { APP_ENV: 'PRODUCTION', IDENTITY_CHAVE_PRIVADA_ARQUIVO: '/run/secrets/chave.pem', IDENTITY_SENHA_CUSTO: '14' });
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

describe('the LOCALHOST credentials file', () => {
  let pasta: string;
  beforeEach(async () => {
    pasta = await mkdtemp(path.join(tmpdir(), 'credenciais-'));
    process.env.DATA_DIR = pasta;
    delete process.env.IDENTITY_CLIENT_ID;
    delete process.env.IDENTITY_CLIENT_SECRET;
    resetConfig();
  });
  afterEach(() => rm(pasta, { recursive: true, force: true }));

  test('rewritten while the services read it, every reading finds it whole (identity rewrites it at each start)', async () => {
    const credenciais = { identity: { clientId: 'app-identity', clientSecret: 'x'.repeat(200_000) } };
    await gravarCredenciaisLocais(credenciais);
    let escrevendo = true;
    const escritas = (async () => {
      for (let i = 0; i < 40; i++) await gravarCredenciaisLocais(credenciais);
      escrevendo = false;
    })();
    let leituras = 0;
    while (escrevendo) {
      expect((await credenciaisDe('identity'))?.clientId).toBe('app-identity');
      leituras++;
    }
    await escritas;
    expect(leituras).toBeGreaterThan(0);
    expect(await readdir(pasta)).toHaveLength(1);
  });

  test('a copy left half-written by a process killed before its rename is removed at the next write; other files stay', async () => {
    await gravarCredenciaisLocais({ identity: { clientId: 'app-identity', clientSecret: 's' } });
    const [nome] = await readdir(pasta);
    await writeFile(path.join(pasta, `${nome}.0123456789ab`), '{"identity": {"clientSecret": "segredo-velho"', { mode: 0o600 });
    await writeFile(path.join(pasta, 'outro.json'), '{}');
    await gravarCredenciaisLocais({ identity: { clientId: 'app-identity', clientSecret: 't' } });
    expect((await readdir(pasta)).sort()).toEqual([nome, 'outro.json'].sort());
  });

  test('no file is no credentials; a file that cannot be parsed is an error naming it, not "none"', async () => {
    expect(await lerCredenciaisLocais()).toEqual({});
    await gravarCredenciaisLocais({ identity: { clientId: 'app-identity', clientSecret: 's' } });
    const [nome] = await readdir(pasta);
    await writeFile(path.join(pasta, nome), '{"identity": {"clientId"');
    await expect(lerCredenciaisLocais()).rejects.toThrow(`${path.join(pasta, nome)} is not JSON`);
    await expect(credenciaisDe('identity')).rejects.toThrow('is not JSON');
  });
});
