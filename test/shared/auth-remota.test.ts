import http from 'node:http';
import { AddressInfo } from 'node:net';
import { createLocalJWKSet, exportJWK, generateKeyPair, JWTVerifyGetKey, SignJWT } from 'jose';
import { config } from '../../config';
import { chavesDoIdentity, criarAutenticador, PRAZO_DO_TOKEN_VERIFICADO_MS } from '../../api/shared/auth';
import { ErroDeDominio } from '../../api/shared/errors';
import { portaLivre } from '../helpers/processo';
import { Registro } from '../helpers/registros';

const mockRegistros: Registro[] = [];
jest.mock('../../lib/logger', () => jest.requireActual('../helpers/registros').loggerQueRegistra('auth', ['warn'], () => mockRegistros));

/**
 * The other services verify identity's tokens with its key set (DESIGN §3): a key set fetched
 * before keeps verifying while identity is out of reach, and with none known the answer is 503
 * (identity unavailable), not 401 (the token is not at fault).
 */

type Chave = Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];
let chave: Chave;
let jwks: { keys: object[] };

beforeAll(async () => {
  const par = await generateKeyPair('RS256');
  chave = par.privateKey;
  jwks = { keys: [{ ...(await exportJWK(par.publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' }] };
});

/** A user token as identity signs them, a new one each call (the authenticator remembers those it verified). */
let n = 0;
const token = (comChave: Chave = chave, kid = 'k1') =>
  new SignJWT({ tipo: 'usuario', master: false, nome: `Pessoa ${++n}` })
    .setProtectedHeader({ alg: 'RS256', kid })
    .setIssuer(config().servicos.identity.url)
    .setSubject(`u${n}`)
    .setIssuedAt()
    .setExpirationTime('1h')
    .sign(comChave);

/** identity's JWKS route, answering `status` (200 with the key set) until closed; `resposta` changes what a 200 says from then on. */
async function identityFalso(status = 200, porta = 0) {
  let corpo = status === 200 ? JSON.stringify(jwks) : '{}';
  let atendidas = 0;
  const servidor = http.createServer((_req, res) => {
    atendidas++;
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(corpo);
  });
  await new Promise<void>((r) => servidor.listen(porta, '127.0.0.1', r));
  const url = new URL(`http://127.0.0.1:${(servidor.address() as AddressInfo).port}/.well-known/jwks.json`);
  return {
    url,
    resposta: (novo: string) => void (corpo = novo),
    atendidas: () => atendidas,
    fechar: () => new Promise<void>((r) => servidor.close(() => r())),
  };
}

const tipoDoErro = (p: Promise<unknown>) => p.then(() => 'aceito', (err) => (err instanceof ErroDeDominio ? err.tipo : `outro: ${err}`));

test('a key set fetched before keeps verifying new tokens after identity stops answering and the set is past its validity', async () => {
  const identity = await identityFalso();
  const autenticar = criarAutenticador(chavesDoIdentity(identity.url, 50));
  expect((await autenticar(await token())).tipo).toBe('usuario');
  await identity.fechar();
  await new Promise((r) => setTimeout(r, 100));
  mockRegistros.length = 0;
  expect((await autenticar(await token())).tipo).toBe('usuario');
  // the failed fetch is said, with its cause and the age of the set still in use
  expect(mockRegistros).toEqual([
    {
      nivel: 'warn',
      args: [{ url: identity.url.href, erro: expect.stringMatching(/ECONNREFUSED/), conjunto_de_ha_s: expect.any(Number) }, expect.stringContaining('conjunto de chaves do identity')],
    },
  ]);
  // a token of a key the last set lacks is not let through; nor is it called bad (401), since
  // identity may have added that key since (restarted with a new one): 503, try again
  const outra = (await generateKeyPair('RS256')).privateKey;
  expect(await tipoDoErro(autenticar(await token(outra, 'k9')))).toBe('indisponivel');
});

test('the last key set verifies for a bounded time after it was fetched: past it, with identity still out of reach, tokens are 503', async () => {
  const identity = await identityFalso();
  // a bound wide enough that a busy machine's set-up does not use it up before the first check
  const autenticar = criarAutenticador(chavesDoIdentity(identity.url, 50, 1500));
  expect((await autenticar(await token())).tipo).toBe('usuario');
  await identity.fechar();
  await new Promise((r) => setTimeout(r, 100));
  expect((await autenticar(await token())).tipo).toBe('usuario');
  await new Promise((r) => setTimeout(r, 1500));
  expect(await tipoDoErro(autenticar(await token()))).toBe('indisponivel');
});

test('a 200 that is no key set (a proxy\'s page, an error in JSON) counts as the set out of reach: the last one verifies, and the fetch pauses', async () => {
  const identity = await identityFalso();
  try {
    const autenticar = criarAutenticador(chavesDoIdentity(identity.url, 50));
    expect((await autenticar(await token())).tipo).toBe('usuario');
    identity.resposta('{"erro":"manutenção"}');
    await new Promise((r) => setTimeout(r, 100));
    const antes = identity.atendidas();
    for (let i = 0; i < 10; i++) expect((await autenticar(await token())).tipo).toBe('usuario');
    // one fetch failed, then the pause: not one per request
    expect(identity.atendidas() - antes).toBe(1);
  } finally {
    await identity.fechar();
  }
});

test("identity back with a new key during the pause after a failed fetch: that key's tokens are 503, not 401, until the set is fetched again", async () => {
  const porta = await portaLivre();
  const identity = await identityFalso(200, porta);
  const autenticar = criarAutenticador(chavesDoIdentity(identity.url, 50));
  expect((await autenticar(await token())).tipo).toBe('usuario');
  await identity.fechar();
  await new Promise((r) => setTimeout(r, 100));
  // a fetch fails: the pause starts
  expect((await autenticar(await token())).tipo).toBe('usuario');
  const nova = await generateKeyPair('RS256');
  jwks = { keys: [...jwks.keys, { ...(await exportJWK(nova.publicKey)), kid: 'k2', alg: 'RS256', use: 'sig' }] };
  const devolta = await identityFalso(200, porta);
  try {
    const daNova = await token(nova.privateKey, 'k2');
    expect(await tipoDoErro(autenticar(daNova))).toBe('indisponivel');
  } finally {
    await devolta.fechar();
    jwks = { keys: jwks.keys.slice(0, 1) };
  }
});

test('with no key set known, identity out of reach or answering an error is 503 (indisponivel), not 401', async () => {
  const fechada = new URL(`http://127.0.0.1:${await portaLivre()}/.well-known/jwks.json`);
  expect(await tipoDoErro(criarAutenticador(chavesDoIdentity(fechada))(await token()))).toBe('indisponivel');
  // identity starting after a first refusal: the next request fetches the set and is verified
  const porta = await portaLivre();
  const tardia = criarAutenticador(chavesDoIdentity(new URL(`http://127.0.0.1:${porta}/.well-known/jwks.json`)));
  expect(await tipoDoErro(tardia(await token()))).toBe('indisponivel');
  const iniciado = await identityFalso(200, porta);
  try {
    expect(await tipoDoErro(tardia(await token()))).toBe('aceito');
  } finally {
    await iniciado.fechar();
  }
  const comErro = await identityFalso(500);
  try {
    expect(await tipoDoErro(criarAutenticador(chavesDoIdentity(comErro.url))(await token()))).toBe('indisponivel');
  } finally {
    await comErro.fechar();
  }
});

test('identity answering: a token signed by an unknown key, or malformed, is 401', async () => {
  const identity = await identityFalso();
  try {
    const autenticar = criarAutenticador(chavesDoIdentity(identity.url));
    const outra = (await generateKeyPair('RS256')).privateKey;
    expect(await tipoDoErro(autenticar(await token(outra, 'k9')))).toBe('nao_autenticado');
    expect(await tipoDoErro(autenticar('nao.e.token'))).toBe('nao_autenticado');
    expect(await tipoDoErro(autenticar(await token()))).toBe('aceito');
  } finally {
    await identity.fechar();
  }
});

test("a key identity added since the last fetch, within the pause between fetches an unknown kid allows, is judged by the set held: its tokens are 401 as a forged one's (DESIGN §4), then taken once the set is fetched again", async () => {
  const identity = await identityFalso();
  // made first: an RSA key takes a while to make on a busy machine, and the pause is short
  const nova = await generateKeyPair('RS256');
  const comANova = JSON.stringify({ keys: [...jwks.keys, { ...(await exportJWK(nova.publicKey)), kid: 'k2', alg: 'RS256', use: 'sig' }] });
  const tokenDaNova = await token(nova.privateKey, 'k2');
  const outra = (await generateKeyPair('RS256')).privateKey;
  const tokenDeNinguem = await token(outra, 'k9');
  const pausa = 2500;
  try {
    const autenticar = criarAutenticador(chavesDoIdentity(identity.url, undefined, undefined, pausa));
    const buscadoEm = Date.now();
    expect(await tipoDoErro(autenticar(await token()))).toBe('aceito');
    // identity given a new key without publishing it first, moments after this service fetched its set
    identity.resposta(comANova);
    const atendidas = identity.atendidas();
    expect(await tipoDoErro(autenticar(tokenDaNova))).toBe('nao_autenticado');
    expect(await tipoDoErro(autenticar(tokenDeNinguem))).toBe('nao_autenticado');
    expect(Date.now() - buscadoEm).toBeLessThan(pausa);
    // made-up kids within the pause cost identity no fetch
    expect(identity.atendidas()).toBe(atendidas);
    await new Promise((r) => setTimeout(r, pausa + 100));
    expect(await tipoDoErro(autenticar(tokenDaNova))).toBe('aceito');
    expect(identity.atendidas()).toBe(atendidas + 1);
    // a kid the set fetched just now lacks is no one's key: 401
    await new Promise((r) => setTimeout(r, pausa + 100));
    expect(await tipoDoErro(autenticar(tokenDeNinguem))).toBe('nao_autenticado');
  } finally {
    await identity.fechar();
  }
});

test('a token verified before its key left the key set (rotated out, or leaked) is refused once it is checked again, within PRAZO_DO_TOKEN_VERIFICADO_MS', async () => {
  const nova = await generateKeyPair('RS256');
  const soANova = { keys: [{ ...(await exportJWK(nova.publicKey)), kid: 'k2', alg: 'RS256', use: 'sig' }] };
  // the key set as the service holds it now: the old key, then the new one alone
  let conjunto = createLocalJWKSet(jwks as never);
  const chaves: JWTVerifyGetKey = (cabecalho, t) => conjunto(cabecalho, t);
  const autenticar = criarAutenticador(chaves);
  const antiga = await token();
  expect(await tipoDoErro(autenticar(antiga))).toBe('aceito');

  conjunto = createLocalJWKSet(soANova as never);
  const agora = Date.now();
  const relogio = jest.spyOn(Date, 'now');
  try {
    // remembered a while: repeated calls cost no signature check
    relogio.mockReturnValue(agora + PRAZO_DO_TOKEN_VERIFICADO_MS - 1000);
    expect(await tipoDoErro(autenticar(antiga))).toBe('aceito');
    // past it, the signature is checked against the set as it is: its key is gone
    relogio.mockReturnValue(agora + PRAZO_DO_TOKEN_VERIFICADO_MS + 1000);
    expect(await tipoDoErro(autenticar(antiga))).toBe('nao_autenticado');
    // a token of the new key verifies
    expect(await tipoDoErro(autenticar(await token(nova.privateKey, 'k2')))).toBe('aceito');
  } finally {
    relogio.mockRestore();
  }
});
