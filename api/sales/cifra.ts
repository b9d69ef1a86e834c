import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes } from 'node:crypto';
import { config } from '../../config';
import { segredoDoServico } from '../../lib/segredo-local';
import { Segredo } from '../../models/sales';

/**
 * Secrets the sales service must use itself (a webhook HMAC key, the chat platform's API token)
 * are kept encrypted with AES-256-GCM: `v1.<iv>.<tag>.<ciphertext>`, base64url. The key is
 * SHA-256 of SALES_CHAVE_DE_CIFRA (in LOCALHOST, of a key generated on first start).
 */
let chave: Buffer | undefined;
/** derived once from the same key, for the webhook tokens' keyed hash */
let chaveDoResumo: Buffer | undefined;

export async function carregarChaveDeCifra(): Promise<void> {
  const segredo = await segredoDoServico({
    doAmbiente: config().sales.chaveDeCifra,
    variavel: 'SALES_CHAVE_DE_CIFRA',
    modelo: Segredo,
    nome: 'cifra',
  });
  chave = createHash('sha256').update(segredo).digest();
  chaveDoResumo = createHmac('sha256', chave).update('token-de-webhook').digest();
}

function carregada(k: Buffer | undefined): Buffer {
  if (!k) throw new Error('sales encryption key not loaded');
  return k;
}

/**
 * The stored form of a webhook token: HMAC-SHA256 under a key derived from the encryption key, so
 * a copy of the table alone cannot be used to guess tokens offline.
 */
export function resumoDoToken(token: string): string {
  return createHmac('sha256', carregada(chaveDoResumo)).update(token, 'utf8').digest('hex');
}

export function cifrar(texto: string): string {
  const iv = randomBytes(12);
  const cifra = createCipheriv('aes-256-gcm', carregada(chave), iv);
  const corpo = Buffer.concat([cifra.update(texto, 'utf8'), cifra.final()]);
  return ['v1', iv.toString('base64url'), cifra.getAuthTag().toString('base64url'), corpo.toString('base64url')].join('.');
}

export function decifrar(guardado: string): string {
  const [versao, iv, tag, corpo] = guardado.split('.');
  if (versao !== 'v1' || !iv || !tag || corpo === undefined) throw new Error('unknown ciphertext format');
  const decifra = createDecipheriv('aes-256-gcm', carregada(chave), Buffer.from(iv, 'base64url'));
  decifra.setAuthTag(Buffer.from(tag, 'base64url'));
  return Buffer.concat([decifra.update(Buffer.from(corpo, 'base64url')), decifra.final()]).toString('utf8');
}
