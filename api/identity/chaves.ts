import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, KeyObject } from 'node:crypto';
import path from 'node:path';
import jwt from 'jsonwebtoken';
import type { JSONWebKeySet, JWK } from 'jose';
import { config, ConfigError } from '../../config';
import { lerArquivoDeChave } from '../../lib/arquivo-de-chave';
import { ChaveDeAssinatura } from '../../models/identity';

/**
 * Token signing keys (DESIGN §3): RS256. Outside LOCALHOST the private key comes from the PEM
 * file named by IDENTITY_CHAVE_PRIVADA_ARQUIVO; in LOCALHOST one is generated on first start and
 * kept in the database. The newest key signs; every known key is published in the JWKS, and so
 * are the keys of IDENTITY_CHAVES_DE_VERIFICACAO_ARQUIVOS, which never sign: tokens signed before the
 * key file was replaced keep verifying until they expire.
 */
interface Chave {
  kid: string;
  privada: KeyObject;
  publicaJwk: JWK;
}

let chaves: Chave[] = [];
/** Keys that verify and never sign (one that signed before a rotation, or the next before it signs): published only. */
let soDeVerificacao: JWK[] = [];

function jwkPublico(publica: KeyObject, kid?: string): JWK {
  const jwk = publica.export({ format: 'jwk' }) as JWK;
  const id = kid ?? createHash('sha256').update(`${jwk.e}.${jwk.n}`).digest('base64url').slice(0, 16);
  return { ...jwk, kid: id, alg: 'RS256', use: 'sig' };
}

function chaveDe(privada: KeyObject, kid?: string): Chave {
  const publicaJwk = jwkPublico(createPublicKey(privada), kid);
  return { kid: publicaJwk.kid!, privada, publicaJwk };
}

/**
 * A configured key file, read at start: unreadable, or no RSA key of at least 2048 bits in PEM,
 * stops the start with the variable and the file named, never the file's contents.
 */
async function lerChave(variavel: string, arquivo: string, comoChave: (pem: string) => KeyObject, dica = ''): Promise<KeyObject> {
  const { chave } = await lerArquivoDeChave(variavel, arquivo, comoChave, dica);
  if (chave?.asymmetricKeyType !== 'rsa') throw new ConfigError(`invalid configuration: ${variavel}: ${arquivo} holds no RSA key in PEM`);
  // jsonwebtoken refuses to sign with a shorter one and jose to verify with it: the service would
  // start and then answer 500 to every login
  const bits = chave.asymmetricKeyDetails?.modulusLength ?? 0;
  if (bits < 2048) throw new ConfigError(`invalid configuration: ${variavel}: ${arquivo} holds an RSA key of ${bits} bits; tokens need at least 2048`);
  return chave;
}

export async function carregarChaves(): Promise<void> {
  const { chavePrivadaArquivo: arquivo, chavesDeVerificacaoArquivos } = config().identity;
  // createPublicKey takes a private PEM too: an old key file can be listed as it was. A list
  // written with commas, as it once was, is one name that no file has: the message says why
  const virgulas = ` (files are separated by "${path.delimiter}", as in PATH, not by commas)`;
  const publicadas = await Promise.all(
    chavesDeVerificacaoArquivos.map(async (a) =>
      jwkPublico(await lerChave('IDENTITY_CHAVES_DE_VERIFICACAO_ARQUIVOS', a, createPublicKey, a.includes(',') ? virgulas : '')),
    ),
  );
  if (arquivo) {
    chaves = [chaveDe(await lerChave('IDENTITY_CHAVE_PRIVADA_ARQUIVO', arquivo, createPrivateKey))];
  } else {
    let guardadas = await ChaveDeAssinatura.findAll({ order: [['criada_em', 'DESC']] });
    if (!guardadas.length) {
      const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
      const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
      const nova = chaveDe(privateKey);
      await ChaveDeAssinatura.findOrCreate({ where: { kid: nova.kid }, defaults: { kid: nova.kid, chave_privada_pem: pem } });
      guardadas = await ChaveDeAssinatura.findAll({ order: [['criada_em', 'DESC']] });
    }
    chaves = guardadas.map((c) => chaveDe(createPrivateKey(c.chave_privada_pem), c.kid));
  }
  // one entry per kid: the signing key also listed among the old ones, or a file listed twice
  const porKid = new Map(publicadas.map((j) => [j.kid, j]));
  for (const c of chaves) porKid.delete(c.kid);
  soDeVerificacao = [...porKid.values()];
}

export function jwks(): JSONWebKeySet {
  return { keys: [...chaves.map((c) => c.publicaJwk), ...soDeVerificacao] };
}

export function assinar(claims: Record<string, unknown>, sub: string, segundos: number): string {
  const atual = chaves[0];
  if (!atual) throw new Error('signing keys not loaded');
  return jwt.sign(claims, atual.privada, {
    algorithm: 'RS256',
    keyid: atual.kid,
    subject: sub,
    issuer: config().servicos.identity.url,
    expiresIn: segundos,
  });
}
