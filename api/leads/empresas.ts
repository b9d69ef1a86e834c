import { banco, lerDemorado, tempoEsgotado } from '../../lib/database';
import { ErroDeDominio } from '../shared/errors';
import { capitalComVirgula, descricao, DESCRICOES } from './cnpj';
import { contagemDasEmpresas } from './contagem';
import { condicoesComNome } from './busca-por-nome';
import { Condicoes, FiltrosDeEmpresas } from './filtros';

export const TAMANHO_PADRAO = 12;
export const TAMANHO_MAXIMO = 50;
/**
 * A page read the database gives up on: a slow read would also hold up the monthly table swap,
 * and every lookup queued behind it.
 */
const PRAZO_DA_PAGINA_S = 10;

type Resumo = Record<string, string | null>;

export interface PaginaDeEmpresas {
  estimado: boolean;
  itens: Resumo[];
  pagina: number;
  tamanho: number;
  total: number;
}

/** `tamanho` outside 1..50 is brought into that range (SPEC 4.2 rule 3). */
export const tamanhoAjustado = (t: number | undefined) => Math.min(TAMANHO_MAXIMO, Math.max(1, t ?? TAMANHO_PADRAO));

/** SPEC 4.2 GET /api/empresas: establishments in CNPJ order, with the count of all that match. */
export async function listarEmpresas(filtros: FiltrosDeEmpresas, pagina = 1, tamanho?: number): Promise<PaginaDeEmpresas> {
  const porPagina = tamanhoAjustado(tamanho);
  // before the count job starts, so the job finds a name's list already kept (busca-por-nome.ts)
  const condicoes = await condicoesComNome(filtros);
  // The first page exists whatever the total: it is read while the count runs.
  const primeira = pagina <= 1 ? resumos(condicoes, 1, porPagina) : undefined;
  primeira?.catch(() => undefined); // awaited below; a failed count must not leave it unhandled
  const { total, estimado } = await contagemDasEmpresas(filtros);
  const ultima = Math.max(1, Math.ceil(total / porPagina));
  const atual = Math.min(Math.max(1, pagina), ultima);
  const linhas = await (primeira ?? resumos(condicoes, atual, porPagina));
  const itens = linhas.map(({ situacao_cadastral, ...r }) => ({
    ...r,
    empresa_capital_social: capitalComVirgula(r.empresa_capital_social),
    situacao_cadastral_descricao: descricao(DESCRICOES.SITUACOES, situacao_cadastral),
  }));
  return { estimado, itens, pagina: atual, tamanho: porPagina, total };
}

/**
 * A page's CNPJs come first from the narrowest index (a "deferred join"), then the summary columns
 * of just those rows, so a deep page costs an index walk and not thousands of full rows.
 */
async function resumos({ onde, parametros }: Condicoes, pagina: number, porPagina: number): Promise<Resumo[]> {
  const select = `SELECT e.cnpj, e.correio_eletronico, e.ddd_1, e.ddd_2, CAST(em.capital_social AS CHAR) AS empresa_capital_social,
        em.razao_social AS empresa_razao_social, e.logradouro, mu.descricao AS municipio_descricao, e.nome_fantasia,
        e.numero, e.situacao_cadastral, e.telefone_1, e.telefone_2, e.tipo_logradouro, e.uf
      FROM (SELECT e.cnpj FROM estabelecimento e ${onde} ORDER BY e.cnpj LIMIT ? OFFSET ?) p
      JOIN estabelecimento e ON e.cnpj = p.cnpj
      LEFT JOIN empresa em ON em.cnpj_basico = e.cnpj_basico
      LEFT JOIN municipio mu ON mu.codigo = e.municipio
      ORDER BY e.cnpj`;
  try {
    return await lerDemorado<Resumo>(banco('leads'), select, [...parametros, porPagina, (pagina - 1) * porPagina], PRAZO_DA_PAGINA_S);
  } catch (err) {
    if (tempoEsgotado(err)) throw new ErroDeDominio('indisponivel', 'A página demorou demais: combine mais filtros ou peça uma página anterior.');
    throw err;
  }
}
