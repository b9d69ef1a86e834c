import { createHmac } from 'node:crypto';
import { Op } from 'sequelize';
import { config, ConfigError } from '../../config';
import { Cifra } from '../../lib/cifra';
import { logger } from '../../lib/logger';
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

/** The row keeping a mark of the key the secrets are stored under (derived from it, telling nothing of it). */
const MARCA_DA_CIFRA = 'marca-da-cifra';

const outraCifra = () =>
  new ConfigError('invalid configuration: SALES_CHAVE_DE_CIFRA is not the key the sales secrets and webhook tokens were stored under');

/**
 * A key other than the one the secrets were stored under (a process given a mistyped
 * SALES_CHAVE_DE_CIFRA) would refuse every webhook of every system, whose tokens' hashes it
 * computes differently, and fail where a secret is read: it stops the start instead. The key's
 * mark, kept on the first start, is compared on every start; a service that kept secrets before
 * the mark existed checks the key against one of them (deleted systems' too) before keeping it.
 */
async function conferirCifra(c: Cifra): Promise<void> {
  const marca = c.derivar(MARCA_DA_CIFRA).toString('base64url');
  const guardada = await Segredo.findByPk(MARCA_DA_CIFRA);
  if (guardada) {
    if (guardada.valor !== marca) throw outraCifra();
    return;
  }
  const amostra = await ConfigSystem.findOne({
    where: { [Op.or]: [{ segredo_hmac_cifrado: { [Op.ne]: null } }, { token_api_cifrado: { [Op.ne]: null } }] },
    attributes: ['segredo_hmac_cifrado', 'token_api_cifrado'],
    paranoid: false,
  });
  try {
    if (amostra) c.decifrar((amostra.segredo_hmac_cifrado ?? amostra.token_api_cifrado)!);
  } catch {
    throw outraCifra();
  }
  // systems holding tokens alone: nothing tells this key from the one their hashes were made with
  if (!amostra && (await ConfigSystem.count({ paranoid: false })) > 0) {
    logger('sales').warn("marca da SALES_CHAVE_DE_CIFRA guardada sem conferência: nenhum segredo guardado a decifra; se os webhooks responderem 401, a chave não é a dos tokens (apague a linha 'marca-da-cifra' da tabela segredo com o serviço parado)");
  }
  // two processes starting together: the first insert wins, and the other compares with it
  await Segredo.bulkCreate([{ nome: MARCA_DA_CIFRA, valor: marca }], { ignoreDuplicates: true });
  if ((await Segredo.findByPk(MARCA_DA_CIFRA))?.valor !== marca) throw outraCifra();
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
