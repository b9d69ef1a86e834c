import { createPublicKey, generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { decodeProtectedHeader } from 'jose';
import { config, ConfigError, loadConfig } from '../../config';
import { carregarChaves } from '../../api/identity/chaves';
import { autenticadorRemoto } from '../../api/shared/auth';
import { cliente, esperarProblema } from '../helpers/http';
import { ADMIN, identityDe } from '../helpers/identity';
import { iniciarSuite, SuiteDeTeste } from '../helpers/suite';

/**
 * Replacing identity's key file (IDENTITY_CHAVE_PRIVADA_ARQUIVO) with the old key listed in
 * IDENTITY_CHAVES_DE_VERIFICACAO_ARQUIVOS: tokens signed before still verify, in identity and in the
 * services that fetch its JWKS, and only the new key signs.
 */

const pasta = mkdtempSync(path.join(tmpdir(), 'chaves-identity-'));
const arquivo = (nome: string, conteudo: string) => {
  const caminho = path.join(pasta, nome);
  writeFileSync(caminho, conteudo, { mode: 0o600 });
  return caminho;
};
const novaChave = () => generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;

const pemAntiga = novaChave();
const antiga = arquivo('antiga.pem', pemAntiga);
const antigaPublica = arquivo('antiga.pub.pem', createPublicKey(pemAntiga).export({ type: 'spki', format: 'pem' }) as string);
const nova = arquivo('nova.pem', novaChave());

let suite: SuiteDeTeste;
let id: ReturnType<typeof identityDe>;

beforeAll(async () => {
  suite = await iniciarSuite(['identity', 'intranet'], { workers: false, env: { IDENTITY_CHAVE_PRIVADA_ARQUIVO: antiga } });
  id = identityDe(suite.url.identity);
});
afterAll(async () => {
  await suite.encerrar();
  rmSync(pasta, { recursive: true, force: true });
});

/** What a restart of identity with these settings does to its keys. */
async function reiniciarChaves(privada: string, anteriores: string[]) {
  Object.assign(config().identity, { chavePrivadaArquivo: privada, chavesDeVerificacaoArquivos: anteriores });
  await carregarChaves();
}

const kid = (token: string) => decodeProtectedHeader(token).kid;
/** A master-only route of each service: 200 says the token verified. */
const naIdentity = (token: string) => id.api.get('/usuario', { token });
const naIntranet = (token: string) => cliente(suite.url.intranet).get('/perfil_acesso', { token });

test('after the key file is replaced, a token of the old key listed as anterior is accepted by identity and by intranet; new tokens carry the new kid', async () => {
  await reiniciarChaves(antiga, []);
  // never shown to a service before the switch: nothing verified it from a cache
  const tokenAntigo = await id.login(ADMIN.email, ADMIN.senha);

  await reiniciarChaves(nova, [antigaPublica]);
  const tokenNovo = await id.login(ADMIN.email, ADMIN.senha);
  const kids = (await id.api.get('/.well-known/jwks.json')).body.keys.map((k: { kid: string }) => k.kid);
  expect(kids).toEqual([kid(tokenNovo), kid(tokenAntigo)]);

  expect((await naIdentity(tokenAntigo)).status).toBe(200);
  // intranet fetches the JWKS now, after the switch
  expect((await naIntranet(tokenAntigo)).status).toBe(200);
  expect((await naIdentity(tokenNovo)).status).toBe(200);
  expect((await naIntranet(tokenNovo)).status).toBe(200);
});

test('the old key listed by its private PEM, or listed while it still signs, is published once under the same kid', async () => {
  await reiniciarChaves(nova, [antigaPublica]);
  const comPublica = (await id.api.get('/.well-known/jwks.json')).body;
  await reiniciarChaves(nova, [antiga, antigaPublica, nova]);
  expect((await id.api.get('/.well-known/jwks.json')).body).toEqual(comPublica);
});

test('without the old key listed, its token is refused with 401 by identity and by a service fetching the JWKS', async () => {
  await reiniciarChaves(antiga, []);
  // another master than the first test's admin: the same claims in the same second would make the same token, verified before
  const { token: tokenAntigo } = await id.criarUsuarioLogado({ e_master: true });
  await reiniciarChaves(nova, []);
  esperarProblema(await naIdentity(tokenAntigo), 401);
  await expect(autenticadorRemoto()(tokenAntigo)).rejects.toMatchObject({ tipo: 'nao_autenticado' });
});

test('an unreadable file, one without an RSA PEM key or with one under 2048 bits stops the start naming the variable and the file, never its contents', async () => {
  const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
  const { privateKey: curtaPrivada, publicKey: curtaChavePublica } = generateKeyPairSync('rsa', { modulusLength: 1024 });
  const curta = curtaPrivada.export({ type: 'pkcs8', format: 'pem' }) as string;
  const curtaPublica = curtaChavePublica.export({ type: 'spki', format: 'pem' }) as string;
  const casos: [string, string[], RegExp][] = [
    [nova, [path.join(pasta, 'nao-existe.pem')], /^invalid configuration: IDENTITY_CHAVES_DE_VERIFICACAO_ARQUIVOS: cannot read .*nao-existe\.pem \(ENOENT\)$/],
    [nova, [arquivo('lixo.pem', 'segredo-que-nao-e-pem')], /^invalid configuration: IDENTITY_CHAVES_DE_VERIFICACAO_ARQUIVOS: .*lixo\.pem holds no RSA key in PEM$/],
    [nova, [arquivo('ec.pem', ec)], /^invalid configuration: IDENTITY_CHAVES_DE_VERIFICACAO_ARQUIVOS: .*ec\.pem holds no RSA key in PEM$/],
    [antigaPublica, [], /^invalid configuration: IDENTITY_CHAVE_PRIVADA_ARQUIVO: .*antiga\.pub\.pem holds no RSA key in PEM$/],
    [pasta, [], /^invalid configuration: IDENTITY_CHAVE_PRIVADA_ARQUIVO: cannot read .* \(EISDIR\)$/],
    [arquivo('curta.pem', curta), [], /^invalid configuration: IDENTITY_CHAVE_PRIVADA_ARQUIVO: .*curta\.pem holds an RSA key of 1024 bits; tokens need at least 2048$/],
    [nova, [arquivo('curta.pub.pem', curtaPublica)], /^invalid configuration: IDENTITY_CHAVES_DE_VERIFICACAO_ARQUIVOS: .*curta\.pub\.pem holds an RSA key of 1024 bits; tokens need at least 2048$/],
  ];
  for (const [privada, anteriores, mensagem] of casos) {
    const erro = await reiniciarChaves(privada, anteriores).then(() => undefined, (e: unknown) => e);
    expect(erro).toBeInstanceOf(ConfigError);
    expect((erro as Error).message).toMatch(mensagem);
    expect((erro as Error).message).not.toMatch(/segredo|BEGIN/);
  }
});

test('IDENTITY_CHAVES_DE_VERIFICACAO_ARQUIVOS lists files by the path delimiter, so a file whose name has a comma is published; a list written with commas stops the start saying so', async () => {
  const comVirgula = arquivo('chave,de,antes.pem', novaChave());
  const listadas = (valor: string) => loadConfig({ IDENTITY_CHAVES_DE_VERIFICACAO_ARQUIVOS: valor }).identity.chavesDeVerificacaoArquivos;

  await reiniciarChaves(nova, listadas([comVirgula, antigaPublica].join(path.delimiter)));
  const kids = (await id.api.get('/.well-known/jwks.json')).body.keys.map((k: { kid: string }) => k.kid);
  await reiniciarChaves(comVirgula, []);
  const deComVirgula = kid(await id.login(ADMIN.email, ADMIN.senha));
  expect(kids).toHaveLength(3);
  expect(kids).toContain(deComVirgula);

  const erro = await reiniciarChaves(nova, listadas(`${antiga},${antigaPublica}`)).then(() => undefined, (e: unknown) => e);
  expect(erro).toBeInstanceOf(ConfigError);
  expect((erro as Error).message).toBe(
    `invalid configuration: IDENTITY_CHAVES_DE_VERIFICACAO_ARQUIVOS: cannot read ${antiga},${antigaPublica} (ENOENT) (files are separated by "${path.delimiter}", as in PATH, not by commas)`,
  );
});
