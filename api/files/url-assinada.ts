import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { config, ConfigError } from '../../config';
import { SegredoDeAssinatura } from '../../models/files';
import { proibido } from '../shared/errors';

/**
 * Signed download URLs (DESIGN §7, SPEC §2 AnexoDaMensagem): whoever holds one reads the file's
 * bytes without a token until `expira` (unix seconds, 15 minutes after signing). The signature is
 * HMAC-SHA256, base64url, over the file id and the expiry, with a key only the service knows.
 */
export const VALIDADE_DA_URL_SEGUNDOS = 15 * 60;

const NOME_DO_SEGREDO = 'download';
let segredo: Buffer | undefined;

/**
 * FILES_SEGREDO_DE_ASSINATURA when set (every process of the service must share it). In LOCALHOST
 * without it, a key is generated on first start and kept in the service's database, where every
 * process finds the same one; elsewhere its absence stops the service.
 */
export async function carregarSegredo(): Promise<void> {
  const doAmbiente = config().files.segredoDeAssinatura;
  if (doAmbiente) {
    segredo = Buffer.from(doAmbiente, 'utf8');
    return;
  }
  if (config().ambiente !== 'LOCALHOST') {
    throw new ConfigError('invalid configuration: FILES_SEGREDO_DE_ASSINATURA required outside LOCALHOST');
  }
  // two processes starting together: the first insert wins, both read the winner
  await SegredoDeAssinatura.bulkCreate([{ nome: NOME_DO_SEGREDO, valor: randomBytes(32).toString('base64url') }], {
    ignoreDuplicates: true,
  });
  const guardado = await SegredoDeAssinatura.findByPk(NOME_DO_SEGREDO);
  if (!guardado) throw new Error('download signing key not stored');
  segredo = Buffer.from(guardado.valor, 'utf8');
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
