import { createHmac } from 'node:crypto';
import { Op } from 'sequelize';
import { config, ConfigError } from '../../config';
import { Cifra } from '../../lib/cifra';
import { segredoDoServico } from '../../lib/segredo-local';
import { ConfigSystem, Segredo } from '../../models/sales';

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
  const c = new Cifra(segredo);
  await conferirCifra(c);
  cifra = c;
  chaveDoResumo = c.derivar('token-de-webhook');
}

/**
 * A key other than the one the stored secrets were encrypted under (a process given a mistyped
 * SALES_CHAVE_DE_CIFRA) would refuse every webhook of the systems (their tokens' hashes differ)
 * and fail where a secret is read: it stops the start instead, checked against one stored secret
 * (deleted systems' too). Where no system holds a secret there is nothing to check it with.
 */
async function conferirCifra(c: Cifra): Promise<void> {
  const amostra = await ConfigSystem.findOne({
    where: { [Op.or]: [{ segredo_hmac_cifrado: { [Op.ne]: null } }, { token_api_cifrado: { [Op.ne]: null } }] },
    attributes: ['id', 'segredo_hmac_cifrado', 'token_api_cifrado'],
    paranoid: false,
  });
  if (!amostra) return;
  try {
    c.decifrar((amostra.segredo_hmac_cifrado ?? amostra.token_api_cifrado)!);
  } catch {
    throw new ConfigError(`invalid configuration: SALES_CHAVE_DE_CIFRA does not decrypt the stored secrets of system ${amostra.id}: it is not the key they were stored under`);
  }
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
