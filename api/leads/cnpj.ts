import { agrupar } from '../../lib/agrupar';
import { banco, emPotenciaDeDois, lerLinhas } from '../../lib/database';
import { GravadorEmLotes } from '../../lib/lotes';
import { normalizarCnpj } from '../shared/cnpj';
import { naoEncontrado } from '../shared/errors';
import { descricaoDe as de, Descricoes, descricoesDosCodigos } from './codigos';
import { LAYOUTS } from './receita';

const SITUACOES: Record<string, string> = { '01': 'Nula', '02': 'Ativa', '03': 'Suspensa', '04': 'Inapta', '08': 'Baixada' };
const MATRIZ_FILIAL: Record<string, string> = { '1': 'Matriz', '2': 'Filial' };
const PORTES: Record<string, string> = { '00': 'Não informado', '01': 'Microempresa', '03': 'Empresa de Pequeno Porte', '05': 'Demais' };
const SIM_NAO: Record<string, string> = { S: 'Sim', N: 'Não' };
const IDENTIFICADOR_DE_SOCIO: Record<string, string> = { '1': 'Pessoa Jurídica', '2': 'Pessoa Física', '3': 'Estrangeiro' };

/** Descriptions that have no code table come from the layout; an unknown code has none. */
export const descricao = (tabela: Record<string, string>, codigo: string | null) => (codigo === null ? null : (tabela[codigo] ?? null));
export const DESCRICOES = { SITUACOES, MATRIZ_FILIAL, PORTES, SIM_NAO, IDENTIFICADOR_DE_SOCIO };

/** DECIMAL text (`1061004829.23`) back to the Receita's decimal comma. */
export const capitalComVirgula = (valor: string | null) => (valor === null ? null : valor.replace('.', ','));

type Linha = Record<string, string | null>;

/** The partner's columns, in the Receita's layout order (the order of `socios` items). */
const COLUNAS_DO_SOCIO = LAYOUTS.find((l) => l.tabela === 'socio')!.colunas.map((c) => c.nome);

/**
 * The whole records of `cnpjs` CNPJs in one statement (the caller pads their list with
 * emPotenciaDeDois, so a few prepared texts serve every batch): one row per partner, in CNPJ order,
 * then name order of the database's collation (case- and accent-insensitive; a partner without a
 * name last, where the database would put it first), then file order; the
 * establishment's columns repeat on each, and a record without partners is one row with them null.
 * (Measured against the alternatives: two prepared statements cost two round trips, the same two
 * sent as one text message cost the server a parse of each on every call, and aggregating the
 * partners into JSON text with an ordered GROUP_CONCAT cost the server three times as much.)
 */
const sqlDosRegistros = (cnpjs: number) => `SELECT e.*,
    em.cnpj_basico AS empresa_encontrada, em.razao_social AS empresa_razao_social,
    em.natureza_juridica AS empresa_natureza_juridica, em.porte_empresa AS empresa_porte_empresa,
    CAST(em.capital_social AS CHAR) AS empresa_capital_social, em.ente_federativo_responsavel AS empresa_ente_federativo_responsavel,
    em.qualificacao_responsavel AS empresa_qualificacao_responsavel,
    si.cnpj_basico AS simples_encontrado, si.opcao_pelo_simples AS simples_opcao_pelo_simples,
    si.data_opcao_simples AS simples_data_opcao_simples, si.data_exclusao_simples AS simples_data_exclusao_simples,
    si.opcao_pelo_mei AS simples_opcao_pelo_mei, si.data_opcao_mei AS simples_data_opcao_mei,
    si.data_exclusao_mei AS simples_data_exclusao_mei,
    so.id AS socio_id, ${COLUNAS_DO_SOCIO.map((c) => `so.${c} AS socio_${c}`).join(', ')}
  FROM estabelecimento e
  LEFT JOIN empresa em ON em.cnpj_basico = e.cnpj_basico
  LEFT JOIN simples si ON si.cnpj_basico = e.cnpj_basico
  LEFT JOIN socio so ON so.cnpj_basico = e.cnpj_basico
  WHERE e.cnpj IN (${Array(cnpjs).fill('?').join(', ')})
  ORDER BY e.cnpj, so.nome_socio_razao_social IS NULL, so.nome_socio_razao_social, so.id`;

/** The rows of each CNPJ's record, none for one not in the registry. */
async function lerRegistros(cnpjs: string[]): Promise<Linha[][]> {
  const lista = emPotenciaDeDois(cnpjs);
  const linhas = await lerLinhas<Linha>(banco('leads'), sqlDosRegistros(lista.length), lista);
  const porCnpj = agrupar(linhas, (l) => l.cnpj);
  return cnpjs.map((c) => porCnpj.get(c) ?? []);
}

/**
 * Lookups that arrive together are read together (lib/lotes.ts): one statement for a few of them.
 * On this hot path the cost of a lookup is mostly its round trip (the writes to the database's
 * socket and the server's work on each statement), not its rows: read alone, each paid one
 * (docs/desempenho.md).
 */
const registros = new GravadorEmLotes<string, Linha[]>(lerRegistros, { maximo: 64, gravadores: 2 });

/** Each partner field of the answer and its column in the row. */
const PARES_DO_SOCIO = COLUNAS_DO_SOCIO.map((c) => [c, `socio_${c}`] as const);
const CAMPOS_DO_SOCIO = new Set(['socio_id', ...PARES_DO_SOCIO.map(([, coluna]) => coluna)]);
/** The row's fields that are not the establishment's own: the partner's, and the two "found" markers. */
const fora = (campo: string) => CAMPOS_DO_SOCIO.has(campo) || campo === 'empresa_encontrada' || campo === 'simples_encontrado';

function socioDe(linha: Linha, codigos: Descricoes): Record<string, unknown> {
  const s: Record<string, unknown> = {};
  for (const [campo, coluna] of PARES_DO_SOCIO) s[campo] = linha[coluna];
  s.identificador_socio_descricao = descricao(IDENTIFICADOR_DE_SOCIO, linha.socio_identificador_socio);
  s.qualificacao_socio_descricao = de(codigos.qualificacao, linha.socio_qualificacao_socio);
  s.pais_descricao = de(codigos.pais, linha.socio_pais);
  s.qualificacao_representante_descricao = de(codigos.qualificacao, linha.socio_qualificacao_representante);
  return s;
}

/**
 * A partner's line the Receita repeats whole (every column the same: it happens in real months)
 * is one partner, listed once, the first in file order kept. Left out here, not at the import: a
 * company has a few partners to compare, where the import would need a pass over every partner
 * of the month (about 26 million) to find the repeats.
 */
function semLinhasRepetidas(socios: Linha[]): Linha[] {
  const vistas = new Set<string>();
  return socios.filter((s) => {
    const chave = JSON.stringify(COLUNAS_DO_SOCIO.map((c) => s[`socio_${c}`]));
    if (vistas.has(chave)) return false;
    vistas.add(chave);
    return true;
  });
}

/** SPEC 4.2 GET /api/cnpj/{cnpj}: the full record (establishment, company, Simples, partners). */
export async function buscarCnpj(entrada: string): Promise<Record<string, unknown>> {
  const cnpj = normalizarCnpj(entrada);
  const [linhas, codigos] = await Promise.all([registros.guardar(cnpj), descricoesDosCodigos()]);
  if (!linhas.length) throw naoEncontrado('CNPJ');
  // one object filled in place: spreading a record of sixty fields into new objects cost more
  // than the rest of the lookup's own work (it also makes them slower to serialize)
  const l = linhas[0];
  const e: Record<string, unknown> = {};
  for (const campo in l) if (!fora(campo)) e[campo] = l[campo];
  e.identificador_matriz_filial_descricao = descricao(MATRIZ_FILIAL, l.identificador_matriz_filial);
  e.situacao_cadastral_descricao = descricao(SITUACOES, l.situacao_cadastral);
  e.motivo_situacao_cadastral_descricao = de(codigos.motivo, l.motivo_situacao_cadastral);
  e.cnae_fiscal_principal_descricao = de(codigos.cnae, l.cnae_fiscal_principal);
  e.municipio_descricao = de(codigos.municipio, l.municipio);
  e.pais_descricao = de(codigos.pais, l.pais);
  e.empresa_natureza_juridica_descricao = de(codigos.natureza_juridica, l.empresa_natureza_juridica);
  e.empresa_qualificacao_responsavel_descricao = de(codigos.qualificacao, l.empresa_qualificacao_responsavel);
  e.empresa_capital_social = capitalComVirgula(l.empresa_capital_social);
  e.empresa_porte_empresa_descricao = descricao(PORTES, l.empresa_porte_empresa);
  e.simples_opcao_pelo_simples_descricao = descricao(SIM_NAO, l.simples_opcao_pelo_simples);
  e.simples_opcao_pelo_mei_descricao = descricao(SIM_NAO, l.simples_opcao_pelo_mei);
  e.tem_empresa = l.empresa_encontrada !== null;
  e.tem_simples = l.simples_encontrado !== null;
  e.socios = semLinhasRepetidas(linhas.filter((s) => s.socio_id !== null)).map((s) => socioDe(s, codigos));
  return e;
}
