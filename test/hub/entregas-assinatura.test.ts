import { createHash, createPublicKey, verify } from 'node:crypto';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { createRemoteJWKSet, decodeProtectedHeader, JWK, jwtVerify } from 'jose';
import { esperarAte, hubNesteArquivo, Recebida } from './apoio-entregas';

/**
 * SPEC §5 rule 6 and DESIGN §5: every attempt is signed with the hub's Ed25519 key, as Standard
 * Webhooks v1a and as a `webhook-token` JWS. A subscriber verifies with nothing but the hub's
 * address (its JWKS) and its own identity application id (the audience): no shared secret.
 * These tests verify as a subscriber would, with `jose` and node:crypto only.
 */

const t = hubNesteArquivo();

/** What a subscriber knows: the hub's address. */
const jwksDoHub = () => createRemoteJWKSet(new URL(`${t.suite.url.hub}/.well-known/jwks.json`));

/** The subscriber's one-call check of a webhook-token: the hub's JWKS, its issuer and the expected audience. */
const verificarToken = (r: Pick<Recebida, 'cabecalhos'>, audience: string, issuer = t.suite.url.hub) =>
  jwtVerify(String(r.cabecalhos['webhook-token']), jwksDoHub(), { issuer, audience });

async function chavesDoHub(): Promise<JWK[]> {
  return ((await (await fetch(`${t.suite.url.hub}/.well-known/jwks.json`)).json()) as { keys: JWK[] }).keys;
}

/** Standard Webhooks, asymmetric scheme: some v1a entry verifies "{webhook-id}.{webhook-timestamp}.{body}" with a JWKS key. */
async function v1aConfere(r: Pick<Recebida, 'cabecalhos'>, corpo: Buffer): Promise<boolean> {
  const conteudo = Buffer.concat([Buffer.from(`${r.cabecalhos['webhook-id']}.${r.cabecalhos['webhook-timestamp']}.`), corpo]);
  const assinaturas = String(r.cabecalhos['webhook-signature'])
    .split(' ')
    .filter((e) => e.startsWith('v1a,'))
    .map((e) => Buffer.from(e.slice(4), 'base64'));
  const chaves = (await chavesDoHub()).map((jwk) => createPublicKey({ key: jwk as any, format: 'jwk' }));
  return assinaturas.some((a) => chaves.some((k) => verify(null, conteudo, k, a)));
}

/** One delivered request of a fresh scenario. */
async function umaEntrega(caminho: string, dados: unknown = { n: 5, texto: 'olá, mundo' }) {
  const c = await t.hub.cenario({ url_de_destino: t.receptor.url(caminho) });
  const { id } = await c.publicar(dados);
  const r = await esperarAte(() => t.receptor.recebidas.find((x) => x.corpo?.id === id), 'the delivery');
  return { c, eventoId: id, r };
}

test('GET /.well-known/jwks.json lists Ed25519 public keys as {kty OKP, crv Ed25519, x, kid, alg EdDSA, use sig} and no private part (DESIGN §5)', async () => {
  const res = await fetch(`${t.suite.url.hub}/.well-known/jwks.json`);
  expect(res.status).toBe(200);
  const { keys } = (await res.json()) as { keys: Record<string, unknown>[] };
  expect(keys.length).toBeGreaterThanOrEqual(1);
  for (const k of keys) {
    expect(Object.keys(k).sort()).toEqual(['alg', 'crv', 'kid', 'kty', 'use', 'x']);
    const x = expect.stringMatching(/^[A-Za-z0-9_-]{43}$/);
    expect(k).toEqual({ kty: 'OKP', crv: 'Ed25519', x, kid: expect.any(String), alg: 'EdDSA', use: 'sig' });
  }
});

test('a delivery is a POST of JSON whose body is {id, tipo, versao, aplicativo_origem_id, aplicativo_assinante_id, criado_em, dados} with identity ids (DESIGN §5, §10)', async () => {
  const { c, eventoId, r } = await umaEntrega('/corpo');
  // a POST of JSON to url_de_destino: a subscriber routes on the method as well as the path
  expect(r.metodo).toBe('POST');
  expect(r.cabecalhos['content-type']).toMatch(/^application\/json/);
  expect(Object.keys(r.corpo).sort()).toEqual(['aplicativo_assinante_id', 'aplicativo_origem_id', 'criado_em', 'dados', 'id', 'tipo', 'versao']);
  expect(r.corpo).toEqual({
    id: eventoId,
    tipo: c.tipo.nome,
    versao: 1,
    // identity ids: the only ids the receiving application knows (the sub of its token), not the hub's
    aplicativo_origem_id: c.publicador.id,
    aplicativo_assinante_id: c.assinante.id,
    criado_em: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
    dados: { n: 5, texto: 'olá, mundo' },
  });
  expect(c.assinante.id).not.toBe(c.assinante.hub.id);
  // webhook-id is the delivery id, the one GET /entrega shows
  const entrega = await t.hub.entregaDoEvento(c.assinatura.id, eventoId);
  expect(r.webhookId).toBe(entrega.id);
});

test("a delivery is what the hub's OpenAPI document says under `webhooks.entrega`: its body validates against the documented schema (no field more or less), and every documented header comes, in its documented form", async () => {
  const { r } = await umaEntrega('/documentada');
  const doc = (await (await fetch(`${t.suite.url.hub}/openapi.json`)).json()) as any;
  const entrega = doc.webhooks.entrega.post;
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  const corpo = ajv.compile(entrega.requestBody.content['application/json'].schema);
  expect([corpo(r.corpo), corpo.errors]).toEqual([true, null]);
  // the schema is closed: a field the document does not name would fail it
  expect(corpo({ ...r.corpo, extra: 1 })).toBe(false);
  const cabecalhos = entrega.parameters.filter((p: any) => p.in === 'header');
  expect(cabecalhos.map((p: any) => p.name).sort()).toEqual(['webhook-id', 'webhook-signature', 'webhook-timestamp', 'webhook-token']);
  for (const p of cabecalhos) {
    expect([p.name, p.required]).toEqual([p.name, true]);
    const valor = ajv.compile(p.schema);
    expect([p.name, valor(r.cabecalhos[p.name])]).toEqual([p.name, true]);
  }
  expect(Object.keys(entrega.responses).sort()).toEqual(['2XX', 'default']);
});

test('webhook-token verifies with jose using only the hub JWKS and the subscriber id: issuer the hub, audience the subscriber, typ webhook+jwt, body_sha256 of the raw body (DESIGN §5)', async () => {
  const { c, r } = await umaEntrega('/token');
  const token = String(r.cabecalhos['webhook-token']);
  const { payload, protectedHeader } = await jwtVerify(token, jwksDoHub(), {
    issuer: t.suite.url.hub,
    audience: c.assinante.id,
    typ: 'webhook+jwt',
    algorithms: ['EdDSA'],
  });
  expect(protectedHeader).toEqual({ alg: 'EdDSA', kid: expect.any(String), typ: 'webhook+jwt' });
  expect((await chavesDoHub()).map((k) => k.kid)).toContain(protectedHeader.kid);
  expect(payload).toEqual({
    iss: t.suite.url.hub,
    aud: c.assinante.id,
    sub: c.assinatura.id,
    jti: r.webhookId,
    iat: Number(r.cabecalhos['webhook-timestamp']),
    exp: Number(r.cabecalhos['webhook-timestamp']) + 300,
    tipo: c.tipo.nome,
    versao: 1,
    body_sha256: createHash('sha256').update(r.bruto).digest('base64url'),
  });
});

test('webhook-signature v1a verifies with an OKP key of the hub JWKS over "{webhook-id}.{webhook-timestamp}.{body}" (Standard Webhooks, DESIGN §5)', async () => {
  const { r } = await umaEntrega('/v1a');
  expect(r.cabecalhos['webhook-signature']).toMatch(/^v1a,[A-Za-z0-9+/]+=*( v1a,[A-Za-z0-9+/]+=*)*$/);
  expect(Math.abs(Number(r.cabecalhos['webhook-timestamp']) - Date.now() / 1000)).toBeLessThan(30);
  expect(await v1aConfere(r, r.bruto)).toBe(true);
});

test('a tampered body fails both checks: v1a no longer verifies and body_sha256 no longer matches', async () => {
  const { c, r } = await umaEntrega('/adulterado', { n: 100 });
  const adulterado = Buffer.from(r.bruto.toString('utf8').replace('"n":100', '"n":999'));
  expect(adulterado.equals(r.bruto)).toBe(false);
  expect(await v1aConfere(r, adulterado)).toBe(false);
  // a different webhook-id or timestamp breaks it too: they are part of what is signed
  expect(await v1aConfere({ cabecalhos: { ...r.cabecalhos, 'webhook-timestamp': '1' } }, r.bruto)).toBe(false);

  const { payload } = await verificarToken(r, c.assinante.id);
  expect(payload.body_sha256).toBe(createHash('sha256').update(r.bruto).digest('base64url'));
  expect(payload.body_sha256).not.toBe(createHash('sha256').update(adulterado).digest('base64url'));
});

test('a delivery addressed to another application is rejected by audience: jose throws for the wrong audience, and the body names the real subscriber', async () => {
  const { c, eventoId, r } = await umaEntrega('/para-a');
  const outro = await t.hub.aplicativo();
  await t.hub.assinar(outro, c.tipo.id, { url_de_destino: t.receptor.url('/para-b') });
  const { id: segundo } = await c.publicar({ n: 2 });
  const paraB = await esperarAte(() => t.receptor.recebidas.find((x) => x.corpo?.id === segundo && x.caminho === '/para-b'), 'the delivery to b');

  // application a receives b's delivery (say, a misrouted request) and checks it against its own id
  await expect(verificarToken(paraB, c.assinante.id)).rejects.toMatchObject({ code: 'ERR_JWT_CLAIM_VALIDATION_FAILED', claim: 'aud' });
  expect(paraB.corpo.aplicativo_assinante_id).toBe(outro.id);
  expect(paraB.corpo.aplicativo_assinante_id).not.toBe(c.assinante.id);
  // and b's own check passes
  await expect(verificarToken(paraB, outro.id)).resolves.toBeDefined();
  // another issuer is refused as well
  await expect(verificarToken(r, c.assinante.id, 'https://outro.exemplo')).rejects.toMatchObject({ claim: 'iss' });
  expect(r.corpo.id).toBe(eventoId);
});

test('a token signed by any other key is refused by the hub JWKS', async () => {
  const { r } = await umaEntrega('/forjado');
  const { SignJWT, generateKeyPair } = await import('jose');
  const { privateKey } = await generateKeyPair('EdDSA', { crv: 'Ed25519' });
  const cabecalho = decodeProtectedHeader(String(r.cabecalhos['webhook-token']));
  const forjado = await new SignJWT({ body_sha256: 'x' })
    .setProtectedHeader({ alg: 'EdDSA', kid: cabecalho.kid!, typ: 'webhook+jwt' })
    .setIssuer(t.suite.url.hub)
    .setAudience(String(r.corpo.aplicativo_assinante_id))
    .setIssuedAt()
    .setExpirationTime('5m')
    .sign(privateKey);
  await expect(jwtVerify(forjado, jwksDoHub(), { issuer: t.suite.url.hub, audience: String(r.corpo.aplicativo_assinante_id) })).rejects.toMatchObject({
    code: 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED',
  });
});

test('every attempt is signed afresh, with the same webhook-id (DESIGN §5)', async () => {
  const c = await t.hub.cenario({ url_de_destino: t.receptor.url('/de-novo'), maximo_de_tentativas: 3 });
  // the first attempt answers in the next second, so the second is made in a later one than the
  // first was signed in: its timestamp, signature and token must be its own, not the first's again
  const proximoSegundo = () => new Promise((r) => setTimeout(r, 1050 - (Date.now() % 1000)));
  t.receptor.responder = async (r, vez) => (r.caminho === '/de-novo' && vez === 1 ? (await proximoSegundo(), 500) : 200);
  try {
    const { id } = await c.publicar();
    const duas = await esperarAte(() => {
      const l = t.receptor.recebidas.filter((x) => x.corpo?.id === id);
      return l.length === 2 && l;
    }, 'two attempts');
    expect(duas[1].webhookId).toBe(duas[0].webhookId);
    expect(Number(duas[1].cabecalhos['webhook-timestamp'])).toBeGreaterThan(Number(duas[0].cabecalhos['webhook-timestamp']));
    for (const cabecalho of ['webhook-signature', 'webhook-token']) expect(duas[1].cabecalhos[cabecalho]).not.toBe(duas[0].cabecalhos[cabecalho]);
    for (const r of duas) {
      expect(await v1aConfere(r, r.bruto)).toBe(true);
      const { payload } = await verificarToken(r, c.assinante.id);
      expect(payload.jti).toBe(r.webhookId);
      expect(payload.iat).toBe(Number(r.cabecalhos['webhook-timestamp']));
    }
  } finally {
    t.receptor.responder = () => 200;
  }
});
