import { randomBytes } from 'node:crypto';
import { digitosVerificadores } from '../../api/shared/cnpj';
import { Contagem } from '../../api/leads/contagem';
import { chaveDosFiltros, FiltrosDeEmpresas } from '../../api/leads/filtros';
import { chaveNaGeracao, novaGeracaoDosDados } from '../../api/leads/geracao';
import { redis } from '../../lib/redis';
import { banco } from '../../lib/database';
import { acessoDe } from '../helpers/acesso';
import { sorteio } from '../helpers/aleatorio';
import { Opcoes } from '../helpers/http';
import { iniciarSuite, SuiteDeTeste } from '../helpers/suite';

/*
 * Seed of the leads registry for GET /api/empresas: rows inserted straight into the leads tables
 * (as the import leaves them: empty → NULL, capital as DECIMAL), generated from a fixed seed so
 * every filter's expected result can be computed here, in JS, from the same rows.
 */

export type Texto = string | null;

/** A row of `estabelecimento` (models/leads/migracoes.ts). */
export interface LinhaEstabelecimento {
  cnpj: string;
  cnpj_basico: string;
  cnpj_ordem: string;
  cnpj_dv: string;
  identificador_matriz_filial: Texto;
  nome_fantasia: Texto;
  situacao_cadastral: Texto;
  data_situacao_cadastral: Texto;
  motivo_situacao_cadastral: Texto;
  nome_cidade_exterior: Texto;
  pais: Texto;
  data_inicio_atividade: Texto;
  cnae_fiscal_principal: Texto;
  cnae_fiscal_secundaria: Texto;
  tipo_logradouro: Texto;
  logradouro: Texto;
  numero: Texto;
  complemento: Texto;
  bairro: Texto;
  cep: Texto;
  uf: Texto;
  municipio: Texto;
  ddd_1: Texto;
  telefone_1: Texto;
  ddd_2: Texto;
  telefone_2: Texto;
  ddd_fax: Texto;
  fax: Texto;
  correio_eletronico: Texto;
  situacao_especial: Texto;
  data_situacao_especial: Texto;
}

/** A row of `empresa`; `capital_social` as the DECIMAL(20,2) text (`1000.50`). */
export interface LinhaEmpresa {
  cnpj_basico: string;
  razao_social: Texto;
  natureza_juridica: Texto;
  qualificacao_responsavel: Texto;
  capital_social: Texto;
  porte_empresa: Texto;
  ente_federativo_responsavel: Texto;
}

export interface LinhaSimples {
  cnpj_basico: string;
  opcao_pelo_simples: Texto;
  data_opcao_simples: Texto;
  data_exclusao_simples: Texto;
  opcao_pelo_mei: Texto;
  data_opcao_mei: Texto;
  data_exclusao_mei: Texto;
}

/** A full CNPJ from its first 12 characters (check digits computed as the Receita does). */
export const cnpjDe = (basico: string, ordem = '0001') => `${basico}${ordem}${digitosVerificadores(basico + ordem)}`;

/** A fresh 8-digit cnpj_basico, unlikely to collide with the seed's. */
export const basicoNovo = () => String(parseInt(randomBytes(4).toString('hex'), 16) % 100_000_000).padStart(8, '0');

// ---------------------------------------------------------------------------------------------
// Row builders with defaults

export function estabelecimento(campos: Partial<LinhaEstabelecimento> = {}): LinhaEstabelecimento {
  const cnpj_basico = campos.cnpj_basico ?? campos.cnpj?.slice(0, 8) ?? basicoNovo();
  const cnpj_ordem = campos.cnpj_ordem ?? campos.cnpj?.slice(8, 12) ?? '0001';
  const cnpj = campos.cnpj ?? cnpjDe(cnpj_basico, cnpj_ordem);
  return {
    cnpj,
    cnpj_basico,
    cnpj_ordem,
    cnpj_dv: cnpj.slice(12),
    identificador_matriz_filial: cnpj_ordem === '0001' ? '1' : '2',
    nome_fantasia: null,
    situacao_cadastral: '02',
    data_situacao_cadastral: '20200101',
    motivo_situacao_cadastral: '00',
    nome_cidade_exterior: null,
    pais: null,
    data_inicio_atividade: '20200101',
    cnae_fiscal_principal: '6204000',
    cnae_fiscal_secundaria: null,
    tipo_logradouro: 'RUA',
    logradouro: 'DAS FLORES',
    numero: '100',
    complemento: null,
    bairro: 'CENTRO',
    cep: '70000000',
    uf: 'DF',
    municipio: '9701',
    ddd_1: null,
    telefone_1: null,
    ddd_2: null,
    telefone_2: null,
    ddd_fax: null,
    fax: null,
    correio_eletronico: null,
    situacao_especial: null,
    data_situacao_especial: null,
    ...campos,
  };
}

export function empresa(campos: Partial<LinhaEmpresa> & { cnpj_basico: string }): LinhaEmpresa {
  return {
    razao_social: `EMPRESA ${campos.cnpj_basico} LTDA`,
    natureza_juridica: '2062',
    qualificacao_responsavel: '49',
    capital_social: '1000.00',
    porte_empresa: '01',
    ente_federativo_responsavel: null,
    ...campos,
  };
}

export function simples(campos: Partial<LinhaSimples> & { cnpj_basico: string }): LinhaSimples {
  return {
    opcao_pelo_simples: 'S',
    data_opcao_simples: '20150101',
    data_exclusao_simples: null,
    opcao_pelo_mei: 'N',
    data_opcao_mei: null,
    data_exclusao_mei: null,
    ...campos,
  };
}

/** One multi-row INSERT of rows of the same shape into a leads table. */
export async function inserir(tabela: string, linhas: object[]): Promise<void> {
  if (!linhas.length) return;
  const colunas = Object.keys(linhas[0]);
  const umaLinha = `(${colunas.map(() => '?').join(', ')})`;
  await banco('leads').query(`INSERT INTO ${tabela} (${colunas.join(', ')}) VALUES ${linhas.map(() => umaLinha).join(', ')}`, {
    replacements: linhas.flatMap((l) => colunas.map((c) => (l as Record<string, unknown>)[c] ?? null)),
  });
}

// ---------------------------------------------------------------------------------------------
// The generated registry

export interface Cadastro {
  estabelecimentos: LinhaEstabelecimento[];
  empresas: Map<string, LinhaEmpresa>;
  simples: Map<string, LinhaSimples>;
  /** cnae_secundaria rows: secondary codes of each establishment */
  secundarias: Map<string, string[]>;
  municipios: Map<string, string>;
}

/** What a predicate sees of an establishment: its row, its company and its Simples record (if any). */
export interface Visao {
  e: LinhaEstabelecimento;
  em?: LinhaEmpresa;
  si?: LinhaSimples;
  secundarias: string[];
}

/** The seeded draws of the fixture (test/helpers/aleatorio.ts), and digits drawn as text. */
function geradorAleatorio(semente: number) {
  const { proximo: rnd, um: escolher } = sorteio(semente);
  const digitos = (n: number) => Array.from({ length: n }, () => Math.floor(rnd() * 10)).join('');
  return { rnd, escolher, digitos };
}

export const MUNICIPIOS: Record<string, string> = {
  '7107': 'SAO PAULO',
  '6291': 'CAMPINAS',
  '0097': 'MUNICIPIO DE CODIGO CURTO',
  '6001': 'RIO DE JANEIRO',
  '4123': 'BELO HORIZONTE',
  '9701': 'BRASILIA',
  '3849': 'SALVADOR',
  '9707': 'EXTERIOR',
};
/** `5555` has no row in `municipio`: its establishments list municipio_descricao null. */
const MUNICIPIOS_POR_UF: Record<string, string[]> = {
  SP: ['7107', '6291', '0097'],
  RJ: ['6001'],
  MG: ['4123', '5555'],
  DF: ['9701'],
  BA: ['3849'],
  EX: ['9707'],
};
const UFS = ['SP', 'SP', 'SP', 'RJ', 'RJ', 'MG', 'DF', 'DF', 'BA', 'EX'] as const;
export const CNAES = ['6204000', '4711302', '5611201', '0111301', '4781400'] as const;
const SECUNDARIAS = ['6201501', '6202300', '6204000', '4751201', '7319002', '0111301'] as const;
const SITUACOES = ['02', '02', '02', '02', '08', '08', '04', '03', '01'] as const;
const NATUREZAS = ['2062', '2062', '2135', '2305', '1015', null] as const;
const PORTES = ['00', '01', '01', '03', '05', null] as const;
/** In cents; around 1000,50 on purpose (bounds of capital_social_min/_max are inclusive). */
const CAPITAIS = [0, 100_000, 100_049, 100_050, 100_051, 5_000_000, 123_456_789, null] as const;
const CEPS = ['70836900', '70836100', '70000000', '01310100', '01310200', '20040002', '30130010', null] as const;
/** Words of at least 3 letters are not InnoDB stopwords; accents and case vary on purpose. */
const RAZAO_INICIO = ['Padaria', 'Comércio', 'Indústria', 'Farmácia', 'Mecânica', 'Construtora', 'Tecnologia', 'Ótica', 'Café'] as const;
const RAZAO_MEIO = ['São João', 'Açúcar Doce', 'Bom Preço', 'Horizonte', 'Paulista', 'Cerrado', 'Atlântico', 'Estrela'] as const;
const RAZAO_FIM = ['LTDA', 'ME', 'EIRELI', 'S.A.', 'EPP'] as const;
const FANTASIAS = [
  'Pão Quente',
  'Sabor Mineiro',
  'Café Expresso',
  'Tech Solar',
  'Farma Vida',
  'Ótica Visão',
  'Auto Peças Joãozinho',
  'PADARIA ESTRELA',
  null,
  null,
  null,
] as const;

const data = (rnd: () => number) =>
  `${1990 + Math.floor(rnd() * 36)}${String(1 + Math.floor(rnd() * 12)).padStart(2, '0')}${String(1 + Math.floor(rnd() * 28)).padStart(2, '0')}`;

const capitalEmTexto = (centavos: number) => `${Math.floor(centavos / 100)}.${String(centavos % 100).padStart(2, '0')}`;

/**
 * A registry of about 300 establishments: companies with a head office and up to two branches,
 * some alphanumeric CNPJs, some establishments whose company is absent, companies with and
 * without a Simples record, and every filtered column varied with NULLs among the values.
 */
export function gerarCadastro(semente = 20261122): Cadastro {
  const { rnd, escolher, digitos } = geradorAleatorio(semente);
  const estabelecimentos: LinhaEstabelecimento[] = [];
  const empresas = new Map<string, LinhaEmpresa>();
  const simplesPorBasico = new Map<string, LinhaSimples>();
  const secundarias = new Map<string, string[]>();
  const basicos = new Set<string>();

  const novoBasico = () => {
    let b: string;
    do b = digitos(8);
    while (basicos.has(b));
    basicos.add(b);
    return b;
  };

  const novoEstabelecimento = (basico: string, ordem: string, i: number) => {
    const uf = escolher(UFS);
    const principal = escolher(CNAES);
    const outras = [...SECUNDARIAS].filter((c) => c !== principal && rnd() < 0.25);
    const ddd_1 = escolher(['11', '21', '61', '31', '71', null, null] as const);
    const ddd_2 = rnd() < 0.3 ? escolher(['11', '61', '19'] as const) : null;
    const e = estabelecimento({
      cnpj_basico: basico,
      cnpj_ordem: ordem,
      nome_fantasia: escolher(FANTASIAS),
      situacao_cadastral: escolher(SITUACOES),
      data_situacao_cadastral: data(rnd),
      data_inicio_atividade: rnd() < 0.05 ? null : data(rnd),
      cnae_fiscal_principal: principal,
      cnae_fiscal_secundaria: outras.length ? outras.join(',') : null,
      tipo_logradouro: escolher(['RUA', 'AVENIDA', 'PRACA', 'RODOVIA', null] as const),
      logradouro: escolher(['DAS FLORES', 'PAULISTA', 'W3 NORTE', 'SETE DE SETEMBRO', null] as const),
      numero: escolher(['100', 'S/N', '2500', null] as const),
      bairro: escolher(['CENTRO', 'ASA NORTE', null] as const),
      cep: escolher(CEPS),
      uf,
      municipio: escolher(MUNICIPIOS_POR_UF[uf]),
      pais: uf === 'EX' ? '105' : null,
      nome_cidade_exterior: uf === 'EX' ? 'LISBOA' : null,
      ddd_1,
      // the Receita's files do carry a phone without its area code now and then
      telefone_1: ddd_1 ? digitos(8) : rnd() < 0.1 ? digitos(8) : null,
      ddd_2,
      telefone_2: ddd_2 ? digitos(9) : null,
      correio_eletronico: rnd() < 0.6 ? `CONTATO${i}@EXEMPLO${i % 7}.COM.BR` : null,
    });
    estabelecimentos.push(e);
    secundarias.set(e.cnpj, outras);
  };

  let i = 0;
  const alfanumericos = ['A1B2C3D4', '12ABC345', 'Z9Y8X7W6'];
  for (let k = 0; k < 190; k++) {
    const basico = k < alfanumericos.length ? alfanumericos[k] : novoBasico();
    basicos.add(basico);
    const capital = escolher(CAPITAIS);
    const razao = `${escolher(RAZAO_INICIO)} ${escolher(RAZAO_MEIO)} ${escolher(RAZAO_FIM)}`;
    empresas.set(
      basico,
      empresa({
        cnpj_basico: basico,
        razao_social: rnd() < 0.5 ? razao.toUpperCase() : razao,
        natureza_juridica: escolher(NATUREZAS),
        porte_empresa: escolher(PORTES),
        capital_social: capital === null ? null : capitalEmTexto(capital),
      }),
    );
    if (rnd() < 0.75) {
      const opcao = escolher(['S', 'S', 'N', null] as const);
      simplesPorBasico.set(
        basico,
        simples({
          cnpj_basico: basico,
          opcao_pelo_simples: opcao,
          data_opcao_simples: opcao === 'S' ? data(rnd) : null,
          opcao_pelo_mei: opcao === 'S' ? escolher(['S', 'N', 'N'] as const) : escolher(['N', null] as const),
        }),
      );
    }
    const filiais = (rnd() < 0.35 ? 1 : 0) + (rnd() < 0.15 ? 1 : 0);
    for (let f = 0; f <= filiais; f++) novoEstabelecimento(basico, String(f + 1).padStart(4, '0'), i++);
  }
  // establishments whose company is not in the registry (tem_empresa false)
  for (let k = 0; k < 15; k++) novoEstabelecimento(novoBasico(), '0001', i++);

  return {
    estabelecimentos,
    empresas,
    simples: simplesPorBasico,
    secundarias,
    municipios: new Map(Object.entries(MUNICIPIOS)),
  };
}

/** Writes the registry into the leads tables (in shuffled order) and forgets every cached count. */
export async function semear(c: Cadastro): Promise<void> {
  const embaralhados = [...c.estabelecimentos].sort((a, b) => (a.cnpj.slice(6) < b.cnpj.slice(6) ? -1 : 1));
  await inserir(
    'municipio',
    [...c.municipios].map(([codigo, descricao]) => ({ codigo, descricao })),
  );
  await inserir('empresa', [...c.empresas.values()]);
  await inserir('simples', [...c.simples.values()]);
  await inserir('estabelecimento', embaralhados);
  await inserir(
    'estabelecimento_cnae_secundaria',
    [...c.secundarias].flatMap(([cnpj, cnaes]) => cnaes.map((cnae) => ({ cnae, cnpj }))),
  );
  await novaGeracaoDosDados();
}

/** The identity and leads services over a registry generated from `semente` and seeded, with a master's token. */
export async function leadsComCadastro(semente?: number, opcoes?: Parameters<typeof iniciarSuite>[1]) {
  const suite = await iniciarSuite(['identity', 'leads'], opcoes);
  const leads = leadsDe(suite);
  const cadastro = gerarCadastro(semente);
  await semear(cadastro);
  return { suite, leads, cadastro, master: await leads.admin() };
}

/** The count cached for a filter set under generation `geracao` (the current one when not given); null when none is. */
export async function contagemGuardada(filtros: FiltrosDeEmpresas, geracao?: string): Promise<Contagem | null> {
  const valor = await redis('produtor').get((await chaveNaGeracao('contagem', chaveDosFiltros(filtros), geracao)).chave);
  return valor === null ? null : (JSON.parse(valor) as Contagem);
}

/** Adds establishments (and their company / Simples rows) to a generated registry and to the database. */
export async function acrescentar(
  c: Cadastro,
  linhas: { e: LinhaEstabelecimento; em?: LinhaEmpresa; si?: LinhaSimples }[],
): Promise<void> {
  const empresas = linhas.flatMap((l) => (l.em ? [l.em] : []));
  const simplesNovos = linhas.flatMap((l) => (l.si ? [l.si] : []));
  await inserir('empresa', empresas);
  await inserir('simples', simplesNovos);
  await inserir(
    'estabelecimento',
    linhas.map((l) => l.e),
  );
  for (const l of linhas) {
    c.estabelecimentos.push(l.e);
    c.secundarias.set(l.e.cnpj, []);
    if (l.em) c.empresas.set(l.em.cnpj_basico, l.em);
    if (l.si) c.simples.set(l.si.cnpj_basico, l.si);
  }
}

/** Removes establishments (and their company / Simples rows) from the registry and the database. */
export async function remover(c: Cadastro, cnpjs: string[]): Promise<void> {
  if (!cnpjs.length) return;
  const basicos = [...new Set(cnpjs.map((x) => x.slice(0, 8)))];
  await banco('leads').query('DELETE FROM estabelecimento WHERE cnpj IN (?)', { replacements: [cnpjs] });
  await banco('leads').query('DELETE FROM estabelecimento_cnae_secundaria WHERE cnpj IN (?)', { replacements: [cnpjs] });
  const restantes = new Set(c.estabelecimentos.filter((e) => !cnpjs.includes(e.cnpj)).map((e) => e.cnpj_basico));
  const orfaos = basicos.filter((b) => !restantes.has(b));
  if (orfaos.length) {
    await banco('leads').query('DELETE FROM empresa WHERE cnpj_basico IN (?)', { replacements: [orfaos] });
    await banco('leads').query('DELETE FROM simples WHERE cnpj_basico IN (?)', { replacements: [orfaos] });
  }
  c.estabelecimentos = c.estabelecimentos.filter((e) => !cnpjs.includes(e.cnpj));
  for (const x of cnpjs) c.secundarias.delete(x);
  for (const b of orfaos) (c.empresas.delete(b), c.simples.delete(b));
}

// ---------------------------------------------------------------------------------------------
// Expectations computed from the seed

export const visoes = (c: Cadastro): Visao[] =>
  c.estabelecimentos.map((e) => ({
    e,
    em: c.empresas.get(e.cnpj_basico),
    si: c.simples.get(e.cnpj_basico),
    secundarias: c.secundarias.get(e.cnpj) ?? [],
  }));

/** CNPJ order: the column is ASCII with a binary collation, as JS compares strings. */
export const emOrdemDeCnpj = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** The CNPJs, in CNPJ order, of the establishments that satisfy `p`. */
export const esperados = (c: Cadastro, p: (v: Visao) => boolean = () => true): string[] =>
  visoes(c)
    .filter(p)
    .map((v) => v.e.cnpj)
    .sort(emOrdemDeCnpj);

/** DECIMAL text to cents, so capital bounds compare exactly. */
export const centavos = (capital: string) => {
  const [inteiro, fracao = ''] = capital.split(/[.,]/);
  return Number(inteiro) * 100 + Number(fracao.padEnd(2, '0'));
};

const DESCRICOES_DE_SITUACAO: Record<string, string> = { '01': 'Nula', '02': 'Ativa', '03': 'Suspensa', '04': 'Inapta', '08': 'Baixada' };

/** The fields of SPEC §2 CnpjResumo, exactly. */
export const CAMPOS_DO_RESUMO = [
  'cnpj',
  'correio_eletronico',
  'ddd_1',
  'ddd_2',
  'empresa_capital_social',
  'empresa_razao_social',
  'logradouro',
  'municipio_descricao',
  'nome_fantasia',
  'numero',
  'situacao_cadastral_descricao',
  'telefone_1',
  'telefone_2',
  'tipo_logradouro',
  'uf',
].sort();

/** The CnpjResumo SPEC §2 describes for one establishment of the seed. */
export function resumoEsperado(c: Cadastro, cnpj: string): Record<string, string | null> {
  const e = c.estabelecimentos.find((x) => x.cnpj === cnpj);
  if (!e) throw new Error(`${cnpj} is not in the seed`);
  const em = c.empresas.get(e.cnpj_basico);
  return {
    cnpj: e.cnpj,
    correio_eletronico: e.correio_eletronico,
    ddd_1: e.ddd_1,
    ddd_2: e.ddd_2,
    empresa_capital_social: em?.capital_social?.replace('.', ',') ?? null,
    empresa_razao_social: em?.razao_social ?? null,
    logradouro: e.logradouro,
    municipio_descricao: (e.municipio && c.municipios.get(e.municipio)) ?? null,
    nome_fantasia: e.nome_fantasia,
    numero: e.numero,
    situacao_cadastral_descricao: (e.situacao_cadastral && DESCRICOES_DE_SITUACAO[e.situacao_cadastral]) ?? null,
    telefone_1: e.telefone_1,
    telefone_2: e.telefone_2,
    tipo_logradouro: e.tipo_logradouro,
    uf: e.uf,
  };
}

/** Case and accents do not count (the tables' utf8mb4_unicode_ci collation). */
export const semAcento = (s: string) =>
  s
    .normalize('NFD')
    .replace(/\p{M}/gu, '')
    .toLowerCase();
// as the full-text index cuts them: `_` joins (ABC_DEF is one word)
const palavras = (s: string) => semAcento(s).split(/[^\p{L}\p{N}_]+/u).filter(Boolean);

/**
 * The `nome` filter as a user reads DESIGN §6: every word of at least 3 letters of the query starts
 * a word of the razão social, or every one starts a word of the nome fantasia; a query of only
 * shorter words is a prefix of either name.
 */
export function casaComNome(v: Visao, consulta: string): boolean {
  const nomes = [v.e.nome_fantasia, v.em?.razao_social].filter((n): n is string => !!n);
  const termos = palavras(consulta).filter((p) => p.length >= 3);
  if (!termos.length) return nomes.some((n) => semAcento(n).startsWith(semAcento(consulta.trim())));
  return nomes.some((n) => {
    const doNome = palavras(n);
    return termos.every((t) => doNome.some((p) => p.startsWith(t)));
  });
}

// ---------------------------------------------------------------------------------------------
// The API as its clients use it

export type Consulta = Record<string, string | number | boolean | undefined>;

export function leadsDe(suite: SuiteDeTeste) {
  const acesso = acessoDe(suite.url.identity, suite.url.leads);
  const { api } = acesso;

  /** One page of GET /api/empresas. */
  const listar = (token: string | undefined, query: Consulta = {}, o: Opcoes = {}) => api.get('/api/empresas', { ...o, token, query });

  /** Every page of a filtered listing (50 at a time): all items, and what the first page said. */
  async function listarTudo(token: string, query: Consulta = {}) {
    const primeira = await listar(token, { ...query, tamanho: 50, pagina: 1 });
    if (primeira.status !== 200) throw new Error(`listing ${JSON.stringify(query)}: ${primeira.status} ${primeira.text}`);
    const { total, estimado } = primeira.body as { total: number; estimado: boolean };
    const itens: Record<string, string | null>[] = [...primeira.body.itens];
    const paginas = Math.ceil(total / 50);
    for (let pagina = 2; pagina <= paginas; pagina++) {
      const res = await listar(token, { ...query, tamanho: 50, pagina });
      if (res.status !== 200) throw new Error(`listing page ${pagina}: ${res.status} ${res.text}`);
      itens.push(...res.body.itens);
    }
    return { total, estimado, itens, cnpjs: itens.map((i) => i.cnpj as string) };
  }

  /**
   * A logged-in identity collaborator registered on leads by a master's listing. `permissoes`
   * undefined keeps `Acesso inicial` (which reads empresas); null removes the profile; otherwise a
   * new profile with them is linked.
   */
  const pessoa = (permissoes?: Record<string, string[]> | null) => acesso.pessoa({ permissoes });

  return { ...acesso, listar, listarTudo, pessoa };
}

export type Leads = ReturnType<typeof leadsDe>;
