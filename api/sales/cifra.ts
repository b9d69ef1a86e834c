import { createHmac } from 'node:crypto';
import { config } from '../../config';
import { Cifra } from '../../lib/cifra';
import { segredoDoServico } from '../../lib/segredo-local';
import { Segredo } from '../../models/sales';

/**
 * Secrets the sales service must use itself (a webhook HMAC key, the chat platform's API token)
 * are kept encrypted (lib/cifra.ts) under SALES_CHAVE_DE_CIFRA (in LOCALHOST, a key generated on
 * first start).
 */
let cifra: Cifra | undefined;
/** derived once from the same key, for the webhook tokens' keyed hash */
let chaveDoResumo: Buffer | undefined;

export async function carregarChaveDeCifra(): Promise<void> {
  const segredo = await segredoDoServico({
    doAmbiente: config().sales.chaveDeCifra,
    variavel: 'SALES_CHAVE_DE_CIFRA',
    modelo: Segredo,
    nome: 'cifra',
  });
  cifra = new Cifra(segredo);
  chaveDoResumo = cifra.derivar('token-de-webhook');
}

function carregada<T>(k: T | undefined): T {
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

export const cifrar = (texto: string): string => carregada(cifra).cifrar(texto);

export const decifrar = (guardado: string): string => carregada(cifra).decifrar(guardado);
