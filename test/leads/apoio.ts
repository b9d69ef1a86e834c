import { ChildProcess } from 'node:child_process';
import { createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import yazl from 'yazl';
import { fila } from '../../queues/fila';
import { filaLeadsImportacao } from '../../queues/leads-importacao';
import { importarCnpj } from '../../api/leads/importacao';
import { novaConexao } from '../../lib/database';
import { importarCnpjPelaFila } from '../../lib/runner';
import { esperarAte, esperarOutraConexao } from '../helpers/espera';
import { cliente } from '../helpers/http';
import { comandoDaSuite } from '../helpers/processo';
import { iniciarSuite, SuiteDeTeste } from '../helpers/suite';

/**
 * Helpers of the leads tests: the Receita Federal's open CNPJ files written the way the Receita
 * writes them (DESIGN §6, test/fixtures/receita/LEIA-ME.md), row builders with defaults for each
 * layout, and an independent CNPJ check-digit calculation.
 */

/** The real-layout samples (test/fixtures/receita/LEIA-ME.md). */
export const FIXTURES_DA_RECEITA = path.resolve(__dirname, '../fixtures/receita');

// ---------------------------------------------------------------------------------------------
// Check digits, computed here independently of api/leads/cnpj.ts
// ---------------------------------------------------------------------------------------------

/**
 * The two check digits of a CNPJ base (12 characters), as the Receita publishes the rule: each
 * character is worth its ASCII code minus 48 (so 0-9 are themselves and A-Z are 17-42), weights
 * 5,4,3,2,9,8,7,6,5,4,3,2 for the first digit and 6,5,4,3,2,9,8,7,6,5,4,3,2 for the second;
 * remainder of 11 below 2 gives 0, otherwise 11 minus the remainder.
 */
export function dvDoCnpj(base: string): string {
  if (!/^[0-9A-Z]{12}$/.test(base)) throw new Error(`bad CNPJ base: ${base}`);
  const pesos = [6, 5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2];
  const digito = (s: string) => {
    const p = pesos.slice(pesos.length - s.length);
    const soma = [...s].reduce((t, ch, i) => t + (ch.charCodeAt(0) - 48) * p[i], 0);
    return soma % 11 < 2 ? 0 : 11 - (soma % 11);
  };
  const d1 = digito(base);
  return `${d1}${digito(base + d1)}`;
}

/** A valid CNPJ (14 characters) from its 12-character base. */
export const cnpjValido = (base: string) => base + dvDoCnpj(base);

/** The same CNPJ with its last check digit wrong. */
export const comDvErrado = (cnpj: string) => cnpj.slice(0, 13) + String((Number(cnpj[13]) + 1) % 10);

/** `33683111000280` → `33.683.111/0002-80` */
export const comMascara = (cnpj: string) =>
  `${cnpj.slice(0, 2)}.${cnpj.slice(2, 5)}.${cnpj.slice(5, 8)}/${cnpj.slice(8, 12)}-${cnpj.slice(12)}`;

let sequencia = 0;
/**
 * A valid numeric CNPJ no other call of this process gets: a random 8-digit company base (the
 * leading 9 keeps it off the real fixtures' companies) and a running order number.
 */
export function novoCnpj(ordem?: string): string {
  sequencia++;
  const basico = `9${String(Math.floor(Math.random() * 1e7)).padStart(7, '0')}`;
  return cnpjValido(basico + (ordem ?? String(sequencia % 10000).padStart(4, '0')));
}

// ---------------------------------------------------------------------------------------------
// Layouts (SOURCE.md "File by file"), in file column order
// ---------------------------------------------------------------------------------------------

export const COLUNAS_DO_ESTABELECIMENTO = [
  'cnpj_basico',
  'cnpj_ordem',
  'cnpj_dv',
  'identificador_matriz_filial',
  'nome_fantasia',
  'situacao_cadastral',
  'data_situacao_cadastral',
  'motivo_situacao_cadastral',
  'nome_cidade_exterior',
  'pais',
  'data_inicio_atividade',
  'cnae_fiscal_principal',
  'cnae_fiscal_secundaria',
  'tipo_logradouro',
  'logradouro',
  'numero',
  'complemento',
  'bairro',
  'cep',
  'uf',
  'municipio',
  'ddd_1',
  'telefone_1',
  'ddd_2',
  'telefone_2',
  'ddd_fax',
  'fax',
  'correio_eletronico',
  'situacao_especial',
  'data_situacao_especial',
] as const;

export const COLUNAS_DA_EMPRESA = [
  'cnpj_basico',
  'razao_social',
  'natureza_juridica',
  'qualificacao_responsavel',
  'capital_social',
  'porte_empresa',
  'ente_federativo_responsavel',
] as const;

export const COLUNAS_DO_SOCIO = [
  'cnpj_basico',
  'identificador_socio',
  'nome_socio_razao_social',
  'cnpj_cpf_socio',
  'qualificacao_socio',
  'data_entrada_sociedade',
  'pais',
  'representante_legal',
  'nome_representante',
  'qualificacao_representante',
  'faixa_etaria',
] as const;

export const COLUNAS_DO_SIMPLES = [
  'cnpj_basico',
  'opcao_pelo_simples',
  'data_opcao_simples',
  'data_exclusao_simples',
  'opcao_pelo_mei',
  'data_opcao_mei',
  'data_exclusao_mei',
] as const;

type Campos<C extends readonly string[]> = Partial<Record<C[number], string>>;

const emOrdem = <C extends readonly string[]>(colunas: C, valores: Record<string, string>) => colunas.map((c) => valores[c] ?? '');

/**
 * An Estabelecimentos row (30 columns). `cnpj` (14 characters) fills basico, ordem and dv; any
 * column may be given by name. Defaults: an active head office in São Paulo, CNAE 6204000.
 */
export function linhaDeEstabelecimento(campos: Campos<typeof COLUNAS_DO_ESTABELECIMENTO> & { cnpj?: string } = {}): string[] {
  const { cnpj = novoCnpj(), ...resto } = campos;
  return emOrdem(COLUNAS_DO_ESTABELECIMENTO, {
    cnpj_basico: cnpj.slice(0, 8),
    cnpj_ordem: cnpj.slice(8, 12),
    cnpj_dv: cnpj.slice(12),
    identificador_matriz_filial: '1',
    nome_fantasia: 'LOJA TESTE',
    situacao_cadastral: '02',
    data_situacao_cadastral: '20200101',
    motivo_situacao_cadastral: '00',
    data_inicio_atividade: '20200101',
    cnae_fiscal_principal: '6204000',
    tipo_logradouro: 'RUA',
    logradouro: 'DAS FLORES',
    numero: '10',
    bairro: 'CENTRO',
    cep: '01001000',
    uf: 'SP',
    municipio: '7107',
    ...resto,
  });
}

/** An Empresas row (7 columns); `cnpj_basico` is required. */
export function linhaDeEmpresa(campos: Campos<typeof COLUNAS_DA_EMPRESA> & { cnpj_basico: string }): string[] {
  return emOrdem(COLUNAS_DA_EMPRESA, {
    razao_social: 'EMPRESA TESTE LTDA',
    natureza_juridica: '2062',
    qualificacao_responsavel: '49',
    capital_social: '10000,00',
    porte_empresa: '01',
    ...campos,
  });
}

/** A Socios row (11 columns); `cnpj_basico` is required. */
export function linhaDeSocio(campos: Campos<typeof COLUNAS_DO_SOCIO> & { cnpj_basico: string }): string[] {
  return emOrdem(COLUNAS_DO_SOCIO, {
    identificador_socio: '2',
    nome_socio_razao_social: 'FULANO DE TAL',
    cnpj_cpf_socio: '***123456**',
    qualificacao_socio: '49',
    data_entrada_sociedade: '20200101',
    representante_legal: '***000000**',
    qualificacao_representante: '00',
    faixa_etaria: '4',
    ...campos,
  });
}

/** A Simples row (7 columns); `cnpj_basico` is required. Default: Simples since 2020, no MEI. */
export function linhaDoSimples(campos: Campos<typeof COLUNAS_DO_SIMPLES> & { cnpj_basico: string }): string[] {
  return emOrdem(COLUNAS_DO_SIMPLES, {
    opcao_pelo_simples: 'S',
    data_opcao_simples: '20200101',
    data_exclusao_simples: '00000000',
    opcao_pelo_mei: 'N',
    data_opcao_mei: '00000000',
    data_exclusao_mei: '00000000',
    ...campos,
  });
}

/** Rows of a code table (2 columns) from `{codigo: descricao}`. */
export const linhasDeCodigos = (codigos: Record<string, string>): string[][] => Object.entries(codigos).map(([c, d]) => [c, d]);

// ---------------------------------------------------------------------------------------------
// Zips in the Receita's layout
// ---------------------------------------------------------------------------------------------

/** Inner names as the real archives carry them (SOURCE.md): the importer must ignore them. */
const NOMES_INTERNOS: Record<string, string> = {
  estabelecimentos: 'K3241.K03200Y0.D60110.ESTABELE',
  empresas: 'K3241.K03200Y0.D60110.EMPRECSV',
  socios: 'K3241.K03200Y0.D60110.SOCIOCSV',
  simples: 'F.K03200$W.SIMPLES.CSV.D60110',
  cnaes: 'F.K03200$Z.D60110.CNAECSV',
  motivos: 'F.K03200$Z.D60110.MOTICSV',
  municipios: 'F.K03200$Z.D60110.MUNICCSV',
  naturezas: 'F.K03200$Z.D60110.NATJUCSV',
  paises: 'F.K03200$Z.D60110.PAISCSV',
  qualificacoes: 'F.K03200$Z.D60110.QUALSCSV',
};

export const nomeInternoReal = (nomeDoZip: string) => {
  const tipo = /^[A-Za-z]+/.exec(nomeDoZip)?.[0].toLowerCase() ?? '';
  return NOMES_INTERNOS[tipo] ?? nomeDoZip;
};

/** Rows as the Receita writes them: every field in double quotes, `;` between, `\n` after each. */
export const csvDaReceita = (linhas: string[][]) => linhas.map((l) => `${l.map((v) => `"${v}"`).join(';')}\n`).join('');

export interface ArquivoDaReceita {
  /** the name of the file inside the zip (default: the real archives' name for the kind) */
  interno?: string;
  /** rows, quoted by csvDaReceita; or the raw text, written byte for byte as ISO-8859-1 */
  linhas: string[][] | string;
  /** more entries of the zip after that one: name → text */
  outras?: Record<string, string>;
}

/** Writes one zip holding one ISO-8859-1 entry, and the `outras` after it. */
export async function escreverZip(caminho: string, interno: string, texto: string, outras: Record<string, string> = {}): Promise<void> {
  const zip = new yazl.ZipFile();
  for (const [nome, conteudo] of Object.entries({ [interno]: texto, ...outras })) {
    zip.addBuffer(Buffer.from(conteudo, 'latin1'), nome, { mtime: new Date('2026-01-10T00:00:00Z') });
  }
  zip.end();
  await pipeline(zip.outputStream, createWriteStream(caminho));
}

/**
 * Writes `<name>.zip` for each entry of `arquivos` (`{Estabelecimentos0: {linhas}}` →
 * `Estabelecimentos0.zip`), each holding one CSV entry in the Receita's layout.
 */
export async function escreverZipsDaReceita(dir: string, arquivos: Record<string, ArquivoDaReceita>): Promise<void> {
  for (const [nome, arquivo] of Object.entries(arquivos)) {
    const texto = typeof arquivo.linhas === 'string' ? arquivo.linhas : csvDaReceita(arquivo.linhas);
    await escreverZip(path.join(dir, `${nome}.zip`), arquivo.interno ?? nomeInternoReal(nome), texto, arquivo.outras);
  }
}

/** What one month of the registry holds; a kind left out (or without lines) has no file. */
export interface MesDaReceita {
  estabelecimentos?: string[][];
  empresas?: string[][];
  socios?: string[][];
  simples?: string[][];
  cnaes?: Record<string, string>;
  motivos?: Record<string, string>;
  municipios?: Record<string, string>;
  naturezas?: Record<string, string>;
  paises?: Record<string, string>;
  qualificacoes?: Record<string, string>;
}

/** Code tables every generated month carries unless told otherwise. */
export const CODIGOS_PADRAO = {
  cnaes: { '6204000': 'Consultoria em tecnologia da informação', '4711302': 'Comércio varejista de mercadorias em geral' },
  motivos: { '00': 'SEM MOTIVO', '01': 'EXTINCAO POR ENCERRAMENTO LIQUIDACAO VOLUNTARIA' },
  municipios: { '7107': 'SAO PAULO', '9701': 'BRASILIA' },
  naturezas: { '2062': 'Sociedade Empresária Limitada', '2011': 'Empresa Pública' },
  paises: { '105': 'BRASIL', '249': 'ESTADOS UNIDOS' },
  qualificacoes: { '00': 'Não informada', '05': 'Administrador', '49': 'Sócio-Administrador' },
};

/**
 * A complete month in `dir`: one zip of each of the 10 kinds, so an import replaces every table
 * and a test does not see what an earlier test imported.
 */
export async function escreverMes(dir: string, mes: MesDaReceita): Promise<string> {
  const codigos = { ...CODIGOS_PADRAO, ...mes };
  // a kind without lines has no file, as the import refuses one that holds none
  const seHouver = (nome: string, linhas: string[][] = []) => (linhas.length ? { [nome]: { linhas } } : {});
  await escreverZipsDaReceita(dir, {
    ...seHouver('Estabelecimentos0', mes.estabelecimentos),
    ...seHouver('Empresas0', mes.empresas),
    ...seHouver('Socios0', mes.socios),
    ...seHouver('Simples', mes.simples),
    Cnaes: { linhas: linhasDeCodigos(codigos.cnaes) },
    Motivos: { linhas: linhasDeCodigos(codigos.motivos) },
    Municipios: { linhas: linhasDeCodigos(codigos.municipios) },
    Naturezas: { linhas: linhasDeCodigos(codigos.naturezas) },
    Paises: { linhas: linhasDeCodigos(codigos.paises) },
    Qualificacoes: { linhas: linhasDeCodigos(codigos.qualificacoes) },
  });
  return dir;
}

/** A month of one establishment and its company, named `nome` (its nome_fantasia; the company's razão social `EMPRESA <nome>`). */
const mesDeUmCnpj = (dir: string, cnpj: string, nome: string) =>
  escreverMes(dir, {
    estabelecimentos: [linhaDeEstabelecimento({ cnpj, nome_fantasia: nome })],
    empresas: [linhaDeEmpresa({ cnpj_basico: cnpj.slice(0, 8), razao_social: `EMPRESA ${nome}` })],
  });

/** A connection holding the live establishments for reading, as a read the swap must wait for. */
export async function leituraPresa() {
  const leitor = await novaConexao('leads');
  await leitor.query('LOCK TABLES estabelecimento READ');
  return leitor;
}

/** `suite worker leads-importacao` in a child process (kept in `filhos`), once its worker is connected to the queue. */
async function workerDeImportacaoFilho(filhos: ChildProcess[]): Promise<ChildProcess> {
  const processo = comandoDaSuite(['worker', filaLeadsImportacao.nome]);
  let saida = '';
  processo.stdout.on('data', (d) => (saida += d));
  processo.stderr.on('data', (d) => (saida += d));
  filhos.push(processo);
  try {
    await esperarAte(async () => processo.exitCode === null && (await fila(filaLeadsImportacao).getWorkersCount()) > 0, 'the child worker connected', 45_000);
  } catch (err) {
    throw new Error(`${(err as Error).message}; exit ${processo.exitCode}; output: ${saida.slice(-2000)}`);
  }
  return processo;
}

/**
 * For a file whose imports run in `suite worker` child processes: the file's suite (identity and
 * leads, no worker of its own, a 2-second job lock so that a dead worker's lapses within seconds),
 * months of one CNPJ in folders of their own, and the children; all stopped and removed after it.
 */
export function importacaoEmFilhosNesteArquivo() {
  let suite: SuiteDeTeste | undefined;
  let api: ReturnType<typeof cliente> | undefined;
  const dirs = diretorios();
  const filhos: ChildProcess[] = [];
  beforeAll(async () => {
    suite = await iniciarSuite(['identity', 'leads'], { workers: false, env: { LEADS_CNPJ_LIMITE_POR_MINUTO: '1000000', LEADS_IMPORTACAO_LOCK_MS: '2000' } });
    api = cliente(suite.url.leads);
  });
  afterAll(async () => {
    for (const filho of filhos) if (filho.exitCode === null && filho.signalCode === null) filho.kill('SIGKILL');
    dirs.apagar();
    await suite?.encerrar();
  });
  const mes = (cnpj: string, nome: string) => mesDeUmCnpj(dirs.novo(), cnpj, nome);
  return {
    api: () => api!,
    mes,
    /**
     * Month `antes` of a new CNPJ live, then month `depois` imported by `import-cnpj`'s queue in a
     * child `worker`, held at its swap by a read of the live table on `leitor` (its LOCK TABLES; the
     * caller ends it). `fim` is that import's end as an error (`assumidas` counts the times the
     * command took the queue over).
     */
    async presaNaTroca(antes: string, depois: string) {
      const cnpj = novoCnpj();
      await importarCnpj(await mes(cnpj, antes));
      const worker = await workerDeImportacaoFilho(filhos);
      const dir = await mes(cnpj, depois);
      const leitor = await leituraPresa();
      const contagem = { assumidas: 0 };
      const fim = importarCnpjPelaFila(dir, () => undefined, () => contagem.assumidas++).then(
        () => new Error('the import ended well'),
        (err: Error) => err,
      );
      await esperarOutraConexao(leitor, 'the swap waiting in the child worker', ['RENAME TABLE%']);
      return { cnpj, worker, dir, leitor, fim, contagem };
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Directories and the response shape
// ---------------------------------------------------------------------------------------------

/** Temporary directories of a test file, removed by `apagar`. */
export function diretorios() {
  const criados: string[] = [];
  return {
    novo(rotulo = 'receita'): string {
      const d = mkdtempSync(path.join(tmpdir(), `leads-${rotulo}-`));
      criados.push(d);
      return d;
    },
    apagar() {
      for (const d of criados.splice(0)) rmSync(d, { recursive: true, force: true });
    },
  };
}

/** The fields of SPEC §2 Establishment (Cnpj), exactly: the required ones and every optional one. */
export const CAMPOS_OBRIGATORIOS_DO_CNPJ = ['cnpj', 'cnpj_basico', 'socios', 'tem_empresa', 'tem_simples'];
export const CAMPOS_OPCIONAIS_DO_CNPJ = [
  // Identity
  'cnpj_ordem',
  'cnpj_dv',
  'identificador_matriz_filial',
  'identificador_matriz_filial_descricao',
  'nome_fantasia',
  // Status
  'situacao_cadastral',
  'situacao_cadastral_descricao',
  'data_situacao_cadastral',
  'motivo_situacao_cadastral',
  'motivo_situacao_cadastral_descricao',
  'situacao_especial',
  'data_situacao_especial',
  'data_inicio_atividade',
  // Activity
  'cnae_fiscal_principal',
  'cnae_fiscal_principal_descricao',
  'cnae_fiscal_secundaria',
  // Address
  'tipo_logradouro',
  'logradouro',
  'numero',
  'complemento',
  'bairro',
  'cep',
  'municipio',
  'municipio_descricao',
  'uf',
  'nome_cidade_exterior',
  'pais',
  'pais_descricao',
  // Contact
  'ddd_1',
  'telefone_1',
  'ddd_2',
  'telefone_2',
  'ddd_fax',
  'fax',
  'correio_eletronico',
  // Company
  'empresa_razao_social',
  'empresa_natureza_juridica',
  'empresa_natureza_juridica_descricao',
  'empresa_porte_empresa',
  'empresa_porte_empresa_descricao',
  'empresa_capital_social',
  'empresa_ente_federativo_responsavel',
  'empresa_qualificacao_responsavel',
  'empresa_qualificacao_responsavel_descricao',
  // Simples Nacional and MEI
  'simples_opcao_pelo_simples',
  'simples_opcao_pelo_simples_descricao',
  'simples_data_opcao_simples',
  'simples_data_exclusao_simples',
  'simples_opcao_pelo_mei',
  'simples_opcao_pelo_mei_descricao',
  'simples_data_opcao_mei',
  'simples_data_exclusao_mei',
];
export const CAMPOS_DO_CNPJ = [...CAMPOS_OBRIGATORIOS_DO_CNPJ, ...CAMPOS_OPCIONAIS_DO_CNPJ].sort();

/** The keys of each element of `socios` (SPEC §2), exactly. */
export const CAMPOS_DO_SOCIO = [
  'cnpj_basico',
  'identificador_socio',
  'identificador_socio_descricao',
  'nome_socio_razao_social',
  'cnpj_cpf_socio',
  'qualificacao_socio',
  'qualificacao_socio_descricao',
  'data_entrada_sociedade',
  'pais',
  'pais_descricao',
  'representante_legal',
  'nome_representante',
  'qualificacao_representante',
  'qualificacao_representante_descricao',
  'faixa_etaria',
].sort();

/** Every optional field of a record with the value null: a test spreads what it expects on top. */
export const tudoNulo = (): Record<string, null> => Object.fromEntries(CAMPOS_OPCIONAIS_DO_CNPJ.map((c) => [c, null]));
