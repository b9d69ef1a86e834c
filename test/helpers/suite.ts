import IORedis from 'ioredis';
import { config, resetConfig } from '../../config';
import { NomeDoServico } from '../../config/services';
import { apagarBanco } from '../../lib/database';
import { encerrar } from '../../lib/lifecycle';
import { iniciarApisEmPortasLivres, iniciarWorkers } from '../../lib/runner';
import { FILAS } from '../../queues';

export interface SuiteDeTeste {
  url: Record<string, string>;
  encerrar(): Promise<void>;
}

/**
 * Starts the named services in this process as `npm start` would (migrated databases, seeds,
 * workers of their queues), each on a free loopback port, with identity first so every service
 * verifies tokens against it. `encerrar` stops everything and drops the file's databases and keys.
 */
export async function iniciarSuite(nomes: NomeDoServico[], opcoes: { workers?: boolean; env?: Record<string, string> } = {}) {
  Object.assign(process.env, opcoes.env ?? {});
  resetConfig();
  const url = await iniciarApisEmPortasLivres(nomes);
  if (opcoes.workers !== false) {
    await iniciarWorkers(FILAS.filter((f) => nomes.includes(f.servico)).map((f) => f.nome));
  }
  return {
    url,
    async encerrar() {
      await encerrar();
      await limparDados(nomes);
    },
  } satisfies SuiteDeTeste;
}

export async function limparDados(nomes: NomeDoServico[]): Promise<void> {
  for (const nome of nomes) await apagarBanco(nome);
  const r = new IORedis(config().redisUrl);
  try {
    let cursor = '0';
    do {
      const [proximo, chaves] = await r.scan(cursor, 'MATCH', `${config().queuePrefix}*`, 'COUNT', 1000);
      cursor = proximo;
      if (chaves.length) await r.del(...chaves);
    } while (cursor !== '0');
  } finally {
    r.disconnect();
  }
}
