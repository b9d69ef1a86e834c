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
/** the signing key first, then those of FILES_SEGREDOS_DE_VERIFICACAO, which only check */
let segredosQueConferem: Buffer[] = [];

/**
 * FILES_SEGREDO_DE_ASSINATURA, or in LOCALHOST a key kept in the service's database (every process
 * must share it); and the keys of FILES_SEGREDOS_DE_VERIFICACAO, accepted on links but never used to
 * sign, so a key is rotated process by process without refusing a link another process signed.
 */
export async function carregarSegredo(): Promise<void> {
  segredo = await segredoDoServico({
    doAmbiente: config().files.segredoDeAssinatura,
    variavel: 'FILES_SEGREDO_DE_ASSINATURA',
    modelo: SegredoDeAssinatura,
    nome: 'download',
  });
  segredosQueConferem = [segredo, ...config().files.segredosDeVerificacao.map((s) => Buffer.from(s, 'utf8'))];
}

function assinar(id: string, expira: number, chave = segredo): string {
  if (!chave) throw new Error('download signing key not loaded');
  return createHmac('sha256', chave).update(`arquivo:${id}:${expira}`).digest('base64url');
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
 * Throws `proibido` unless `assinatura` is this service's signature of (id, expira), with the signing
 * key or one kept for checking, and `expira` has not passed. Every key is tried, and each comparison
 * takes the same time wherever the strings differ.
 */
export function conferirAssinatura(id: string, expira: number, assinatura: string, agora = Date.now()): void {
  if (!segredo) throw new Error('download signing key not loaded');
  const recebida = Buffer.from(assinatura);
  let confere = false;
  for (const chave of segredosQueConferem) {
    const esperada = Buffer.from(assinar(id, expira, chave));
    if (recebida.length === esperada.length && timingSafeEqual(recebida, esperada)) confere = true;
  }
  if (!confere) throw proibido('Assinatura do link de download inválida.');
  if (Math.floor(agora / 1000) > expira) throw proibido('Link de download expirado: peça um novo (GET /arquivo/{id}).');
}
