import { banco, lerLinhas } from '../../lib/database';
import { CacheComPrazo } from '../../lib/cache';
import { TABELAS_DE_CODIGOS } from '../../models/leads';
import { geracaoDosDados } from './geracao';

export type TabelaDeCodigos = (typeof TABELAS_DE_CODIGOS)[number];
export type Descricoes = Record<TabelaDeCodigos, Map<string, string | null>>;

/**
 * A code as its table is searched: without leading zeros. The Receita's files do not always pad a
 * code as its table does (an establishment's country `69` where Paises has `069`), and a code
 * table never holds two codes that differ by leading zeros alone.
 */
const semZerosAEsquerda = (codigo: string) => codigo.replace(/^0+(?=.)/, '');

/** The description of `codigo` in `tabela` (a map of Descricoes); null for no code, or one the table lacks. */
export const descricaoDe = (tabela: Map<string, string | null>, codigo: string | null) =>
  codigo === null ? null : (tabela.get(semZerosAEsquerda(codigo)) ?? null);

/**
 * The Receita's code tables (CNAEs, municipalities, countries...: a few thousand rows in all) kept
 * in each process, so a lookup reads its record without joining them. Kept under the data's
 * generation (geracao.ts), which an import swaps in with the tables: a process sees a new month's
 * descriptions when it sees its generation, at most VALIDADE_DA_GERACAO_MS after the swap, not a
 * minute later (its lookups meanwhile answered the new rows with last month's descriptions, and
 * public caches kept them for an hour).
 */
const cache = new CacheComPrazo<string, Promise<Descricoes>>(() => 60_000, 4);

async function carregar(): Promise<Descricoes> {
  const sequelize = banco('leads');
  const tabelas = await Promise.all(
    TABELAS_DE_CODIGOS.map(async (t) => {
      const linhas = await lerLinhas<{ codigo: string; descricao: string | null }>(sequelize, `SELECT codigo, descricao FROM ${t}`, []);
      return [t, new Map(linhas.map((l) => [semZerosAEsquerda(l.codigo), l.descricao]))] as const;
    }),
  );
  return Object.fromEntries(tabelas) as Descricoes;
}

/** The same load is shared by every lookup that asks while it runs; a failed one is retried by the next. */
export const descricoesDosCodigos = async (): Promise<Descricoes> => cache.compartilhar(await geracaoDosDados(), carregar);
