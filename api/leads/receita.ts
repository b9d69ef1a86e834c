import { Readable, Transform, TransformCallback } from 'node:stream';
import yauzl, { Entry, ZipFile } from 'yauzl';

/**
 * The layout of the Receita Federal's open CNPJ files (DESIGN §6): which zip feeds which table, and
 * each column in file order with how its text is cleaned. The database parses the CSV itself (LOAD
 * DATA), which is many times faster than parsing it here; this module only says what goes where.
 */

/** How a raw field becomes a column value. */
type Tipo =
  | 'texto' // trimmed; empty → null
  | 'data' // AAAAMMDD; `00000000`, `0` or empty → null (DESIGN §10)
  | 'decimal' // decimal comma → DECIMAL
  | 'codigo'; // trimmed, upper case (alphanumeric CNPJ parts); empty → null

export interface Coluna {
  nome: string;
  tipo: Tipo;
}

export interface LayoutDeArquivo {
  /** the kind of file, as its zip is named (`Estabelecimentos3.zip` → Estabelecimentos) */
  tipo: string;
  tabela: string;
  colunas: Coluna[];
  /** columns computed from others, after the file's own */
  calculadas?: Record<string, string>;
}

const c = (tipo: Tipo, ...nomes: string[]): Coluna[] => nomes.map((nome) => ({ nome, tipo }));

const tabelaDeCodigos = (tipo: string, tabela: string): LayoutDeArquivo => ({
  tipo,
  tabela,
  colunas: [...c('codigo', 'codigo'), ...c('texto', 'descricao')],
});

export const LAYOUTS: LayoutDeArquivo[] = [
  {
    tipo: 'Empresas',
    tabela: 'empresa',
    colunas: [
      ...c('codigo', 'cnpj_basico'),
      ...c('texto', 'razao_social'),
      ...c('codigo', 'natureza_juridica', 'qualificacao_responsavel'),
      ...c('decimal', 'capital_social'),
      ...c('codigo', 'porte_empresa'),
      ...c('texto', 'ente_federativo_responsavel'),
    ],
  },
  {
    tipo: 'Estabelecimentos',
    tabela: 'estabelecimento',
    colunas: [
      ...c('codigo', 'cnpj_basico', 'cnpj_ordem', 'cnpj_dv', 'identificador_matriz_filial'),
      ...c('texto', 'nome_fantasia'),
      ...c('codigo', 'situacao_cadastral'),
      ...c('data', 'data_situacao_cadastral'),
      ...c('codigo', 'motivo_situacao_cadastral'),
      ...c('texto', 'nome_cidade_exterior'),
      ...c('codigo', 'pais'),
      ...c('data', 'data_inicio_atividade'),
      ...c('codigo', 'cnae_fiscal_principal', 'cnae_fiscal_secundaria'),
      ...c('texto', 'tipo_logradouro', 'logradouro', 'numero', 'complemento', 'bairro'),
      ...c('codigo', 'cep', 'uf', 'municipio', 'ddd_1', 'telefone_1', 'ddd_2', 'telefone_2', 'ddd_fax', 'fax'),
      ...c('texto', 'correio_eletronico', 'situacao_especial'),
      ...c('data', 'data_situacao_especial'),
    ],
    calculadas: { cnpj: 'CONCAT(cnpj_basico, cnpj_ordem, cnpj_dv)' },
  },
  {
    tipo: 'Socios',
    tabela: 'socio',
    colunas: [
      ...c('codigo', 'cnpj_basico', 'identificador_socio'),
      ...c('texto', 'nome_socio_razao_social'),
      ...c('codigo', 'cnpj_cpf_socio', 'qualificacao_socio'),
      ...c('data', 'data_entrada_sociedade'),
      ...c('codigo', 'pais', 'representante_legal'),
      ...c('texto', 'nome_representante'),
      ...c('codigo', 'qualificacao_representante', 'faixa_etaria'),
    ],
  },
  {
    tipo: 'Simples',
    tabela: 'simples',
    colunas: [
      ...c('codigo', 'cnpj_basico', 'opcao_pelo_simples'),
      ...c('data', 'data_opcao_simples', 'data_exclusao_simples'),
      ...c('codigo', 'opcao_pelo_mei'),
      ...c('data', 'data_opcao_mei', 'data_exclusao_mei'),
    ],
  },
  tabelaDeCodigos('Cnaes', 'cnae'),
  tabelaDeCodigos('Motivos', 'motivo'),
  tabelaDeCodigos('Municipios', 'municipio'),
  tabelaDeCodigos('Naturezas', 'natureza_juridica'),
  tabelaDeCodigos('Paises', 'pais'),
  tabelaDeCodigos('Qualificacoes', 'qualificacao'),
];

/** The layout of a zip by its name (`Estabelecimentos0.zip`, `simples.zip`), or undefined for other files. */
export function layoutDoArquivo(nomeDoZip: string): LayoutDeArquivo | undefined {
  const m = /^([A-Za-z]+)\d*\.zip$/i.exec(nomeDoZip);
  return m ? LAYOUTS.find((l) => l.tipo.toLowerCase() === m[1].toLowerCase()) : undefined;
}

function expressao(col: Coluna): string {
  const v = `TRIM(@${col.nome})`;
  switch (col.tipo) {
    case 'texto':
      return `NULLIF(${v}, '')`;
    case 'codigo':
      return `NULLIF(UPPER(${v}), '')`;
    case 'data':
      return `IF(${v} IN ('', '0', '00000000'), NULL, ${v})`;
    case 'decimal':
      return `CAST(NULLIF(REPLACE(${v}, ',', '.'), '') AS DECIMAL(20,2))`;
  }
}

/**
 * The LOAD DATA statement of a file into `tabela`: `;`-separated, double-quoted, ISO-8859-1, one
 * record a line. `IGNORE` keeps the first of repeated keys (the real files have a few) and turns a
 * malformed value into a warning instead of stopping a load of millions of rows.
 */
export function sqlDeCarga(layout: LayoutDeArquivo, tabela: string): string {
  const variaveis = layout.colunas.map((col) => `@${col.nome}`).join(', ');
  const atribuicoes = layout.colunas.map((col) => `${col.nome} = ${expressao(col)}`);
  for (const [nome, sql] of Object.entries(layout.calculadas ?? {})) atribuicoes.push(`${nome} = ${sql}`);
  return `LOAD DATA LOCAL INFILE '${layout.tipo}' IGNORE INTO TABLE ${tabela}
    CHARACTER SET latin1
    FIELDS TERMINATED BY ';' OPTIONALLY ENCLOSED BY '"' ESCAPED BY ''
    LINES TERMINATED BY '\\n'
    (${variaveis})
    SET ${atribuicoes.join(', ')}`;
}

const NUL = 0x00;
const CR = 0x0d;
const LF = 0x0a;
const ESPACO = 0x20;

/**
 * Cleans the raw bytes on their way to the database: drops NUL bytes and carriage returns, folds
 * runs of spaces into one and skips blank lines. Works on bytes (ISO-8859-1 is one byte a
 * character), and lets a chunk that needs none of it through untouched.
 */
export class LimpezaDeBytes extends Transform {
  private anterior = LF; // as if after a line break: leading blank lines are dropped too

  /** @param aoLer told the size of each raw chunk read (progress) */
  constructor(private readonly aoLer: (bytes: number) => void = () => undefined) {
    super();
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, feito: TransformCallback): void {
    this.aoLer(chunk.length);
    if (chunk.length === 0) return feito();
    if (!this.precisaLimpar(chunk)) {
      this.anterior = chunk[chunk.length - 1];
      return feito(null, chunk);
    }
    const saida = Buffer.allocUnsafe(chunk.length);
    let n = 0;
    let anterior = this.anterior;
    for (let i = 0; i < chunk.length; i++) {
      const b = chunk[i];
      if (b === NUL || b === CR) continue;
      if ((b === ESPACO || b === LF) && b === anterior) continue;
      saida[n++] = b;
      anterior = b;
    }
    this.anterior = anterior;
    feito(null, n ? saida.subarray(0, n) : undefined);
  }

  private precisaLimpar(chunk: Buffer): boolean {
    const primeiro = chunk[0];
    if ((primeiro === ESPACO || primeiro === LF) && primeiro === this.anterior) return true;
    return chunk.indexOf(NUL) >= 0 || chunk.indexOf(CR) >= 0 || chunk.indexOf('  ') >= 0 || chunk.indexOf('\n\n') >= 0;
  }
}

const abrirZip = (caminho: string) =>
  new Promise<ZipFile>((ok, falha) =>
    yauzl.open(caminho, { lazyEntries: true, autoClose: false }, (err, zip) => (err ? falha(err) : ok(zip))),
  );

/** The files inside a zip (folders left out), whatever their names. */
export async function entradasDoZip(caminho: string): Promise<{ zip: ZipFile; entradas: Entry[] }> {
  const zip = await abrirZip(caminho);
  const entradas: Entry[] = [];
  await new Promise<void>((ok, falha) => {
    zip.on('entry', (e: Entry) => {
      if (!e.fileName.endsWith('/')) entradas.push(e);
      zip.readEntry();
    });
    zip.once('end', ok);
    zip.once('error', falha);
    zip.readEntry();
  });
  return { zip, entradas };
}

export const lerEntrada = (zip: ZipFile, entrada: Entry) =>
  new Promise<Readable>((ok, falha) => zip.openReadStream(entrada, (err, s) => (err ? falha(err) : ok(s))));
