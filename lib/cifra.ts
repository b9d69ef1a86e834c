import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes } from 'node:crypto';

/** The stored form's version mark: `v1.<iv>.<tag>.<ciphertext>`, base64url. */
const VERSAO = 'v1';

/**
 * Secrets a service must use itself, kept encrypted with AES-256-GCM under SHA-256 of the
 * service's key (its `<SERVICE>_CHAVE_DE_CIFRA`; in LOCALHOST, one generated on first start), so
 * a copy of its tables alone (a backup, a replica) does not give them away.
 */
export class Cifra {
  private readonly chave: Buffer;

  constructor(segredo: Buffer) {
    this.chave = createHash('sha256').update(segredo).digest();
  }

  /** Another key for another use (a keyed hash), derived from this one. */
  derivar(uso: string): Buffer {
    return createHmac('sha256', this.chave).update(uso).digest();
  }

  /** `iv`: random unless given (one derived from the text makes equal texts equal ciphertexts) */
  cifrar(texto: string, iv: Buffer = randomBytes(12)): string {
    const cifra = createCipheriv('aes-256-gcm', this.chave, iv);
    const corpo = Buffer.concat([cifra.update(texto, 'utf8'), cifra.final()]);
    return [VERSAO, iv.toString('base64url'), cifra.getAuthTag().toString('base64url'), corpo.toString('base64url')].join('.');
  }

  /** Throws when `guardado` is not in the stored form, or was not encrypted under this key. */
  decifrar(guardado: string): string {
    const [versao, iv, tag, corpo] = guardado.split('.');
    if (versao !== VERSAO || !iv || !tag || corpo === undefined) throw new Error('unknown ciphertext format');
    // the whole 16-byte tag: without the option GCM takes one as short as 4 bytes, which a writer of
    // the table could forge by trying
    const decifra = createDecipheriv('aes-256-gcm', this.chave, Buffer.from(iv, 'base64url'), { authTagLength: 16 });
    decifra.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decifra.update(Buffer.from(corpo, 'base64url')), decifra.final()]).toString('utf8');
  }
}

/** How every encrypted value starts (values stored before their encryption do not). */
export const PREFIXO_DO_CIFRADO = `${VERSAO}.`;

export const estaCifrado = (guardado: string): boolean => guardado.startsWith(PREFIXO_DO_CIFRADO);
