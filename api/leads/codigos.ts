import { banco, lerLinhas } from '../../lib/database';
import { CacheComPrazo } from '../../lib/cache';
import { TABELAS_DE_CODIGOS } from '../../models/leads';

export type TabelaDeCodigos = (typeof TABELAS_DE_CODIGOS)[number];
export type Descricoes = Record<TabelaDeCodigos, Map<string, string | null>>;

/**
 * The Receita's code tables (CNAEs, municipalities, countries...: a few thousand rows in all) kept
 * in each process, so a lookup reads its record without joining them. API processes see a new
 * month's descriptions at most a minute after the import.
 */
const cache = new CacheComPrazo<'codigos', Promise<Descricoes>>(() => 60_000);

async function carregar(): Promise<Descricoes> {
  const sequelize = banco('leads');
  const tabelas = await Promise.all(
    TABELAS_DE_CODIGOS.map(async (t) => {
      const linhas = await lerLinhas<{ codigo: string; descricao: string | null }>(sequelize, `SELECT codigo, descricao FROM ${t}`, []);
      return [t, new Map(linhas.map((l) => [l.codigo, l.descricao]))] as const;
    }),
  );
  return Object.fromEntries(tabelas) as Descricoes;
}

/** The same load is shared by every lookup that asks while it runs; a failed one is retried by the next. */
export const descricoesDosCodigos = (): Promise<Descricoes> => cache.compartilhar('codigos', carregar);

export const esquecerCodigos = () => cache.esquecer();
