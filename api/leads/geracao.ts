import { createHash } from 'node:crypto';
import { config } from '../../config';
import { banco, lerLinhas } from '../../lib/database';
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

/**
 * A process starting while an import is recorded as under way: that run may have been cut after
 * its swap and before it started the new generation, leaving last month's counts cached. A new
 * generation costs at most counts computed again. Answers whether it started one.
 */
export async function novaGeracaoSeImportacaoEmAndamento(): Promise<boolean> {
  const emAndamento = await lerLinhas(banco('leads'), "SELECT 1 FROM importacao WHERE situacao = 'em_andamento' LIMIT 1", []);
  if (!emAndamento.length) return false;
  await novaGeracaoDosDados();
  return true;
}

/**
 * After an import's swap: the new generation must start even through a moment of Redis out of
 * reach, or last month's counts would be served for up to a day. Tries `vezes` times, waiting
 * `esperaMs`, then twice as long each time (1 + 2 + 4 + 8 s by default).
 */
export async function novaGeracaoComTentativas(vezes = 5, esperaMs = 1000, mudar = novaGeracaoDosDados): Promise<void> {
  for (let tentativa = 1; ; tentativa++) {
    try {
      return await mudar();
    } catch (err) {
      if (tentativa >= vezes) throw err;
      await new Promise((r) => setTimeout(r, esperaMs * 2 ** (tentativa - 1)));
    }
  }
}

/** The Redis key of something cached about the current data: `tipo` and a digest of what it is about. */
export async function chaveNaGeracao(tipo: string, sobre: string): Promise<{ chave: string; geracao: string; hash: string }> {
  const geracao = await geracaoDosDados();
  const hash = createHash('sha256').update(sobre).digest('hex').slice(0, 32);
  return { chave: `${config().queuePrefix}:leads:${tipo}:${geracao}:${hash}`, geracao, hash };
}
