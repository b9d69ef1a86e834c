import { createHash, createPublicKey, generateKeyPairSync, KeyObject, verify } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { decodeProtectedHeader, JWK } from 'jose';
import { Op } from 'sequelize';
import {
  ASSINAM_JUNTAS_MS,
  carregarChavesDoHub,
  chavesQueAssinam,
  PUBLICADA_ANTES_DE_ASSINAR_MS,
  PUBLICADA_APOS_APOSENTAR_MS,
  RECARGA_DAS_CHAVES,
  RECARGA_DO_JWKS,
  RevogacaoRecusada,
  revogarChave,
  rotacionarChave,
} from '../../api/hub/assinador';
import * as configDaSuite from '../../config';
import { Cifra } from '../../lib/cifra';
import { ChaveDoHub, Segredo } from '../../models/hub';
import { iniciarSuite, SuiteDeTeste } from '../helpers/suite';
import { ateOFim, comandoDaSuite } from '../helpers/processo';
import { Registro } from '../helpers/registros';
import { esperarAte, hubDe, Hub, iniciarReceptor, Recebida, Receptor } from './apoio-entregas';

const mockRegistros: Registro[] = [];
jest.mock('../../lib/logger', () => jest.requireActual('../helpers/registros').loggerQueRegistra('hub-chaves', ['warn', 'error'], () => mockRegistros));

/**
 * Key rotation (DESIGN §5, `suite rotate-hub-key`): the new key is listed before it signs; then
 * both keys sign for a while (`webhook-signature` carries two v1a entries, the token the new kid);
 * then the old one stops signing and stays listed until no attempt it signed can be in flight.
 * The hour-long steps are moved into the past in the database, and the keys reloaded.
 */

let suite: SuiteDeTeste;
let hub: Hub;
let receptor: Receptor;

/** The keys the hub started with: each test starts from them, whatever the one before changed. */
let chavesDoInicio: ChaveDoHub[];
/** Key files of the tests (HUB_CHAVE_PRIVADA_ARQUIVO). */
let pasta: string;

beforeAll(async () => {
  suite = await iniciarSuite(['identity', 'hub']);
  hub = hubDe(suite);
  receptor = await iniciarReceptor();
  chavesDoInicio = await ChaveDoHub.findAll();
  pasta = mkdtempSync(path.join(tmpdir(), 'chave-do-hub-'));
});
afterEach(async () => {
  jest.restoreAllMocks();
  await ChaveDoHub.destroy({ where: {}, truncate: true });
  await ChaveDoHub.bulkCreate(chavesDoInicio.map((c) => c.get({ plain: true })));
  await carregarChavesDoHub();
});
afterAll(async () => {
  if (pasta) rmSync(pasta, { recursive: true, force: true });
  await receptor?.fechar();
  await suite?.encerrar();
});

/** The keys the hub's JWKS lists now. */
const jwks = async () => ((await (await fetch(`${suite.url.hub}/.well-known/jwks.json`)).json()) as { keys: JWK[] }).keys;

const kidsDoJwks = async () => (await jwks()).map((k) => k.kid!).sort();

/** The public halves the JWKS lists, and the one of a private PEM, as JWK `x`. */
const publicasDoJwks = async () => (await jwks()).map((k) => k.x).sort();
const publicaDe = (pem: string) => (createPublicKey(pem).export({ format: 'jwk' }) as JWK).x;

/**
 * A new key stored in clear: as a version before their encryption stored them, retired ten minutes
 * ago (still listed, signing nothing); or `emServico`, signing since a second ago, as a writer of
 * the table would want it. Answers its PEM.
 */
async function guardarEmClaro(kid: string, emServico = false): Promise<string> {
  const pem = novaPem();
  const datas = emServico
    ? { assina_desde: new Date(Date.now() - 1000), aposentada_em: null }
    : { assina_desde: new Date(0), aposentada_em: new Date(Date.now() - 10 * 60_000) };
  await ChaveDoHub.create({ kid, chave_privada_pem: pem, ...datas });
  return pem;
}

/**
 * Every stored key put back in clear, as a version before their encryption left them (the hub's
 * cipher is LOCALHOST's generated one). Answers the kids.
 */
async function todasEmClaro(): Promise<string[]> {
  const cifra = new Cifra(Buffer.from(await cifraDaSuite(), 'utf8'));
  const guardadas = await ChaveDoHub.findAll();
  for (const g of guardadas) await g.update({ chave_privada_pem: cifra.decifrar(g.chave_privada_pem) });
  return guardadas.map((g) => g.kid);
}

/** The hub as on a first start: one key, generated (LOCALHOST). Answers its kid. */
async function soUmaChave(): Promise<string> {
  await ChaveDoHub.destroy({ where: {}, truncate: true });
  await carregarChavesDoHub();
  return (await ChaveDoHub.findAll())[0].kid;
}

const novaPem = () => generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;

/** LOCALHOST's HUB_CHAVE_DE_CIFRA, generated at the hub's first start: the one the suite's hub uses. */
const cifraDaSuite = async () => (await Segredo.findByPk('cifra'))!.valor;

/** The hub configured as outside LOCALHOST, `hub` over the suite's settings (restored after each test). */
function emProducao(hub: Partial<configDaSuite.Config['hub']>) {
  const real = configDaSuite.config();
  return jest.spyOn(configDaSuite, 'config').mockReturnValue({ ...real, ambiente: 'PRODUCTION', hub: { ...real.hub, ...hub } });
}

/** `conteudo` written as the key file `nome`: its path. */
function arquivoDeChave(nome: string, conteudo: string): string {
  writeFileSync(path.join(pasta, nome), conteudo, { mode: 0o600 });
  return path.join(pasta, nome);
}

/** HUB_CHAVE_DE_CIFRA as an operator sets it outside LOCALHOST. */
const CIFRA_DE_PRODUCAO = 'chave-de-cifra-do-hub-com-mais-de-32-caracteres';

async function chavePublica(kid: string): Promise<KeyObject> {
  return createPublicKey({ key: (await jwks()).find((k) => k.kid === kid) as any, format: 'jwk' });
}

/** One delivered request. */
async function umaEntrega(): Promise<Recebida> {
  const c = await hub.cenario({ url_de_destino: receptor.url('/rotacao') });
  const { id } = await c.publicar({ n: 1 });
  return esperarAte(() => receptor.recebidas.find((x) => x.corpo?.id === id), 'the delivery');
}

/** The kids whose key verifies each v1a entry of the attempt, in header order; the token's kid. */
async function assinadaPor(r: Recebida, kids: string[]): Promise<{ entradas: (string | undefined)[]; token: unknown }> {
  const conteudo = Buffer.concat([Buffer.from(`${r.cabecalhos['webhook-id']}.${r.cabecalhos['webhook-timestamp']}.`), r.bruto]);
  const chaves = await Promise.all(kids.map(async (kid) => [kid, await chavePublica(kid)] as const));
  const entradas = String(r.cabecalhos['webhook-signature'])
    .split(' ')
    .map((e) => Buffer.from(e.replace(/^v1a,/, ''), 'base64'))
    .map((assinatura) => chaves.find(([, k]) => verify(null, conteudo, k, assinatura))?.[0]);
  return { entradas, token: decodeProtectedHeader(String(r.cabecalhos['webhook-token'])).kid };
}

/** Moves a key's moments `ms` earlier, as if that much time had passed; reloads the keys. */
async function passar(ms: number): Promise<void> {
  for (const c of await ChaveDoHub.findAll()) {
    await c.update({
      assina_desde: new Date(c.assina_desde.getTime() - ms),
      aposentada_em: c.aposentada_em && new Date(c.aposentada_em.getTime() - ms),
    });
  }
  await carregarChavesDoHub();
}

test('listed first, then both sign, then only the new one signs while the old stays listed, then the old one is gone', async () => {
  const [antiga] = await kidsDoJwks();
  expect(await assinadaPor(await umaEntrega(), [antiga])).toEqual({ entradas: [antiga], token: antiga });

  const { kid: nova, assina_desde } = await rotacionarChave();
  expect(Date.parse(assina_desde) - Date.now()).toBeGreaterThan(PUBLICADA_ANTES_DE_ASSINAR_MS - 60_000);
  // listed at once, not signing yet
  expect(await kidsDoJwks()).toEqual([antiga, nova].sort());
  expect(await assinadaPor(await umaEntrega(), [antiga, nova])).toEqual({ entradas: [antiga], token: antiga });

  // the new key signs; the old one beside it: a subscriber that knows only the old key still verifies
  await passar(PUBLICADA_ANTES_DE_ASSINAR_MS + 1000);
  expect(await assinadaPor(await umaEntrega(), [antiga, nova])).toEqual({ entradas: [nova, antiga], token: nova });

  // the old key retires: it signs no more, and stays listed for attempts still in flight
  await passar(ASSINAM_JUNTAS_MS);
  expect(await assinadaPor(await umaEntrega(), [antiga, nova])).toEqual({ entradas: [nova], token: nova });
  expect(await kidsDoJwks()).toEqual([antiga, nova].sort());
  expect(await ChaveDoHub.count({ where: { kid: antiga, aposentada_em: { [Op.lt]: new Date() } } })).toBe(1);

  await passar(60 * 60_000);
  expect(await kidsDoJwks()).toEqual([nova]);
});

test('the JWKS read again while the database fails answers the keys read before, not an error', async () => {
  const antes = await kidsDoJwks();
  expect(antes.length).toBeGreaterThan(0);
  const recarga = RECARGA_DO_JWKS.ms;
  RECARGA_DO_JWKS.ms = 0;
  mockRegistros.length = 0;
  const leitura = jest.spyOn(ChaveDoHub, 'findAll').mockRejectedValue(new Error('ECONNREFUSED'));
  try {
    const res = await fetch(`${suite.url.hub}/.well-known/jwks.json`);
    expect(res.status).toBe(200);
    expect(((await res.json()) as { keys: JWK[] }).keys.map((k) => k.kid).sort()).toEqual(antes);
    expect(leitura).toHaveBeenCalled();
    expect(mockRegistros.map((r) => r.args[1])).toEqual(['chaves do hub não relidas: o JWKS lista as lidas antes']);
  } finally {
    leitura.mockRestore();
    RECARGA_DO_JWKS.ms = recarga;
    mockRegistros.length = 0;
  }
});

test('two rotations in a row: never more than two keys sign at once', async () => {
  const [a] = (await ChaveDoHub.findAll({ where: { aposentada_em: null } })).map((c) => c.kid);
  const { kid: b } = await rotacionarChave();
  await passar(10 * 60_000);
  const { kid: c } = await rotacionarChave();
  const assinam = async (listadas: string[]) => (await assinadaPor(await umaEntrega(), listadas)).entradas;
  await passar(PUBLICADA_ANTES_DE_ASSINAR_MS - 10 * 60_000 + 1000);
  expect(await assinam([a, b, c])).toEqual([b, a]);
  // the first key, retiring two hours after the first rotation, stops when the third starts
  await passar(10 * 60_000);
  expect(await assinam([a, b, c])).toEqual([c, b]);
  await passar(ASSINAM_JUNTAS_MS);
  expect(await assinam([b, c])).toEqual([c]);
});

test('a rotation drops the private part of keys earlier rotations retired and no longer listed; their rows stay', async () => {
  const [a] = (await ChaveDoHub.findAll({ where: { aposentada_em: null } })).map((c) => c.kid);
  const { kid: b } = await rotacionarChave();
  // a retiring, still listed: kept whole
  await rotacionarChave();
  expect((await ChaveDoHub.findByPk(a))!.chave_privada_pem).toMatch(/^(?!aposentada$)/);
  await passar(PUBLICADA_ANTES_DE_ASSINAR_MS + ASSINAM_JUNTAS_MS + 2 * 3600_000);
  await rotacionarChave();
  // a and b retired over an hour ago: nothing left that signs
  const linhas = await ChaveDoHub.findAll({ where: { kid: [a, b] } });
  expect(linhas.map((l) => [l.kid, l.chave_privada_pem]).sort()).toEqual([[a, 'aposentada'], [b, 'aposentada']].sort());
  // the keys in service still sign
  expect((await chavesQueAssinam()).length).toBeGreaterThan(0);
});

test("a process whose clock is behind the one that dated the only key in service signs with it all the same", async () => {
  const kid = await soUmaChave();
  await ChaveDoHub.update({ assina_desde: new Date(Date.now() + 30_000) }, { where: { kid } });
  await carregarChavesDoHub();
  expect((await chavesQueAssinam()).map((c) => c.kid)).toEqual([kid]);
  expect(await assinadaPor(await umaEntrega(), [kid])).toEqual({ entradas: [kid], token: kid });
});

test('a rotation that fails while storing the new key changes nothing: the keys signing go on, none retired', async () => {
  const antes = (await ChaveDoHub.findAll({ order: [['kid', 'ASC']], raw: true })).map((c) => ({ kid: c.kid, aposentada_em: c.aposentada_em }));
  const falha = jest.spyOn(ChaveDoHub, 'create').mockRejectedValueOnce(new Error('the database went away'));
  try {
    await expect(rotacionarChave()).rejects.toThrow('the database went away');
  } finally {
    falha.mockRestore();
  }
  const depois = (await ChaveDoHub.findAll({ order: [['kid', 'ASC']], raw: true })).map((c) => ({ kid: c.kid, aposentada_em: c.aposentada_em }));
  expect(depois).toEqual(antes);
  expect(depois.filter((c) => c.aposentada_em === null)).toHaveLength(1);
});

test('processes starting together on an empty key table store one first key between them, not one each', async () => {
  await ChaveDoHub.destroy({ where: {}, truncate: true });
  await Promise.all([carregarChavesDoHub(), carregarChavesDoHub(), carregarChavesDoHub()]);
  const chaves = await ChaveDoHub.findAll();
  expect(chaves.map((c) => ({ desde: c.assina_desde.getTime(), aposentada_em: c.aposentada_em }))).toEqual([{ desde: 0, aposentada_em: null }]);
  expect(await kidsDoJwks()).toEqual([chaves[0].kid]);
});

test('outside LOCALHOST the first key comes from HUB_CHAVE_PRIVADA_ARQUIVO: without it, or with a file holding no Ed25519 key, the start stops naming it; with it that key signs (DESIGN §2)', async () => {
  const comAmbiente = (chavePrivadaArquivo?: string) => emProducao({ chavePrivadaArquivo, chaveDeCifra: CIFRA_DE_PRODUCAO });
  await ChaveDoHub.destroy({ where: {}, truncate: true });
  const semArquivo = comAmbiente();
  await expect(carregarChavesDoHub()).rejects.toThrow(/HUB_CHAVE_PRIVADA_ARQUIVO/);
  semArquivo.mockRestore();
  expect(await ChaveDoHub.count()).toBe(0);

  // a key of another kind, or no key, stops the start naming the file, and nothing is stored
  const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
  for (const [nome, conteudo, mensagem] of [
    ['rsa.pem', rsa, /^invalid configuration: HUB_CHAVE_PRIVADA_ARQUIVO: .*rsa\.pem holds no Ed25519 private key in PEM$/],
    ['lixo.pem', 'segredo-que-nao-e-pem', /^invalid configuration: HUB_CHAVE_PRIVADA_ARQUIVO: .*lixo\.pem holds no Ed25519 private key in PEM$/],
    ['nao-existe.pem', undefined, /^invalid configuration: HUB_CHAVE_PRIVADA_ARQUIVO: cannot read .*nao-existe\.pem \(ENOENT\)$/],
  ] as const) {
    const errada = comAmbiente(conteudo ? arquivoDeChave(nome, conteudo) : path.join(pasta, nome));
    const erro = await carregarChavesDoHub().then(() => undefined, (e: unknown) => e);
    errada.mockRestore();
    expect(erro).toBeInstanceOf(configDaSuite.ConfigError);
    expect((erro as Error).message).toMatch(mensagem);
    expect((erro as Error).message).not.toMatch(/segredo|BEGIN/);
    expect(await ChaveDoHub.count()).toBe(0);
  }

  const pem = novaPem();
  const comArquivo = comAmbiente(arquivoDeChave('hub.pem', pem));
  await carregarChavesDoHub();
  expect(await publicasDoJwks()).toEqual([publicaDe(pem)]);
  expect(mockRegistros).toEqual([]);

  // the file replaced later changes nothing, and the next reading of the keys says so, once
  const outra = novaPem();
  arquivoDeChave('hub.pem', outra);
  await carregarChavesDoHub();
  await carregarChavesDoHub();
  expect(await ChaveDoHub.count()).toBe(1);
  expect(await publicasDoJwks()).toEqual([publicaDe(pem)]);
  expect(mockRegistros.map((r) => r.args[1])).toEqual([expect.stringMatching(/^HUB_CHAVE_PRIVADA_ARQUIVO traz uma chave que o hub nunca guardou.*rotate-hub-key$/)]);
  // a file gone: said once too, and the hub goes on with its keys
  rmSync(path.join(pasta, 'hub.pem'));
  await carregarChavesDoHub();
  await carregarChavesDoHub();
  comArquivo.mockRestore();
  expect(mockRegistros.map((r) => r.args[1])).toEqual([expect.stringContaining('nunca guardou'), expect.stringContaining('não pôde ser lido')]);
});

describe('the private keys are stored encrypted (HUB_CHAVE_DE_CIFRA): a copy of the tables alone signs nothing', () => {
  test('no stored key holds its PEM; each, read back, signs the deliveries the JWKS verifies', async () => {
    await rotacionarChave();
    const guardadas = await ChaveDoHub.findAll();
    expect(guardadas.length).toBeGreaterThanOrEqual(2);
    for (const g of guardadas) {
      expect(g.chave_privada_pem).toMatch(/^v1\.[\w-]+\.[\w-]+\.[\w-]+$/);
      expect(g.chave_privada_pem).not.toContain('PRIVATE KEY');
    }
    const r = await umaEntrega();
    const kid = String(decodeProtectedHeader(String(r.cabecalhos['webhook-token'])).kid);
    expect((await assinadaPor(r, [kid])).entradas).toContain(kid);
  });

  test('keys in clear, as a version before the encryption stored them, are never taken: with no key of its own left, the hub in LOCALHOST generates one', async () => {
    mockRegistros.length = 0;
    const antigas = await todasEmClaro();
    await guardarEmClaro('antiga-em-claro');
    await carregarChavesDoHub();
    const [nova, ...outras] = await kidsDoJwks();
    expect(outras).toEqual([]);
    expect([...antigas, 'antiga-em-claro']).not.toContain(nova);
    expect(await assinadaPor(await umaEntrega(), [nova])).toEqual({ entradas: [nova], token: nova });
    // the rows in clear stay as they were: refused, said once each, however often the keys are read
    for (const kid of [...antigas, 'antiga-em-claro']) expect((await ChaveDoHub.findByPk(kid))!.chave_privada_pem).toContain('PRIVATE KEY');
    const recusadas = () => mockRegistros.filter((m) => m.nivel === 'error').map((m) => (m.args[0] as { kid: string }).kid);
    const ditas = recusadas();
    expect(ditas).toContain('antiga-em-claro');
    expect(new Set(ditas).size).toBe(ditas.length);
    await carregarChavesDoHub();
    expect(recusadas()).toEqual(ditas);
  });

  test("outside LOCALHOST, a hub whose keys are all in clear takes HUB_CHAVE_PRIVADA_ARQUIVO's key again: its row in clear gets the encrypted form, back in service, and it signs", async () => {
    await ChaveDoHub.destroy({ where: {}, truncate: true });
    const pem = novaPem();
    // the kid a version before the encryption gave it (the same derivation)
    const kid = createHash('sha256').update(String(publicaDe(pem))).digest('base64url').slice(0, 16);
    // retired by a rotation of that version, or dated by a writer to sign in a century: it is the
    // only key the hub can have back, in service from the first start's date
    await ChaveDoHub.create({ kid, chave_privada_pem: pem, assina_desde: new Date('2099-01-01'), aposentada_em: new Date(Date.now() - 2 * 3600_000) });
    // the cipher of the suite's hub, so that its reloads in this test read the key too
    emProducao({ chavePrivadaArquivo: arquivoDeChave('hub.pem', pem), chaveDeCifra: await cifraDaSuite() });
    await carregarChavesDoHub();
    jest.restoreAllMocks();
    expect((await ChaveDoHub.findAll()).map((c) => [c.kid, c.chave_privada_pem.startsWith('v1.'), c.assina_desde.getTime(), c.aposentada_em])).toEqual([[kid, true, 0, null]]);
    expect(await kidsDoJwks()).toEqual([kid]);
    expect(await assinadaPor(await umaEntrega(), [kid])).toEqual({ entradas: [kid], token: kid });
  });

  test("a row the hub did not write as it is is refused, neither listed nor signing, and said once: a key in clear beside the hub's, its rows deleted or not; another key's ciphertext under a kid of a writer's", async () => {
    const recarga = RECARGA_DAS_CHAVES.ms;
    RECARGA_DAS_CHAVES.ms = 0;
    try {
      mockRegistros.length = 0;
      const pem = await guardarEmClaro('intrusa', true);
      const [cifrada] = await ChaveDoHub.findAll({ where: { aposentada_em: null } });
      await ChaveDoHub.create({ kid: 'copia', chave_privada_pem: cifrada.chave_privada_pem, assina_desde: new Date(Date.now() - 1000), aposentada_em: null });
      await carregarChavesDoHub();
      await carregarChavesDoHub();
      const semIntrusas = async () => {
        expect(await publicasDoJwks()).not.toContain(publicaDe(pem));
        expect(await kidsDoJwks()).not.toContain('copia');
        expect((await chavesQueAssinam()).map((c) => c.kid)).not.toEqual(expect.arrayContaining(['intrusa']));
        const r = await umaEntrega();
        expect(['intrusa', 'copia']).not.toContain(decodeProtectedHeader(String(r.cabecalhos['webhook-token'])).kid);
        const intrusa = createPublicKey(pem);
        const conteudo = Buffer.concat([Buffer.from(`${r.cabecalhos['webhook-id']}.${r.cabecalhos['webhook-timestamp']}.`), r.bruto]);
        for (const e of String(r.cabecalhos['webhook-signature']).split(' ')) {
          expect(verify(null, conteudo, intrusa, Buffer.from(e.replace(/^v1a,/, ''), 'base64'))).toBe(false);
        }
        expect((await ChaveDoHub.findByPk('intrusa'))!.chave_privada_pem).toBe(pem);
      };
      await semIntrusas();
      const erros = mockRegistros.filter((m) => m.nivel === 'error').map((m) => m.args);
      expect(erros).toHaveLength(2);
      expect(erros).toEqual(
        expect.arrayContaining([
          [{ kid: 'intrusa' }, expect.stringMatching(/não gravou assim.*recusada/)],
          [{ kid: 'copia' }, expect.stringMatching(/não gravou assim.*recusada/)],
        ]),
      );
      // they hold no rotation up
      await expect(rotacionarChave()).resolves.toEqual(expect.objectContaining({ kid: expect.any(String) }));

      // the hub's own rows deleted too: it still refuses the writer's, and takes a key of its own
      await ChaveDoHub.destroy({ where: { kid: { [Op.notIn]: ['intrusa'] } } });
      await carregarChavesDoHub();
      const [propria, ...outras] = await kidsDoJwks();
      expect(outras).toEqual([]);
      expect(propria).not.toBe('intrusa');
      await semIntrusas();
    } finally {
      RECARGA_DAS_CHAVES.ms = recarga;
    }
  });

  test('outside LOCALHOST the start stops without HUB_CHAVE_DE_CIFRA, or with one the keys were not stored under, naming it; nothing is changed', async () => {
    const antes = (await ChaveDoHub.findAll({ raw: true })).map((c) => c.chave_privada_pem).sort();
    for (const [chaveDeCifra, mensagem] of [
      [undefined, /^invalid configuration: HUB_CHAVE_DE_CIFRA required outside LOCALHOST$/],
      [CIFRA_DE_PRODUCAO, /^invalid configuration: HUB_CHAVE_DE_CIFRA does not decrypt the stored signing key .*: it is not the key the hub's keys were stored under$/],
    ] as const) {
      const ambiente = emProducao({ chaveDeCifra });
      const erro = await carregarChavesDoHub().then(() => undefined, (e: unknown) => e);
      ambiente.mockRestore();
      expect(erro).toBeInstanceOf(configDaSuite.ConfigError);
      expect((erro as Error).message).toMatch(mensagem);
    }
    expect((await ChaveDoHub.findAll({ raw: true })).map((c) => c.chave_privada_pem).sort()).toEqual(antes);
  });

  test('rotate-hub-key and revoke-hub-key are refused before they store anything: run with another HUB_CHAVE_DE_CIFRA (a key no hub process could read), or while the hub holds no key of its own', async () => {
    const real = configDaSuite.config();
    const guardadas = async () => (await ChaveDoHub.findAll({ raw: true })).map((c) => ({ kid: c.kid, pem: c.chave_privada_pem, aposentada_em: c.aposentada_em }));
    /** `agir` with HUB_CHAVE_DE_CIFRA other than the hub's, as a process configured apart */
    const comOutraCifra = async (agir: () => Promise<unknown>) => {
      const espiao = jest.spyOn(configDaSuite, 'config').mockReturnValue({ ...real, hub: { ...real.hub, chaveDeCifra: CIFRA_DE_PRODUCAO } });
      try {
        return await agir();
      } finally {
        espiao.mockRestore();
      }
    };
    const antes = await guardadas();
    await expect(comOutraCifra(rotacionarChave)).rejects.toThrow(/HUB_CHAVE_DE_CIFRA does not decrypt the stored signing key/);
    await expect(comOutraCifra(() => revogarChave(antes[0].kid))).rejects.toThrow(/HUB_CHAVE_DE_CIFRA does not decrypt the stored signing key/);
    expect(await guardadas()).toEqual(antes);

    // only rows in clear (a version before the encryption), or none: nothing to check the cipher
    // against, and a key stored now would keep the hub's start from taking its own
    const [kid] = await todasEmClaro();
    for (const vazia of [false, true]) {
      if (vazia) await ChaveDoHub.destroy({ where: {}, truncate: true });
      const semChavePropria = await guardadas();
      await expect(rotacionarChave()).rejects.toThrow(/the hub holds no key of its own yet/);
      await expect(revogarChave(kid)).rejects.toThrow(/the hub holds no key of its own yet/);
      expect(await guardadas()).toEqual(semChavePropria);
    }
  });
});

describe('revoke-hub-key: a key that leaked stops signing and leaves the JWKS at each reading of the keys; the hub goes on signing with another', () => {
  test('the only key revoked: a new one signs now; revoked during a rotation: the key the rotation listed signs now; the revoked ones never come back', async () => {
    const k1 = await soUmaChave();
    // a row the hub refuses, in service: it is no key to go on signing with
    await guardarEmClaro('intrusa', true);

    const r1 = await revogarChave(k1);
    expect(r1.kid).toBe(k1);
    expect(Math.abs(Date.parse(r1.revogada_em) - Date.now())).toBeLessThan(5000);
    expect(r1.assinam).toEqual([expect.any(String)]);
    const [k2] = r1.assinam;
    expect([k1, 'intrusa']).not.toContain(k2);
    expect(await kidsDoJwks()).toEqual([k2]);
    expect(await assinadaPor(await umaEntrega(), [k2])).toEqual({ entradas: [k2], token: k2 });
    const revogada = await ChaveDoHub.findByPk(k1);
    expect(revogada!.revogada_em!.getTime()).toBe(Date.parse(r1.revogada_em));
    // dated retired as long ago as a key stays listed: a process of an earlier version drops it too
    expect(revogada!.aposentada_em!.getTime()).toBeLessThanOrEqual(Date.parse(r1.revogada_em) - PUBLICADA_APOS_APOSENTAR_MS);
    // the new key signs from a minute before: a hub process whose clock is behind has it too
    expect((await ChaveDoHub.findByPk(k2))!.assina_desde.getTime()).toBeLessThanOrEqual(Date.parse(r1.revogada_em) - 59_000);
    // the row keeps no key: a writer who clears its revocation gets nothing that signs
    expect(revogada!.chave_privada_pem).toBe('revogada');
    await ChaveDoHub.update({ revogada_em: null, aposentada_em: null }, { where: { kid: k1 } });
    await carregarChavesDoHub();
    expect(await kidsDoJwks()).toEqual([k2]);
    expect((await chavesQueAssinam()).map((c) => c.kid)).toEqual([k2]);

    // a rotation under way: its key, listed and not yet signing, takes over at once; one key in service
    const { kid: k3 } = await rotacionarChave();
    const r2 = await revogarChave(k2);
    expect(r2.assinam).toEqual([k3]);
    expect(await kidsDoJwks()).toEqual([k3]);
    expect(await assinadaPor(await umaEntrega(), [k3])).toEqual({ entradas: [k3], token: k3 });
    expect((await ChaveDoHub.findAll({ where: { aposentada_em: null, revogada_em: null } })).map((c) => c.kid)).toEqual([k3]);

    // the next rotation, and an hour's passing, leave the revoked keys out
    const { kid: k4 } = await rotacionarChave();
    await passar(PUBLICADA_ANTES_DE_ASSINAR_MS + 1000);
    expect(await kidsDoJwks()).toEqual([k3, k4].sort());
    expect((await chavesQueAssinam()).map((c) => c.kid)).toEqual([k4, k3]);
  });

  test('a key signing beside one that retires: revoked, the retiring one keeps signing to its time and a new one in service signs now', async () => {
    const antiga = await soUmaChave();
    const { kid: nova } = await rotacionarChave();
    await passar(PUBLICADA_ANTES_DE_ASSINAR_MS + 1000);
    expect((await chavesQueAssinam()).map((c) => c.kid)).toEqual([nova, antiga]);
    // rows the hub refuses, in service: no key of the hub's to go on with
    await guardarEmClaro('intrusa', true);
    const cifrada = (await ChaveDoHub.findByPk(antiga))!.chave_privada_pem;
    await ChaveDoHub.create({ kid: 'copia', chave_privada_pem: cifrada, assina_desde: new Date(Date.now() - 1000), aposentada_em: null });

    const { assinam } = await revogarChave(nova);
    expect(assinam).toHaveLength(2);
    const [terceira] = assinam;
    expect(assinam).toEqual([terceira, antiga]);
    expect([nova, antiga, 'intrusa', 'copia']).not.toContain(terceira);
    expect(await kidsDoJwks()).toEqual([antiga, terceira].sort());
    expect(await assinadaPor(await umaEntrega(), [antiga, terceira])).toEqual({ entradas: [terceira, antiga], token: terceira });
  });

  test('a kid the hub does not hold, or one revoked already, is refused and changes nothing; as an operator runs it, the result on stdout, a refusal on stderr', async () => {
    await soUmaChave();
    const guardadas = async () => (await ChaveDoHub.findAll({ order: [['kid', 'ASC']], raw: true })).map((c) => ({ ...c }));
    const antes = await guardadas();
    await expect(revogarChave('nao-existe')).rejects.toThrow(RevogacaoRecusada);
    expect(await guardadas()).toEqual(antes);

    const [kid] = await kidsDoJwks();
    const feito = await ateOFim(comandoDaSuite(['revoke-hub-key', kid]));
    expect(feito.codigo).toBe(0);
    const resultado = JSON.parse(feito.saida);
    expect(resultado).toEqual({ kid, revogada_em: expect.any(String), assinam: [expect.any(String)] });
    // another process's change: this one's JWKS lists the key in service within seconds, though
    // its signing keys are read again only within a minute
    await esperarAte(async () => JSON.stringify(await kidsDoJwks()) === JSON.stringify(resultado.assinam), 'the JWKS listing the new key', 5000);

    const depois = await guardadas();
    const recusado = await ateOFim(comandoDaSuite(['revoke-hub-key', kid]));
    expect(recusado.codigo).not.toBe(0);
    expect(recusado.saida).toBe('');
    expect(recusado.erros).toMatch(new RegExp(`^revoke-hub-key refused: the hub holds no key ${kid} that is not revoked`, 'm'));
    expect(await guardadas()).toEqual(depois);
  }, 60_000);

  test("HUB_CHAVE_PRIVADA_ARQUIVO's key revoked: the next reading says so; a hub left without a key of its own refuses to take it back", async () => {
    await ChaveDoHub.destroy({ where: {}, truncate: true });
    emProducao({ chavePrivadaArquivo: arquivoDeChave('hub.pem', novaPem()), chaveDeCifra: await cifraDaSuite() });
    await carregarChavesDoHub();
    const [kid] = await kidsDoJwks();
    mockRegistros.length = 0;
    await revogarChave(kid);
    expect(mockRegistros.map((r) => r.args[1])).toEqual([expect.stringMatching(/^HUB_CHAVE_PRIVADA_ARQUIVO traz uma chave revogada/)]);

    await ChaveDoHub.destroy({ where: { revogada_em: null } });
    await expect(carregarChavesDoHub()).rejects.toThrow(new RegExp(`^invalid configuration: the hub's key ${kid} was revoked`));
    expect((await ChaveDoHub.findAll()).map((c) => [c.kid, c.chave_privada_pem])).toEqual([[kid, 'revogada']]);
  });
});
