import { createHash } from 'node:crypto';
import { config } from '../../config';
import { redis } from '../../lib/redis';

/**
 * What the service caches about the registry (counts per filter set, the establishments a name
 * lists) is kept in Redis under the data's generation. Each import starts a new one: what was
 * cached about the previous month is never read again, and simply expires.
 */
const chaveDaGeracao = () => `${config().queuePrefix}:leads:geracao`;

export async function geracaoDosDados(): Promise<string> {
  return (await redis('produtor').get(chaveDaGeracao())) ?? '0';
}

/** Called after an import, and by tests that change the data behind the service's back. */
export async function novaGeracaoDosDados(): Promise<void> {
  await redis('produtor').incr(chaveDaGeracao());
}

/** The Redis key of something cached about the current data: `tipo` and a digest of what it is about. */
export async function chaveNaGeracao(tipo: string, sobre: string): Promise<{ chave: string; geracao: string; hash: string }> {
  const geracao = await geracaoDosDados();
  const hash = createHash('sha256').update(sobre).digest('hex').slice(0, 32);
  return { chave: `${config().queuePrefix}:leads:${tipo}:${geracao}:${hash}`, geracao, hash };
}
