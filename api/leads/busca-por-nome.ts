import { CacheComPrazo } from '../../lib/cache';
import { banco, lerDemorado, tempoEsgotado } from '../../lib/database';
import { buscaDoNome, Condicoes, condicoesDosFiltros, FiltrosDeEmpresas, nomeNaChave } from './filtros';
import { chaveNaGeracao } from './geracao';

/**
 * Establishments a `nome` names, listed from the full-text indexes when there are at most this
 * many on each side (nome fantasia, razão social). Tests lower it to reach the other path.
 */
export const LIMITES_DO_NOME = { lista: 5000, prazoS: 1, esgotadoMs: 60_000 };
/**
 * Names' lists already read, for the data they were read from (the key holds its generation):
 * the pages of one search and its count read a list once, and so do the spellings the indexes
 * answer alike (`Padaria São` and `são padaria`), keyed as a count is (nomeNaChave). Kept in the
 * process, not in Redis, whose memory must never run out (BullMQ's keys are never evicted) while
 * a list may hold 10,000 CNPJs (about 170 KB): at most 200 lists, two minutes each. A count job
 * in another process (a worker apart from the API) reads the list again.
 */
const listasDosNomes = new CacheComPrazo<string, string[] | null>(() => 2 * 60_000, 200);

/**
 * The `nome` filter reads "the nome fantasia OR the company's razão social", and MariaDB cannot
 * drive a query from two full-text indexes joined by OR: it walks every establishment in CNPJ
 * order, checking each. That finds a page of a common name at once, but reads the whole registry
 * for a rare one (a few seconds per million rows: a 503 and an estimated total over the real
 * registry). So the names' matches are listed first, from each index, up to LIMITES_DO_NOME.lista
 * on each side: a name with that few matches becomes a list of CNPJs (primary-key lookups); a
 * common one, or a list slower than LIMITES_DO_NOME.prazoS (then for esgotadoMs), keeps the walk,
 * where matches are dense.
 * The list runs before the page's read and the count's, inside their own limits' margins: the
 * count job's 1 + 6 seconds stay under the 8 a listing waits for it. It is kept for the current
 * data (listasDosNomes), so the count and the next pages find it read. Answers undefined for the walk.
 * `geracao`: the data's generation the list is for (a count job's own), the current one when not given.
 */
export async function cnpjsDoNome(nome: string, geracao?: string): Promise<string[] | undefined> {
  const busca = buscaDoNome(nome);
  // short words only: a prefix, which no full-text index serves
  if (!busca) return undefined;
  const { chave } = await chaveNaGeracao('nome', JSON.stringify(nomeNaChave(nome)), geracao);
  // null for the walk
  const guardada = listasDosNomes.obter(chave);
  if (guardada !== undefined) return guardada ?? undefined;
  const lista = await listarDosIndices(busca);
  if (lista === TEMPO_ESGOTADO) {
    // the walk for a while: a word common in the real registry runs out of time on every try, and
    // each page of its listing would spend the time limit again. Not longer: the database may only
    // have been busy
    listasDosNomes.guardar(chave, null, Date.now() + LIMITES_DO_NOME.esgotadoMs);
    return undefined;
  }
  listasDosNomes.guardar(chave, lista ?? null);
  return lista;
}

const TEMPO_ESGOTADO = Symbol('tempo esgotado');

/** The name's establishments from both indexes; undefined when either has more than the list holds. */
async function listarDosIndices(busca: string): Promise<string[] | undefined | typeof TEMPO_ESGOTADO> {
  const limite = LIMITES_DO_NOME.lista + 1;
  const ler = async (select: string) =>
    (await lerDemorado<{ cnpj: string }>(banco('leads'), select, [busca, limite], LIMITES_DO_NOME.prazoS)).map((l) => l.cnpj);
  try {
    const [fantasia, razao] = await Promise.all([
      ler('SELECT e.cnpj FROM estabelecimento e WHERE MATCH(e.nome_fantasia) AGAINST (? IN BOOLEAN MODE) LIMIT ?'),
      ler(`SELECT e.cnpj FROM empresa em JOIN estabelecimento e ON e.cnpj_basico = em.cnpj_basico
            WHERE MATCH(em.razao_social) AGAINST (? IN BOOLEAN MODE) LIMIT ?`),
    ]);
    if (fantasia.length >= limite || razao.length >= limite) return undefined;
    return [...new Set([...fantasia, ...razao])];
  } catch (err) {
    if (tempoEsgotado(err)) return TEMPO_ESGOTADO;
    throw err;
  }
}

/** The WHERE of a filter set, its `nome` listed beforehand when it names few establishments. */
export async function condicoesComNome(f: FiltrosDeEmpresas, geracao?: string): Promise<Condicoes> {
  return condicoesDosFiltros(f, f.nome ? await cnpjsDoNome(f.nome, geracao) : undefined);
}
