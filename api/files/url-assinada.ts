import { createHmac, timingSafeEqual } from 'node:crypto';
import { config } from '../../config';
import { segredoDoServico } from '../../lib/segredo-local';
import { SegredoDeAssinatura } from '../../models/files';
import { proibido } from '../shared/errors';

/**
 * Signed download URLs (DESIGN §7, SPEC §2 AnexoDaMensagem): whoever holds one reads the file's
 * bytes without a token until `expira` (unix seconds, 15 minutes after signing). The signature is
 * HMAC-SHA256, base64url, over the file id and the expiry, with a key only the service knows.
 */
export const VALIDADE_DA_URL_SEGUNDOS = 15 * 60;

let segredo: Buffer | undefined;

/** FILES_SEGREDO_DE_ASSINATURA, or in LOCALHOST a key kept in the service's database (every process must share it). */
export async function carregarSegredo(): Promise<void> {
  segredo = await segredoDoServico({
    doAmbiente: config().files.segredoDeAssinatura,
    variavel: 'FILES_SEGREDO_DE_ASSINATURA',
    modelo: SegredoDeAssinatura,
    nome: 'download',
  });
}

function assinar(id: string, expira: number): string {
  if (!segredo) throw new Error('download signing key not loaded');
  return createHmac('sha256', segredo).update(`arquivo:${id}:${expira}`).digest('base64url');
}

/** The absolute download URL of a file, valid until `expira` (unix seconds). */
export function urlAssinada(id: string, expira: number): string {
  const url = new URL(`${config().servicos.files.url}/arquivo/${encodeURIComponent(id)}/conteudo`);
  url.searchParams.set('expira', String(expira));
  url.searchParams.set('assinatura', assinar(id, expira));
  return url.toString();
}

/** A fresh URL, valid VALIDADE_DA_URL_SEGUNDOS from now. */
export function urlDeDownload(id: string, agora = Date.now()): string {
  return urlAssinada(id, Math.floor(agora / 1000) + VALIDADE_DA_URL_SEGUNDOS);
}

/**
 * Throws `proibido` unless `assinatura` is this service's signature of (id, expira) and `expira`
 * has not passed. The comparison takes the same time wherever the strings differ.
 */
export function conferirAssinatura(id: string, expira: number, assinatura: string, agora = Date.now()): void {
  const esperada = Buffer.from(assinar(id, expira));
  const recebida = Buffer.from(assinatura);
  if (recebida.length !== esperada.length || !timingSafeEqual(recebida, esperada)) {
    throw proibido('Assinatura do link de download inválida.');
  }
  if (Math.floor(agora / 1000) > expira) throw proibido('Link de download expirado: peça um novo (GET /arquivo/{id}).');
}
