import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, KeyObject } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import jwt from 'jsonwebtoken';
import type { JSONWebKeySet, JWK } from 'jose';
import { config } from '../../config';
import { ChaveDeAssinatura } from '../../models/identity';

/**
 * Token signing keys (DESIGN §3): RS256. Outside LOCALHOST the private key comes from the PEM
 * file named by IDENTITY_CHAVE_PRIVADA_ARQUIVO; in LOCALHOST one is generated on first start and
 * kept in the database. The newest key signs; every known key is published in the JWKS.
 */
interface Chave {
  kid: string;
  privada: KeyObject;
  publicaJwk: JWK;
}

let chaves: Chave[] = [];

function chaveDoPem(pem: string, kid?: string): Chave {
  const privada = createPrivateKey(pem);
  const jwk = createPublicKey(privada).export({ format: 'jwk' }) as JWK;
  const id = kid ?? createHash('sha256').update(`${jwk.e}.${jwk.n}`).digest('base64url').slice(0, 16);
  return { kid: id, privada, publicaJwk: { ...jwk, kid: id, alg: 'RS256', use: 'sig' } };
}

export async function carregarChaves(): Promise<void> {
  const arquivo = config().identity.chavePrivadaArquivo;
  if (arquivo) {
    chaves = [chaveDoPem(await readFile(arquivo, 'utf8'))];
    return;
  }
  let guardadas = await ChaveDeAssinatura.findAll({ order: [['criada_em', 'DESC']] });
  if (!guardadas.length) {
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
    const nova = chaveDoPem(pem);
    await ChaveDeAssinatura.findOrCreate({ where: { kid: nova.kid }, defaults: { kid: nova.kid, chave_privada_pem: pem } });
    guardadas = await ChaveDeAssinatura.findAll({ order: [['criada_em', 'DESC']] });
  }
  chaves = guardadas.map((c) => chaveDoPem(c.chave_privada_pem, c.kid));
}

export function jwks(): JSONWebKeySet {
  return { keys: chaves.map((c) => c.publicaJwk) };
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
