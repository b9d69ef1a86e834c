import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, KeyObject, sign, webcrypto } from 'node:crypto';
import { importPKCS8, JWK, SignJWT } from 'jose';
import { Op, Transaction } from 'sequelize';
import { config, ConfigError } from '../../config';
import { lerArquivoDeChave } from '../../lib/arquivo-de-chave';
import { Cifra, estaCifrado, PREFIXO_DO_CIFRADO } from '../../lib/cifra';
import { banco, sozinho } from '../../lib/database';
import { logger } from '../../lib/logger';
import { segredoDoServico } from '../../lib/segredo-local';
import { ChaveDoHub, Segredo } from '../../models/hub';

/**
 * The hub's Ed25519 keys and the two signatures of every attempt (DESIGN §5): Standard Webhooks
 * `v1a` over "{webhook-id}.{webhook-timestamp}.{body}" and a `webhook-token` JWS.
 */
export interface Chave {
  kid: string;
  pem: string;
  privada: KeyObject;
  /** the same key as WebCrypto's, which jose signs with: imported once, not on every token */
  paraJose?: Promise<webcrypto.CryptoKey>;
  publicaJwk: JWK;
  assinaDesde: number;
  aposentadaEm: number | null;
}

/** A retired key stays listed this long: longer than any attempt's time-out plus the token's life. */
export const PUBLICADA_APOS_APOSENTAR_MS = 60 * 60_000;
/** A new key is listed this long before it signs, so subscribers' cached key sets can catch up. */
export const PUBLICADA_ANTES_DE_ASSINAR_MS = 60 * 60_000;
/**
 * Once the new key signs, the old one goes on signing beside it this long (`webhook-signature`
 * carries both entries): a subscriber whose key set is older than the rotation still verifies.
 */
export const ASSINAM_JUNTAS_MS = 60 * 60_000;
/** How old the keys a process holds may get before it reads them again (tests lower it). */
export const RECARGA_DAS_CHAVES = { ms: 60_000 };

const log = logger('hub-chaves');

let chaves: Chave[] = [];
let carregadasEm = 0;

/** A key as it signs; its kid is derived from its public half. */
function chaveDoPem(pem: string, assinaDesde: Date, aposentadaEm: Date | null): Chave {
  const privada = createPrivateKey(pem);
  const jwk = createPublicKey(privada).export({ format: 'jwk' }) as JWK;
  const kid = createHash('sha256').update(String(jwk.x)).digest('base64url').slice(0, 16);
  return {
    kid,
    pem,
    privada,
    publicaJwk: { kty: 'OKP', crv: 'Ed25519', x: jwk.x, kid, alg: 'EdDSA', use: 'sig' },
    assinaDesde: assinaDesde.getTime(),
    aposentadaEm: aposentadaEm?.getTime() ?? null,
  };
}

const kidDoPem = (pem: string) => chaveDoPem(pem, new Date(0), null).kid;

function novaChavePem(): string {
  return generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
}

/**
 * HUB_CHAVE_PRIVADA_ARQUIVO's PEM, refused unless it holds an Ed25519 private key: another kind
 * would be stored for good (the file is read only while the hub holds no key of its own) and every
 * delivery would then fail to be signed, with no attempt recorded. The message names the file,
 * never its contents.
 */
async function chaveDoArquivo(arquivo: string): Promise<string> {
  const { pem, chave } = await lerArquivoDeChave('HUB_CHAVE_PRIVADA_ARQUIVO', arquivo, createPrivateKey);
  if (chave?.asymmetricKeyType !== 'ed25519') throw new ConfigError(`invalid configuration: HUB_CHAVE_PRIVADA_ARQUIVO: ${arquivo} holds no Ed25519 private key in PEM`);
  return pem;
}

/**
 * HUB_CHAVE_PRIVADA_ARQUIVO is read only while the hub holds no key of its own (its first start):
 * a file replaced later, to change the key as identity's file changes identity's, changes nothing.
 * Each time the keys are read the file is looked at, and a key in it that the hub never stored, one
 * revoked, or a file that cannot be read is said once, instead of leaving the operator to believe
 * the new key signs.
 */
async function conferirArquivoDaChave(): Promise<void> {
  const arquivo = config().hub.chavePrivadaArquivo;
  if (!arquivo) return;
  let kid: string;
  try {
    kid = kidDoPem(await chaveDoArquivo(arquivo));
  } catch (err) {
    if (arquivoVisto !== ILEGIVEL) log.warn({ arquivo, erro: (err as Error).message }, 'HUB_CHAVE_PRIVADA_ARQUIVO não pôde ser lido; o hub assina com as chaves que guardou');
    arquivoVisto = ILEGIVEL;
    return;
  }
  const guardada = await ChaveDoHub.findByPk(kid, { attributes: ['kid', 'revogada_em'] });
  const visto = `${kid} ${guardada?.revogada_em ? 'revogada' : guardada ? 'guardada' : 'nunca guardada'}`;
  if (visto === arquivoVisto) return;
  arquivoVisto = visto;
  if (guardada?.revogada_em) {
    log.warn({ arquivo, kid }, 'HUB_CHAVE_PRIVADA_ARQUIVO traz uma chave revogada (revoke-hub-key): troque o arquivo por outra chave, ou a próxima primeira chave do hub será recusada');
  } else if (!guardada) {
    log.warn({ arquivo, kid }, 'HUB_CHAVE_PRIVADA_ARQUIVO traz uma chave que o hub nunca guardou: o arquivo só é lido enquanto o hub não tem chave própria; para trocar de chave, use rotate-hub-key');
  }
}
/** The file's key last looked at (its kid and its row's state), so each is said once. */
let arquivoVisto: string | undefined;
const ILEGIVEL = '(ilegível)';

/**
 * The private keys are stored encrypted (lib/cifra.ts) under HUB_CHAVE_DE_CIFRA (in LOCALHOST, a
 * key generated on first start): whoever reads a copy of the hub's tables alone (a backup, a
 * replica) cannot sign deliveries its subscribers would take for the hub's.
 */
async function cifraDoHub(): Promise<Cifra> {
  return new Cifra(await segredoDoServico({ doAmbiente: config().hub.chaveDeCifra, variavel: 'HUB_CHAVE_DE_CIFRA', modelo: Segredo, nome: 'cifra' }));
}

/**
 * The cipher checked against a key already stored, before anything is written with it: a process
 * given another key (a rotation run from elsewhere) would store a key the others cannot read, and
 * stop them all. Answers whether the hub holds an encrypted key to check it against.
 */
async function conferirCifra(c: Cifra): Promise<boolean> {
  const amostra = await ChaveDoHub.findOne({ where: CIFRADA });
  if (amostra) pemGuardado(c, amostra);
  return amostra !== null;
}

/**
 * A rotation or revocation needs a key of the hub's own in the table: the cipher is checked
 * against it, and the hub's start would not take its first key beside the one stored here.
 */
async function cifraConferida(): Promise<Cifra> {
  const c = await cifraDoHub();
  if (!(await conferirCifra(c))) {
    throw new ConfigError('the hub holds no key of its own yet (none, or only rows in clear): start the hub first, which takes one');
  }
  return c;
}

function pemGuardado(c: Cifra, guardada: ChaveDoHub): string {
  try {
    return c.decifrar(guardada.chave_privada_pem);
  } catch {
    throw new ConfigError(`invalid configuration: HUB_CHAVE_DE_CIFRA does not decrypt the stored signing key ${guardada.kid}: it is not the key the hub's keys were stored under`);
  }
}

/** Rows whose key the hub stored itself: encrypted under HUB_CHAVE_DE_CIFRA. */
const CIFRADA = { chave_privada_pem: { [Op.like]: `${PREFIXO_DO_CIFRADO}%` } };

/** What a revoked key's row keeps instead of its key: nothing that signs, were the row restored. */
const REVOGADA = 'revogada';
/** What a retired key's row keeps once no process reads it (rotacionarChave). */
const APOSENTADA = 'aposentada';

/**
 * A row's key, unless the hub did not write the row as it is: in clear (a writer of the table would
 * have the hub sign with a key it holds too; encrypted rows cannot be forged, GCM's tag), or under
 * a kid that is not its key's. Such a row is refused, neither listed nor signing; said once per
 * process.
 */
function chaveAceita(g: ChaveDoHub, c: Cifra): Chave | null {
  // the kid derived from the key, compared with the row's
  const chave = estaCifrado(g.chave_privada_pem) ? chaveDoPem(pemGuardado(c, g), g.assina_desde, g.aposentada_em) : null;
  if (chave?.kid === g.kid) return chave;
  if (!recusadas.has(g.kid)) {
    recusadas.add(g.kid);
    log.error({ kid: g.kid }, 'chave_do_hub tem uma linha que o hub não gravou assim (em claro, ou com o kid de outra chave): recusada, não assina nem é publicada. Apague a linha; para uma nova chave, use rotate-hub-key');
  }
  return null;
}
const recusadas = new Set<string>();

/**
 * A key of the hub's own (generated, or HUB_CHAVE_PRIVADA_ARQUIVO's) stored encrypted. A row of
 * the same kid in clear (the file's key, stored by a version before the encryption) takes the
 * encrypted form, in service from `assinaDesde` whatever the row said: it is the hub's only key
 * now. A revoked row of that kid throws: a revoked key never signs again.
 */
async function guardar(pem: string, cifra: Cifra, assinaDesde: Date, transaction?: Transaction): Promise<string> {
  const kid = kidDoPem(pem);
  const existente = await ChaveDoHub.findByPk(kid, { transaction });
  if (existente?.revogada_em) throw new ConfigError(`invalid configuration: the hub's key ${kid} was revoked (revoke-hub-key): it never signs again; give the hub another key`);
  if (!existente) await ChaveDoHub.create({ kid, chave_privada_pem: cifra.cifrar(pem), assina_desde: assinaDesde }, { transaction });
  else if (!estaCifrado(existente.chave_privada_pem)) {
    await existente.update({ chave_privada_pem: cifra.cifrar(pem), assina_desde: assinaDesde, aposentada_em: null }, { transaction });
  }
  return kid;
}

/**
 * Loads the keys. While the hub holds no key of its own (a first start, or only rows it refuses),
 * it imports HUB_CHAVE_PRIVADA_ARQUIVO, or in LOCALHOST generates one (DESIGN §2: secrets come
 * from files named by env, generated only there), under a named lock: processes starting together
 * would each generate a key of their own, and both would sign from then on. Later keys come from
 * `rotate-hub-key`.
 */
export async function carregarChavesDoHub(): Promise<void> {
  const c = await cifraDoHub();
  if ((await ChaveDoHub.count({ where: CIFRADA })) === 0) {
    const primeira = async () => {
      if ((await ChaveDoHub.count({ where: CIFRADA })) > 0) return true;
      const arquivo = config().hub.chavePrivadaArquivo;
      if (!arquivo && config().ambiente !== 'LOCALHOST') {
        throw new ConfigError('invalid configuration: HUB_CHAVE_PRIVADA_ARQUIVO required outside LOCALHOST for the hub\'s first signing key (an Ed25519 PKCS#8 PEM)');
      }
      await guardar(arquivo ? await chaveDoArquivo(arquivo) : novaChavePem(), c, new Date(0));
      return true;
    };
    if (!(await sozinho('hub', 'primeira_chave', primeira, 30))) throw new Error('outro processo gera a primeira chave do hub há mais de 30 s');
  }
  await conferirArquivoDaChave();
  const limite = new Date(Date.now() - PUBLICADA_APOS_APOSENTAR_MS);
  const guardadas = await ChaveDoHub.findAll({
    // a key whose private part a rotation dropped is no tampered row: a process whose clock is
    // behind the command's may still count it as listed
    where: { revogada_em: null, chave_privada_pem: { [Op.ne]: APOSENTADA }, [Op.or]: [{ aposentada_em: null }, { aposentada_em: { [Op.gt]: limite } }] },
    order: [['assina_desde', 'DESC']],
  });
  chaves = guardadas.map((g) => chaveAceita(g, c)).filter((k): k is Chave => k !== null);
  carregadasEm = Date.now();
}

let recarga: Promise<void> | null = null;

/**
 * The key set the JWKS serves is read again after this long (a subscriber asks for it rarely: on an
 * unknown kid, or once its cached copy is old). A key a revocation puts in service signs in the
 * process that reloads first; a subscriber asking for it then must find it in whichever process
 * answers, and after a failed fetch its verifier waits before asking again.
 */
export const RECARGA_DO_JWKS = { ms: 2000 };

/** Other processes pick a rotation up within a minute; the attempts under way then share one reload. */
async function atuais(idadeMaximaMs = RECARGA_DAS_CHAVES.ms): Promise<Chave[]> {
  if (Date.now() - carregadasEm > idadeMaximaMs) {
    recarga ??= carregarChavesDoHub().finally(() => (recarga = null));
    await recarga;
  }
  return chaves;
}

/**
 * `suite rotate-hub-key`: a new key, listed now and signing after PUBLICADA_ANTES_DE_ASSINAR_MS;
 * the keys signing today sign beside it for ASSINAM_JUNTAS_MS more, then retire and stay listed
 * PUBLICADA_APOS_APOSENTAR_MS.
 */
export async function rotacionarChave(): Promise<{ kid: string; assina_desde: string }> {
  const c = await cifraConferida();
  const assinaDesde = new Date(Date.now() + PUBLICADA_ANTES_DE_ASSINAR_MS);
  // the retirements and the new key are stored together: retired keys without their successor
  // would leave the hub with nothing to sign with once they stop
  const kid = await umaMudancaDeChavesPorVez(() =>
    banco('hub').transaction(async (transaction) => {
      // keys retired by earlier rotations and no longer listed are read by no process again: their
      // private part goes, or a copy of this table and the cipher key would hold every key the hub
      // ever signed with (their rows stay, as a record)
      const esquecidas = { revogada_em: null, aposentada_em: { [Op.lt]: new Date(Date.now() - PUBLICADA_APOS_APOSENTAR_MS - FOLGA_DO_RELOGIO_MS) } };
      await ChaveDoHub.update({ chave_privada_pem: APOSENTADA }, { where: esquecidas, transaction });
      // a key still retiring from an earlier rotation stops when this one starts: never three at once
      await ChaveDoHub.update({ aposentada_em: assinaDesde }, { where: { aposentada_em: { [Op.gt]: assinaDesde } }, transaction });
      await ChaveDoHub.update({ aposentada_em: new Date(assinaDesde.getTime() + ASSINAM_JUNTAS_MS) }, { where: { aposentada_em: null }, transaction });
      return guardar(novaChavePem(), c, assinaDesde, transaction);
    }),
  );
  await recarregarDepoisDeMudar();
  return { kid, assina_desde: assinaDesde.toISOString() };
}

/** A reload under way may have read the keys before a change's commit: it ends first, then this one. */
async function recarregarDepoisDeMudar(): Promise<void> {
  await recarga?.catch(() => undefined);
  await carregarChavesDoHub();
}

/** `revoke-hub-key` named a key the hub does not hold, or one revoked already. */
export class RevogacaoRecusada extends Error {}

/**
 * A key put in service by a revocation signs from a minute before it: a hub process whose clock is
 * up to that much behind the command's signs with it at once, not with chavesQueAssinam's stand-in.
 */
const FOLGA_DO_RELOGIO_MS = 60_000;

/**
 * Rotations and revocations one at a time, across processes: each decides from the keys as the
 * other left them (a revocation blind to a rotation's new key would put a second one in service).
 */
async function umaMudancaDeChavesPorVez<T>(mudar: () => Promise<T>): Promise<T> {
  const feito = await sozinho('hub', 'mudar_chaves', async () => ({ r: await mudar() }), 30);
  if (!feito) throw new Error('outro comando muda as chaves do hub há mais de 30 s');
  return feito.r;
}

/**
 * `suite revoke-hub-key <kid>`, for a key that leaked: it neither signs nor is listed from the
 * next reading of the keys in each hub process (within a minute; the JWKS within RECARGA_DO_JWKS, so
 * a key put in service here is listed before most processes sign with it); subscribers keep a key set up
 * to its Cache-Control age (5 minutes) and fetch it again on an unknown kid. The row keeps no key:
 * a writer who clears its revocation gets nothing that signs (a backup's copy of the row would;
 * docs/decisoes.md). When no key the hub holds (encrypted, in service) signs then, the one a
 * rotation listed starts signing now, or else a new key does: the hub never stops signing, and
 * never holds two keys in service.
 */
export async function revogarChave(kid: string): Promise<{ kid: string; revogada_em: string; assinam: string[] }> {
  // a new key may be stored: under the hub's cipher, as in a rotation
  const c = await cifraConferida();
  const agora = await umaMudancaDeChavesPorVez(() =>
    banco('hub').transaction(async (transaction) => {
      const guardadas = await ChaveDoHub.findAll({ where: { revogada_em: null }, transaction });
      const revogada = guardadas.find((g) => g.kid === kid);
      if (!revogada) throw new RevogacaoRecusada(`the hub holds no key ${kid} that is not revoked`);
      const momento = new Date();
      // retired as long ago as a key stays listed: no process of any version reads it again
      // (one whose clock is behind the command's, once it catches up)
      const aposentada_em = new Date(momento.getTime() - PUBLICADA_APOS_APOSENTAR_MS);
      await revogada.update({ revogada_em: momento, aposentada_em, chave_privada_pem: REVOGADA }, { transaction });
      // rows the load refuses sign nothing: they do not count
      const emServico = guardadas.filter((g) => g !== revogada && g.aposentada_em === null && chaveAceita(g, c));
      if (emServico.some((g) => g.assina_desde <= momento)) return momento;
      const desde = new Date(momento.getTime() - FOLGA_DO_RELOGIO_MS);
      const listada = emServico.find((g) => g.assina_desde > momento);
      if (listada) await listada.update({ assina_desde: desde }, { transaction });
      else await guardar(novaChavePem(), c, desde, transaction);
      return momento;
    }),
  );
  await recarregarDepoisDeMudar();
  return { kid, revogada_em: agora.toISOString(), assinam: (await chavesQueAssinam()).map((k) => k.kid) };
}

/** A reading of the keys that failed (the database away for a moment): the JWKS serves those read before, if any. */
function lidasAntes(err: unknown): Chave[] {
  if (!chaves.length) throw err;
  log.warn({ err }, 'chaves do hub não relidas: o JWKS lista as lidas antes');
  return chaves;
}

export async function jwksDoHub(): Promise<{ keys: JWK[] }> {
  const agora = Date.now();
  return {
    keys: (await atuais(RECARGA_DO_JWKS.ms).catch(lidasAntes))
      .filter((c) => c.aposentadaEm === null || c.aposentadaEm + PUBLICADA_APOS_APOSENTAR_MS > agora)
      .map((c) => c.publicaJwk),
  };
}

/**
 * The keys that sign now: normally one; two around a rotation; newest first. Asked before the
 * delivery is read (a reload may wait on the database), so that nothing but computing stands
 * between the last look at the delivery and its sending.
 */
export async function chavesQueAssinam(): Promise<Chave[]> {
  const agora = Date.now();
  const todas = await atuais();
  const ativas = todas.filter((c) => c.assinaDesde <= agora && (c.aposentadaEm === null || c.aposentadaEm > agora));
  if (ativas.length) return ativas;
  // none by this process's clock (behind the one that dated a key, or a retirement seen before the
  // next key's start): the newest key that ever signed, or else the next to sign (newest first)
  const assinaram = todas.filter((c) => c.assinaDesde <= agora);
  return assinaram.length ? assinaram.slice(0, 1) : todas.filter((c) => c.aposentadaEm === null).slice(-1);
}

export interface Assinatura {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
  'webhook-token': string;
}

/** Headers of one attempt, signed afresh. */
export async function assinarEntrega(
  p: {
    webhookId: string;
    corpo: string;
    audiencia: string;
    assinaturaId: string;
    tipo: string;
    versao: number;
  },
  assinantes: Chave[],
): Promise<Assinatura> {
  if (!assinantes.length) throw new Error('o hub não tem chave que assine: nenhuma chave própria em serviço (chave_do_hub)');
  const ts = Math.floor(Date.now() / 1000);
  const conteudo = Buffer.from(`${p.webhookId}.${ts}.${p.corpo}`);
  const assinaturas = assinantes.map((c) => `v1a,${sign(null, conteudo, c.privada).toString('base64')}`);
  const principal = assinantes[0];
  const jws = await new SignJWT({
    tipo: p.tipo,
    versao: p.versao,
    body_sha256: createHash('sha256').update(p.corpo).digest('base64url'),
  })
    .setProtectedHeader({ alg: 'EdDSA', kid: principal.kid, typ: 'webhook+jwt' })
    .setIssuer(config().servicos.hub.url)
    .setAudience(p.audiencia)
    .setSubject(p.assinaturaId)
    .setJti(p.webhookId)
    .setIssuedAt(ts)
    .setExpirationTime(ts + 300)
    .sign(await (principal.paraJose ??= importPKCS8(principal.pem, 'EdDSA')));
  return {
    'webhook-id': p.webhookId,
    'webhook-timestamp': String(ts),
    'webhook-signature': assinaturas.join(' '),
    'webhook-token': jws,
  };
}
