import { config, loadConfig, resetConfig } from '../../config';
import { carregarSegredo } from '../../api/files/url-assinada';

/** FILES_* variables (DESIGN §2: validated at start; a bad value names the variable). */

const PRODUCAO = {
  APP_ENV: 'PRODUCTION',
  IDENTITY_CHAVE_PRIVADA_ARQUIVO: '/run/secrets/chave.pem',
  ...Object.fromEntries(
    ['IDENTITY', 'LEADS', 'HUB', 'INTRANET', 'SALES', 'AI', 'TRACING', 'FILES'].map((s) => [`${s}_URL`, `https://${s.toLowerCase()}.example.com`]),
  ),
};

afterAll(() => resetConfig());

test('defaults: 25 MiB limit, files kept under <DATA_DIR>/arquivos, no signing key given', () => {
  const c = loadConfig({ DATA_DIR: '/var/lib/suite' });
  expect(c.files).toEqual({ tamanhoMaximoBytes: 25 * 1024 * 1024, segredoDeAssinatura: undefined, segredosDeVerificacao: [], diretorio: '/var/lib/suite/arquivos', prazoDoEnvioMs: 3_600_000 });
  expect(loadConfig({ FILES_DIRETORIO: '/srv/arquivos', FILES_TAMANHO_MAXIMO_MB: '100' }).files).toEqual(
    expect.objectContaining({ diretorio: '/srv/arquivos', tamanhoMaximoBytes: 100 * 1024 * 1024 }),
  );
});

test('a bad value stops with a message naming the variable', () => {
  expect(() => loadConfig({ FILES_TAMANHO_MAXIMO_MB: 'muito' })).toThrow(/FILES_TAMANHO_MAXIMO_MB/);
  expect(() => loadConfig({ FILES_TAMANHO_MAXIMO_MB: '0' })).toThrow(/FILES_TAMANHO_MAXIMO_MB/);
  expect(() => loadConfig({ FILES_SEGREDO_DE_ASSINATURA: 'curto' })).toThrow(/FILES_SEGREDO_DE_ASSINATURA/);
  expect(() => loadConfig({ FILES_PRAZO_DO_ENVIO_S: '0' })).toThrow(/FILES_PRAZO_DO_ENVIO_S/);
  expect(() => loadConfig({ FILES_SEGREDOS_DE_VERIFICACAO: `${'x'.repeat(32)},curta` })).toThrow(/FILES_SEGREDOS_DE_VERIFICACAO/);
  expect(() => loadConfig({ FILES_SEGREDOS_DE_VERIFICACAO: ',' })).toThrow(/FILES_SEGREDOS_DE_VERIFICACAO/);
});

test('MASTER_TOKEN (suite remove-app-files) is read through the configuration: optional, and a value that is no bare token names the variable', () => {
  const token = 'eyJhbGciOiJFZERTQSJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJh';
  expect(loadConfig({ MASTER_TOKEN: token }).tokenDoMaster).toBe(token);
  expect(loadConfig({}).tokenDoMaster).toBeUndefined();
  expect(loadConfig({ MASTER_TOKEN: '' }).tokenDoMaster).toBeUndefined();
  expect(() => loadConfig({ MASTER_TOKEN: `Bearer ${token}` })).toThrow(/MASTER_TOKEN/);
  expect(() => loadConfig({ MASTER_TOKEN: `"${token}"` })).toThrow(/MASTER_TOKEN/);
});

test('FILES_SEGREDOS_DE_VERIFICACAO lists keys separated by commas (spaces around them ignored)', () => {
  const [a, b] = ['a'.repeat(32), 'b'.repeat(40)];
  expect(loadConfig({ FILES_SEGREDOS_DE_VERIFICACAO: `${a}, ${b}` }).files.segredosDeVerificacao).toEqual([a, b]);
});

test('every signing key FILES_SEGREDO_DE_ASSINATURA takes can be listed in FILES_SEGREDOS_DE_VERIFICACAO as it is, for the rotation', () => {
  for (const chave of [`${'a'.repeat(20)},${'b'.repeat(20)}`, ` ${'c'.repeat(40)} `]) {
    let assinatura: string | undefined;
    try {
      assinatura = loadConfig({ FILES_SEGREDO_DE_ASSINATURA: chave }).files.segredoDeAssinatura;
    } catch (err) {
      // refused as a signing key, naming the variable: fine, it never signs
      expect(String(err)).toMatch(/FILES_SEGREDO_DE_ASSINATURA/);
      continue;
    }
    expect(loadConfig({ FILES_SEGREDOS_DE_VERIFICACAO: chave }).files.segredosDeVerificacao).toEqual([assinatura]);
  }
});

test('outside LOCALHOST the file service does not start without FILES_SEGREDO_DE_ASSINATURA (other services are not affected)', async () => {
  resetConfig(PRODUCAO);
  await expect(carregarSegredo()).rejects.toThrow(/FILES_SEGREDO_DE_ASSINATURA required outside LOCALHOST/);
  resetConfig({ ...PRODUCAO, FILES_SEGREDO_DE_ASSINATURA: 'x'.repeat(32) });
  await expect(carregarSegredo()).resolves.toBeUndefined();
  expect(config().files.segredoDeAssinatura).toBe('x'.repeat(32));
});
