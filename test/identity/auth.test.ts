import { createHmac, createPublicKey, generateKeyPairSync } from 'node:crypto';
import { createLocalJWKSet, decodeJwt, decodeProtectedHeader, jwtVerify } from 'jose';
import jwt from 'jsonwebtoken';
import { assinar } from '../../api/identity/chaves';
import { Aplicativo, ChaveDeAssinatura, Usuario } from '../../models/identity';
import { comMudancaEmCurso } from '../helpers/espera';
import { esperarProblema } from '../helpers/http';
import { identityDe } from '../helpers/identity';
import { iniciarSuite, SuiteDeTeste } from '../helpers/suite';
import { marca, proximoSegundo } from './apoio';

/**
 * Tokens (DESIGN §3) and how a protected route treats them (DESIGN §4, §10): the JWKS verifies
 * every token the service issues, and anything else is refused with 401 as problem+json.
 */

let suite: SuiteDeTeste;
let id: ReturnType<typeof identityDe>;
let admin: string;
let adminId: string;
/** One logged non-master user for the whole file: password hashes are slow on purpose. */
let comum: { usuario: any; token: string };
let app: { id: string; nome: string; token: string };

beforeAll(async () => {
  // no outbox worker: only outbox.test.ts has a hub to publish colaborador events to
  suite = await iniciarSuite(['identity'], { workers: false });
  id = identityDe(suite.url.identity);
  admin = await id.admin();
  adminId = decodeJwt(admin).sub!;
  comum = await id.criarUsuarioLogado();
  app = await id.criarAplicativo();
});
afterAll(() => suite.encerrar());

const b64 = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
const agora = () => Math.floor(Date.now() / 1000);
/** Claims of a master, as the service would sign them: a forged token that got through would list users. */
const claimsDeMaster = () => ({ tipo: 'usuario', master: true, nome: 'Forjado', email: 'forjado@suite.test' });
/** GET /usuario is master only: a token accepted by mistake would answer 200. */
const listar = (token: string) => id.api.get('/usuario', { token });

async function chavePrivadaDoServico(): Promise<{ pem: string; kid: string }> {
  const chave = await ChaveDeAssinatura.findOne({ order: [['criada_em', 'DESC']] });
  return { pem: chave!.chave_privada_pem, kid: chave!.kid };
}

describe('GET /.well-known/jwks.json (DESIGN §3)', () => {
  test('is public and lists RS256 public keys only, no private members', async () => {
    const res = await id.api.get('/.well-known/jwks.json');
    expect(res.status).toBe(200);
    expect(res.body.keys.length).toBeGreaterThanOrEqual(1);
    for (const k of res.body.keys) {
      expect(k).toMatchObject({ kty: 'RSA', alg: 'RS256', use: 'sig', kid: expect.any(String) });
      expect(k).toMatchObject({ n: expect.any(String), e: expect.any(String) });
      for (const privado of ['d', 'p', 'q', 'dp', 'dq', 'qi']) expect(k).not.toHaveProperty(privado);
    }
  });

  test('its keys verify a login token with jose, issuer = the identity base address; claims sub, tipo, master, nome, email, perfil, iss, iat, exp', async () => {
    const jwks = (await id.api.get('/.well-known/jwks.json')).body;
    const { payload, protectedHeader } = await jwtVerify(comum.token, createLocalJWKSet(jwks), { issuer: suite.url.identity });
    expect(jwks.keys.map((k: any) => k.kid)).toContain(protectedHeader.kid);
    expect(payload).toEqual({
      sub: comum.usuario.id,
      tipo: 'usuario',
      master: false,
      nome: comum.usuario.nome,
      email: comum.usuario.email,
      perfil: comum.usuario.perfil,
      iss: suite.url.identity,
      iat: expect.any(Number),
      exp: expect.any(Number),
    });
    expect(payload.exp! - payload.iat!).toBe(8 * 3600);
    expect(Math.abs(payload.iat! - agora())).toBeLessThan(120);
  });

  test("a master's token carries master true (DESIGN §3)", async () => {
    const jwks = (await id.api.get('/.well-known/jwks.json')).body;
    const { payload } = await jwtVerify(admin, createLocalJWKSet(jwks), { issuer: suite.url.identity });
    expect(payload).toMatchObject({ sub: adminId, tipo: 'usuario', master: true });
  });
});

describe('a protected route refuses what is not a valid token (DESIGN §4: 401)', () => {
  /** Every refusal of a presented token looks the same: nothing tells which check failed. */
  let problemaDeReferencia: any;
  beforeAll(async () => {
    problemaDeReferencia = esperarProblema(await listar('nao.e.token'), 401);
  });
  const recusado = async (token: string) => {
    const res = await listar(token);
    const problema = esperarProblema(res, 401);
    expect(problema).toEqual(problemaDeReferencia);
    // a token sent and refused says so (RFC 6750 §3.1): the client gets a new one
    expect(res.headers.get('www-authenticate')).toBe('Bearer error="invalid_token"');
    expect(JSON.stringify(problema)).not.toMatch(/BEGIN|PRIVATE|signature|invalid algorithm|jws|jwt/i);
  };

  test('the well-formed master token used as a control is accepted (so each refusal below is the token)', async () => {
    expect((await listar(admin)).status).toBe(200);
    expect((await listar(assinar(claimsDeMaster(), adminId, 60))).status).toBe(200);
  });

  test('no Authorization header answers 401 with WWW-Authenticate: Bearer (RFC 6750 §3)', async () => {
    const res = await id.api.get('/usuario');
    esperarProblema(res, 401);
    expect(res.headers.get('www-authenticate')).toBe('Bearer');
  });

  test.each([
    ['Basic scheme', () => `Basic ${Buffer.from('admin@suite.test:Admin-Senha-Forte-1').toString('base64')}`],
    ['Bearer without token', () => 'Bearer'],
    ['Bearer with blank token', () => 'Bearer    '],
    ['token without scheme', (t: string) => t],
    ['two tokens', (t: string) => `Bearer ${t} ${t}`],
    ['token with a quote', (t: string) => `Bearer "${t}"`],
  ])('a malformed Authorization header (%s) answers 401', async (_caso, cabecalho) => {
    const res = await id.api.get('/usuario', { headers: { authorization: cabecalho(admin) } });
    esperarProblema(res, 401);
  });

  test('the Bearer scheme is case-insensitive (RFC 9110 §11.1)', async () => {
    const res = await id.api.get('/usuario', { headers: { authorization: `bearer ${admin}` } });
    expect(res.status).toBe(200);
  });

  test('garbage in JWT form answers 401', async () => {
    await recusado(`${b64({ alg: 'RS256' })}.${b64({ sub: adminId })}.assinatura`);
  });

  test('an expired token answers 401 (signed with the service key)', async () => {
    await recusado(assinar(claimsDeMaster(), adminId, -30));
  });

  test('a token signed by another key answers 401, even with the kid of the service key', async () => {
    const { kid } = await chavePrivadaDoServico();
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const opcoes = { algorithm: 'RS256' as const, subject: adminId, issuer: suite.url.identity, expiresIn: 600 };
    await recusado(jwt.sign(claimsDeMaster(), privateKey, { ...opcoes, keyid: kid }));
    await recusado(jwt.sign(claimsDeMaster(), privateKey, { ...opcoes, keyid: 'outra-chave' }));
  });

  test('a tampered payload (a non-master claiming master) answers 401', async () => {
    const [cabecalho, payload, assinatura] = comum.token.split('.');
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString());
    expect(claims.master).toBe(false);
    await recusado(`${cabecalho}.${b64({ ...claims, master: true })}.${assinatura}`);
  });

  test('alg none answers 401', async () => {
    const claims = { ...claimsDeMaster(), sub: adminId, iss: suite.url.identity, iat: agora(), exp: agora() + 600 };
    await recusado(`${b64({ alg: 'none', typ: 'JWT' })}.${b64(claims)}.`);
    const { kid } = await chavePrivadaDoServico();
    await recusado(`${b64({ alg: 'none', typ: 'JWT', kid })}.${b64(claims)}.`);
  });

  test('HS256 signed with the public key as secret (algorithm confusion) answers 401', async () => {
    const { pem, kid } = await chavePrivadaDoServico();
    const publica = createPublicKey(pem).export({ type: 'spki', format: 'pem' }) as string;
    const claims = { ...claimsDeMaster(), sub: adminId, iss: suite.url.identity, iat: agora(), exp: agora() + 600 };
    const corpo = `${b64({ alg: 'HS256', typ: 'JWT', kid })}.${b64(claims)}`;
    await recusado(`${corpo}.${createHmac('sha256', publica).update(corpo).digest('base64url')}`);
  });

  test('a token of another kind (typ other than JWT: a webhook-token, say) answers 401, even signed with the service key and shaped as an access token', async () => {
    const { pem, kid } = await chavePrivadaDoServico();
    const opcoes = { algorithm: 'RS256' as const, keyid: kid, subject: adminId, issuer: suite.url.identity, expiresIn: 600 };
    await recusado(jwt.sign(claimsDeMaster(), pem, { ...opcoes, header: { alg: 'RS256', kid, typ: 'webhook+jwt' } }));
    // typ JWT, in any case, is an access token
    expect((await listar(jwt.sign(claimsDeMaster(), pem, { ...opcoes, header: { alg: 'RS256', kid, typ: 'jwt' } }))).status).toBe(200);
  });

  test('a token of another issuer answers 401, even signed with the service key', async () => {
    const { pem, kid } = await chavePrivadaDoServico();
    const opcoes = { algorithm: 'RS256' as const, keyid: kid, subject: adminId, expiresIn: 600 };
    await recusado(jwt.sign(claimsDeMaster(), pem, { ...opcoes, issuer: 'http://outro.emissor' }));
  });

  test('a token without tipo, or with an unknown tipo, answers 401, even signed with the service key', async () => {
    const { tipo: _t, ...semTipo } = claimsDeMaster();
    await recusado(assinar(semTipo, adminId, 600));
    await recusado(assinar({ ...claimsDeMaster(), tipo: 'administrador' }, adminId, 600));
  });

  test('a header kid naming no published key answers 401', async () => {
    const cabecalho = decodeProtectedHeader(admin);
    expect(cabecalho.kid).toEqual(expect.any(String));
    const [, payload, assinatura] = admin.split('.');
    await recusado(`${b64({ ...cabecalho, kid: 'desconhecida' })}.${payload}.${assinatura}`);
  });

  test('a token without exp answers 401, even signed with the service key', async () => {
    const { pem, kid } = await chavePrivadaDoServico();
    await recusado(jwt.sign(claimsDeMaster(), pem, { algorithm: 'RS256', keyid: kid, subject: adminId, issuer: suite.url.identity }));
  });
});

describe('a valid token of the wrong kind (DESIGN §4: 403)', () => {
  test('an application token where a user is needed answers 403', async () => {
    esperarProblema(await id.api.get('/setor', { token: app.token }), 403);
    esperarProblema(await id.api.get(`/usuario/${app.id}`, { token: app.token }), 403);
  });

  test('an application token cannot pass for a master by claiming master (DESIGN §3: master is a user claim)', async () => {
    const token = assinar({ tipo: 'aplicativo', nome: app.nome, master: true }, app.id, 600);
    const antes = (await id.api.get('/aplicativo', { token: admin })).body.total;
    esperarProblema(await id.api.get('/usuario', { token }), 403);
    esperarProblema(await id.api.post('/aplicativo', { token, body: { nome: 'Intruso' } }), 403);
    expect((await id.api.get('/aplicativo', { token: admin })).body.total).toBe(antes);
  });
});

describe('identity checks the holder of each token against its own records (users and applications are administered here)', () => {
  test('a removed master\'s token is refused at once (401): it cannot create another master', async () => {
    const outro = await id.criarUsuarioLogado({ e_master: true });
    expect((await listar(outro.token)).status).toBe(200);
    expect((await id.api.del(`/usuario/${outro.usuario.id}`, { token: admin })).status).toBe(204);
    esperarProblema(await listar(outro.token), 401);
    const email = `m${Date.now()}@suite.test`;
    const novo = await id.api.post('/usuario', { token: outro.token, body: { nome: 'Outro Master', email, perfil: 'colaborador', e_master: true } });
    esperarProblema(novo, 401);
    expect(await Usuario.count({ where: { email }, paranoid: false })).toBe(0);
  });

  test('a master made an ordinary user loses the master routes at once (403), though the token says master', async () => {
    const rebaixado = await id.criarUsuarioLogado({ e_master: true });
    expect(decodeJwt(rebaixado.token).master).toBe(true);
    expect((await id.api.patch(`/usuario/${rebaixado.usuario.id}`, { token: admin, body: { e_master: false } })).status).toBe(200);
    esperarProblema(await listar(rebaixado.token), 403);
    // and made master again, the same token works again
    expect((await id.api.patch(`/usuario/${rebaixado.usuario.id}`, { token: admin, body: { e_master: true } })).status).toBe(200);
    expect((await listar(rebaixado.token)).status).toBe(200);
  });

  test('a deactivated or removed application\'s token is refused (401)', async () => {
    const desativado = await id.criarAplicativo();
    const removido = await id.criarAplicativo();
    for (const a of [desativado, removido]) expect((await id.api.get('/aplicativo', { token: a.token })).status).toBe(200);
    expect((await id.api.patch(`/aplicativo/${desativado.id}`, { token: admin, body: { ativo: false } })).status).toBe(200);
    expect((await id.api.del(`/aplicativo/${removido.id}`, { token: admin })).status).toBe(204);
    for (const a of [desativado, removido]) esperarProblema(await id.api.get('/aplicativo', { token: a.token }), 401);
  });
});

describe('a password change or a secret renewal refuses, at identity, the tokens issued before it (401)', () => {
  /** The second tokens_validos_desde falls in: a token of that second is taken (iat counts whole seconds). */
  const segundoDe = (desde: Date | null) => Math.floor(desde!.getTime() / 1000);

  /**
   * A change, then a token got right after it (`mudarEObter`), made from the start of a second until
   * the token is of the change's own second, which whole seconds could have refused: a loaded
   * machine may carry the token into the next one, and then the case was not tried. Each token is
   * checked by `aceito`.
   */
  async function noSegundoDaMudanca(mudarEObter: () => Promise<string>, desde: () => Promise<Date | null>, aceito: (token: string) => Promise<void>) {
    for (let vez = 1; ; vez++) {
      await proximoSegundo();
      const token = await mudarEObter();
      await aceito(token);
      if (decodeJwt(token).iat === segundoDe(await desde())) return;
      if (vez === 5) throw new Error('the token never fell in the second of the change');
    }
  }

  test("a user's password changed by a master: the user's earlier token is refused, a login right after the change is taken; others' tokens are not touched", async () => {
    const pessoa = await id.criarUsuarioLogado();
    const outra = await id.criarUsuarioLogado();
    const proprio = (u: { usuario: any }, token: string) => id.api.get(`/usuario/${u.usuario.id}`, { token });
    expect((await proprio(pessoa, pessoa.token)).status).toBe(200);
    await noSegundoDaMudanca(
      async () => {
        const nova = `Nova-${marca()}`;
        expect((await id.api.patch(`/usuario/${pessoa.usuario.id}`, { token: admin, body: { senha: nova } })).status).toBe(200);
        return id.login(pessoa.usuario.email, nova);
      },
      async () => (await Usuario.findByPk(pessoa.usuario.id))!.tokens_validos_desde,
      async (depois) => {
        esperarProblema(await proprio(pessoa, pessoa.token), 401);
        expect((await proprio(pessoa, depois)).status).toBe(200);
      },
    );
    expect((await proprio(outra, outra.token)).status).toBe(200);
    expect((await listar(admin)).status).toBe(200);
  });

  test('a master changing its own password: the token that made the change is refused too, and one logs in again', async () => {
    const master = await id.criarUsuarioLogado({ e_master: true });
    await proximoSegundo();
    const nova = `Nova-${marca()}`;
    expect((await id.api.patch(`/usuario/${master.usuario.id}`, { token: master.token, body: { senha: nova } })).status).toBe(200);
    esperarProblema(await listar(master.token), 401);
    expect((await listar(await id.login(master.usuario.email, nova))).status).toBe(200);
  });

  test("an application's renewed secret: its earlier token is refused, one got right after with the new secret is taken; other applications' are not touched", async () => {
    const renovado = await id.criarAplicativo();
    const outro = await id.criarAplicativo();
    await noSegundoDaMudanca(
      async () => {
        const res = await id.api.post(`/aplicativo/${renovado.id}/segredo`, { token: admin });
        expect(res.status).toBe(200);
        return (await id.api.post('/auth/token', { body: { client_id: renovado.id, client_secret: res.body.client_secret } })).body.access_token;
      },
      async () => (await Aplicativo.findByPk(renovado.id))!.tokens_validos_desde,
      async (depois) => {
        esperarProblema(await id.api.get('/aplicativo', { token: renovado.token }), 401);
        expect((await id.api.get('/aplicativo', { token: depois })).status).toBe(200);
      },
    );
    expect((await id.api.get('/aplicativo', { token: outro.token })).status).toBe(200);
  });

  test('a token request with the old secret, decided while a renewal holds the application: refused once the renewal commits, not signed on what it replaced', async () => {
    const app = await id.criarAplicativo();
    // the renewal, as its route makes it: the row locked, then its new secret written
    const res = await comMudancaEmCurso(
      'identity',
      'aplicativo',
      app.id,
      ['%FROM `aplicativo`%LOCK IN SHARE MODE%', '%FROM `aplicativo`%FOR SHARE%'],
      (c) => c.query('UPDATE aplicativo SET segredo_hash = ?, tokens_validos_desde = NOW(3) WHERE id = ?', ['f'.repeat(64), app.id]),
      () => id.api.post('/auth/token', { body: { client_id: app.id, client_secret: app.client_secret } }),
    );
    esperarProblema(res, 401);
  });

  test('an application switched off and on again: the tokens issued before the switch-off stay refused, new ones are taken', async () => {
    const pausado = await id.criarAplicativo();
    await proximoSegundo();
    expect((await id.api.patch(`/aplicativo/${pausado.id}`, { token: admin, body: { ativo: false } })).status).toBe(200);
    expect((await id.api.patch(`/aplicativo/${pausado.id}`, { token: admin, body: { ativo: true } })).status).toBe(200);
    esperarProblema(await id.api.get('/aplicativo', { token: pausado.token }), 401);
    const novo = (await id.api.post('/auth/token', { body: { client_id: pausado.id, client_secret: pausado.client_secret } })).body.access_token;
    expect((await id.api.get('/aplicativo', { token: novo })).status).toBe(200);
    // a change that leaves it on touches no token
    expect((await id.api.patch(`/aplicativo/${pausado.id}`, { token: admin, body: { nome: `Outro ${marca()}`, ativo: true } })).status).toBe(200);
    expect((await id.api.get('/aplicativo', { token: novo })).status).toBe(200);
  });
});
