import path from 'node:path';
import { Readable, Transform, TransformCallback } from 'node:stream';
import yauzl, { Entry, ZipFile } from 'yauzl';

/**
 * The layout of the Receita Federal's open CNPJ files (DESIGN §6): which zip feeds which table, and
 * each column in file order with how its text is cleaned, and the cleaning itself on the way to the
 * database's bulk loader (LOAD DATA), which then puts each field straight into its column.
 */

/** How a raw field becomes a column value. */
type Tipo =
  | 'texto' // trimmed; empty → null
  | 'data' // AAAAMMDD; `00000000`, `0` or empty → null (DESIGN §10)
  | 'decimal' // decimal comma → DECIMAL(20,2); not a number it holds (see decimalValido) → null
  | 'codigo' // trimmed, upper case (alphanumeric CNPJ parts); empty → null
  | 'ddd'; // trimmed, leading zeros dropped (`0011` → `11`, the 2 digits the `ddd` filter takes); empty → null

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
      ...c('codigo', 'cep', 'uf', 'municipio'),
      ...c('ddd', 'ddd_1'),
      ...c('codigo', 'telefone_1'),
      ...c('ddd', 'ddd_2'),
      ...c('codigo', 'telefone_2'),
      ...c('ddd', 'ddd_fax'),
      ...c('codigo', 'fax'),
      ...c('texto', 'correio_eletronico', 'situacao_especial'),
      ...c('data', 'data_situacao_especial'),
    ],
    calculadas: { cnpj: 'CONCAT(cnpj_basico, cnpj_ordem, cnpj_dv)' },
  },
  {
    tipo: 'Socios',
    tabela: 'socio',
    // numbered by the importer, file by file, in file order (importacao.ts `LINHAS_POR_ARQUIVO`): an
    // AUTO_INCREMENT id makes InnoDB hold the table's AUTO-INC lock for a whole LOAD DATA
    calculadas: { id: '@numero_base + (@numero_da_linha := @numero_da_linha + 1)' },
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

/**
 * The LOAD DATA statement of a cleaned file (LimpezaDeCampos) into `tabela`: `;`-separated,
 * double-quoted, ISO-8859-1, one record a line, each field straight into its column. The files
 * hold Windows-1252 punctuation too (0x93 “, 0x96 –, 0x92 ’): the database's `latin1` is
 * Windows-1252, so those bytes become the characters meant rather than C1 controls, and every
 * other byte is the same as in ISO-8859-1. `IGNORE` keeps
 * the first of repeated keys (the real files have a few) and turns a malformed value into a warning
 * instead of stopping a load of millions of rows.
 */
export function sqlDeCarga(layout: LayoutDeArquivo, tabela: string): string {
  const calculadas = Object.entries(layout.calculadas ?? {}).map(([nome, sql]) => `${nome} = ${sql}`);
  return `LOAD DATA LOCAL INFILE '${layout.tipo}' IGNORE INTO TABLE ${tabela}
    CHARACTER SET latin1
    FIELDS TERMINATED BY ';' OPTIONALLY ENCLOSED BY '"' ESCAPED BY ''
    LINES TERMINATED BY '\\n'
    (${layout.colunas.map((col) => col.nome).join(', ')})${calculadas.length ? `\n    SET ${calculadas.join(', ')}` : ''}`;
}

/** The LOAD DATA statement of the secondary CNAEs (CnaesSecundarios) into `tabela`. */
export function sqlDosCnaesSecundarios(tabela: string): string {
  return `LOAD DATA LOCAL INFILE 'CnaesSecundarios' IGNORE INTO TABLE ${tabela}
    CHARACTER SET ascii FIELDS TERMINATED BY ';' ESCAPED BY '' LINES TERMINATED BY '\\n' (cnae, cnpj)`;
}

const NUL = 0x00;
const LF = 0x0a;
const CR = 0x0d;
const ESPACO = 0x20;
const TAB = 0x09;
const NBSP = 0xa0; // ISO-8859-1's no-break space
const ASPAS = 0x22;
const PONTO_E_VIRGULA = 0x3b;
const VIRGULA = 0x2c;
const PONTO = 0x2e;
const ZERO = 0x30;
const NOVE = 0x39;
const A_MAIUSCULO = 0x41;
const Z_MAIUSCULO = 0x5a;
const A_MINUSCULO = 0x61;
const Z_MINUSCULO = 0x7a;
const NULO = Buffer.from('NULL');

/** Longest field kept (the widest column is 2,000 characters): a quote never closed cannot fill memory. */
const CAMPO_MAXIMO = 64 * 1024;
/**
 * Longest clean line held while it is read (every field at its longest, its quotes doubled, stays
 * under it): past it the file is no file of lines (one without line breaks, say), and the import
 * fails instead of holding the whole file in memory.
 */
const LINHA_MAXIMA = 8 * 1024 * 1024;

const enum Estado {
  InicioDoCampo,
  SemAspas,
  EntreAspas,
  AspasNoCampo, // a quote inside a quoted field: the end of it, or a literal quote
  DuasAspas, // `""` inside a quoted field: one quote (doubled), or a literal quote right before the end
  AspasESeparador, // a quote then `;`: the end of the field, unless the next byte shows the `;` is text
}

const ESCRITA_INICIAL = 64 * 1024;

/** Bytes written a field at a time into a buffer that grows as needed. */
class Escrita {
  private buf = Buffer.allocUnsafe(ESCRITA_INICIAL);
  /** bytes written so far: the writer moves it past what it wrote into `reservar`'s buffer */
  tamanho = 0;

  reservar(bytes: number): Buffer {
    if (this.tamanho + bytes > this.buf.length) {
      const maior = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.tamanho + bytes));
      this.buf.copy(maior, 0, 0, this.tamanho);
      this.buf = maior;
    }
    return this.buf;
  }

  /**
   * What was written since the last call, up to `ate` (all of it by default), in a buffer of its
   * own (the old one goes downstream); what follows `ate` is kept, at the start.
   */
  tirar(ate = this.tamanho): Buffer | undefined {
    if (!ate) return undefined;
    const resto = this.tamanho - ate;
    // a slice keeps its whole buffer alive downstream: a small output is copied out instead
    const pequena = ate < this.buf.length / 4;
    const pronto = pequena ? Buffer.from(this.buf.subarray(0, ate)) : this.buf.subarray(0, ate);
    if (pequena) this.buf.copy(this.buf, 0, ate, this.tamanho);
    else {
      const novo = Buffer.allocUnsafe(Math.max(ESCRITA_INICIAL, resto));
      this.buf.copy(novo, 0, ate, this.tamanho);
      this.buf = novo;
    }
    this.tamanho = resto;
    return pronto;
  }
}

/**
 * The secondary CNAEs of the establishments being read, one `cnae;cnpj` line each, loaded into
 * their own table beside the establishments (the `cnae_secundaria` filter reads it by index).
 */
export class CnaesSecundarios extends Readable {
  private continuar?: () => void;

  constructor() {
    super();
    // destroyed with the cleaning's error before its load has asked for it: the error reaches the
    // import through the loads, not as an unhandled event
    this.on('error', () => undefined);
  }

  override _read(): void {
    const continuar = this.continuar;
    this.continuar = undefined;
    continuar?.();
  }

  /** Passes `linhas` on; `depois` runs at once, or when the reader wants more (back-pressure). */
  enviar(linhas: Buffer | undefined, depois: () => void): void {
    if (!linhas || this.push(linhas)) depois();
    else this.continuar = depois;
  }
}

/** The CNPJ's parts in a line of establishments, in order: where each goes in the 14 characters. */
const PARTES_DO_CNPJ = [
  { nome: 'cnpj_basico', inicio: 0, tamanho: 8 },
  { nome: 'cnpj_ordem', inicio: 8, tamanho: 4 },
  { nome: 'cnpj_dv', inicio: 12, tamanho: 2 },
];

/** Positions of the columns the secondary CNAEs need, in a line of establishments. */
interface ColunasDosCnaes {
  /** of each of PARTES_DO_CNPJ */
  partes: number[];
  secundaria: number;
}

/**
 * Cleans the Receita's raw lines on their way to the database, so that it loads each field straight
 * into its column: evaluating an expression per field there took a fifth of the database's time.
 * Reads fields as the Receita writes them: every field quoted, quotes inside never doubled. A quoted
 * field ends at a quote followed by a line break, or by `;` and then a quote, `;` or a line break
 * (the start of the next field); `""` is a quote, but a literal one before that end (`"BAR "ZE"";`);
 * any other quote, and a `";` followed by anything else, is text. A `";"` inside a name cannot be
 * told from a boundary: that row's later fields shift (the database warns). Lines without quotes
 * are read up to each `;`. Each field is written cleaned (DESIGN §6, §10): NUL bytes and carriage
 * returns dropped, runs of spaces folded, trimmed; empty → NULL; codes upper case (alphanumeric CNPJ
 * parts); dates `0` and `00000000` → NULL; decimal comma → point, a capital the column cannot hold
 * as written → NULL; a line break inside a quoted field → a space. Blank lines and lines of only
 * spaces are skipped. ISO-8859-1 is one byte a character, so all of it works on bytes. Given
 * `cnaes`, it also writes each establishment's secondary CNAEs there.
 */
export class LimpezaDeCampos extends Transform {
  private readonly tipos: Tipo[];
  private estado = Estado.InicioDoCampo;
  private campo = Buffer.allocUnsafe(1024);
  private tamanho = 0; // bytes of the field so far
  private entreAspas = false; // the field began with a quote
  private coluna = 0; // position of the field in its line
  private readonly saida = new Escrita();
  private inicioDaLinha = 0; // where the line being read starts in `saida`: it goes downstream once whole
  /** lines read that are not blank, whether the load then keeps them or not */
  linhasLidas = 0;
  /**
   * lines not in the layout: more fields than its columns and a trailing `;`, or a key that is no
   * CNPJ base (8 letters or digits) where the layout has one, or an establishment whose CNPJ is not
   * three well-formed parts (dropped). A few in a real month (a `";"` inside a name); most of a
   * file, and it is not the kind its name says (importacao.ts refuses it). A row with fewer fields
   * is kept, the missing ones null (docs/leads.md)
   */
  linhasForaDoLayout = 0;
  /** the layout's first column is the CNPJ base */
  private readonly chaveEhCnpjBasico: boolean;
  private chaveMalformada = false;
  private readonly colunasDosCnaes?: ColunasDosCnaes;
  private readonly linhasDosCnaes = new Escrita();
  private readonly cnpj = Buffer.allocUnsafe(14);
  private tamanhoDoCnpj = 0;

  /** @param aoLer told the size of each raw chunk read (progress) */
  constructor(
    layout: LayoutDeArquivo,
    private readonly aoLer: (bytes: number) => void = () => undefined,
    private readonly cnaes?: CnaesSecundarios,
  ) {
    super();
    this.tipos = layout.colunas.map((c) => c.tipo);
    this.chaveEhCnpjBasico = layout.colunas[0]?.nome === 'cnpj_basico';
    if (cnaes) {
      const posicao = (nome: string) => layout.colunas.findIndex((c) => c.nome === nome);
      this.colunasDosCnaes = { partes: PARTES_DO_CNPJ.map((p) => posicao(p.nome)), secundaria: posicao('cnae_fiscal_secundaria') };
    }
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, feito: TransformCallback): void {
    this.aoLer(chunk.length);
    let estado = this.estado;
    for (let i = 0; i < chunk.length; i++) {
      const b = chunk[i];
      if (b === NUL || b === CR) continue;
      switch (estado) {
        case Estado.InicioDoCampo:
          if (b === ASPAS) {
            estado = Estado.EntreAspas;
            this.entreAspas = true;
          } else if (!this.separador(b)) {
            this.acrescentar(b);
            estado = Estado.SemAspas;
          }
          break;
        case Estado.SemAspas:
          if (this.separador(b)) estado = Estado.InicioDoCampo;
          else this.acrescentar(b);
          break;
        case Estado.EntreAspas:
          if (b === ASPAS) estado = Estado.AspasNoCampo;
          // every column holds one line (names, addresses): a line break inside quotes is a space
          else this.acrescentar(b === LF ? ESPACO : b);
          break;
        case Estado.AspasNoCampo:
          if (b === PONTO_E_VIRGULA) estado = Estado.AspasESeparador;
          else estado = this.depoisDeAspas(b, estado);
          break;
        case Estado.AspasESeparador:
          // every field of the Receita's is quoted (`""` when empty): the next one starts here
          if (b === ASPAS) {
            this.fimDoCampo();
            this.entreAspas = true;
            estado = Estado.EntreAspas;
          } else estado = this.depoisDeAspas(b, estado);
          break;
        default:
          estado = this.depoisDeAspas(b, estado);
      }
    }
    this.estado = estado;
    if (this.saida.tamanho - this.inicioDaLinha > LINHA_MAXIMA) {
      return feito(new Error(`a line longer than ${LINHA_MAXIMA / 1024 / 1024} MB: not a file of the Receita's layout (no line breaks?)`));
    }
    this.entregar(feito);
  }

  override _flush(feito: TransformCallback): void {
    // a file ending inside a field: what was pending is settled as a line break would
    if (this.estado === Estado.DuasAspas) this.acrescentar(ASPAS);
    else if (this.estado === Estado.AspasESeparador) this.fimDoCampo();
    if (this.estado !== Estado.InicioDoCampo || this.coluna > 0) this.fimDaLinha();
    this.estado = Estado.InicioDoCampo;
    this.entregar((err, linhas) => {
      this.cnaes?.push(null);
      feito(err, linhas);
    });
  }

  override _destroy(err: Error | null, feito: (err: Error | null) => void): void {
    // after a failure, the secondary CNAEs' load must not wait for lines that will never come
    // (after a normal end they may still be on their way: left alone)
    if (err) this.cnaes?.destroy(err);
    feito(err);
  }

  /**
   * The clean whole lines go downstream once the secondary CNAEs' reader has room for theirs; the
   * line being read stays until it ends, so a line found malformed at its end can still be dropped.
   */
  private entregar(feito: TransformCallback): void {
    const linhas = this.saida.tirar(this.inicioDaLinha);
    this.inicioDaLinha = 0;
    if (!this.cnaes) return feito(null, linhas);
    this.cnaes.enviar(this.linhasDosCnaes.tirar(), () => feito(null, linhas));
  }

  /**
   * The rarer turns after a quote inside a quoted field (kept out of the loop, which stays small
   * enough to compile well): the state after `b`.
   */
  private depoisDeAspas(b: number, estado: Estado): Estado {
    if (estado === Estado.AspasESeparador) {
      // `;` or a line break: the field ended at the quote; anything else means `";` was text of
      // this field (`"LOJA "A";B" LTDA"`), and taking it as a boundary would shift the rest of the row
      if (b === PONTO_E_VIRGULA || b === LF) {
        this.fimDoCampo();
        this.separador(b);
        return Estado.InicioDoCampo;
      }
      this.acrescentar(ASPAS);
      this.acrescentar(PONTO_E_VIRGULA);
      this.acrescentar(b);
      return Estado.EntreAspas;
    }
    // the Receita never doubles quotes: `"BAR DO "ZE"";` is a name ending in a quote, not a quote
    // followed by text `;`; elsewhere `""` is one quote, as in any CSV
    if (estado === Estado.DuasAspas) this.acrescentar(ASPAS);
    else if (b === ASPAS) return Estado.DuasAspas;
    if (b === PONTO_E_VIRGULA) return Estado.AspasESeparador;
    if (b === LF) {
      this.fimDaLinha();
      return Estado.InicioDoCampo;
    }
    if (b === ASPAS) return Estado.AspasNoCampo;
    if (estado === Estado.AspasNoCampo) this.acrescentar(ASPAS);
    this.acrescentar(b);
    return Estado.EntreAspas;
  }

  /** `;` ends the field, a line break the line: true when `b` was one of them. */
  private separador(b: number): boolean {
    if (b === PONTO_E_VIRGULA) this.fimDoCampo();
    else if (b === LF) this.fimDaLinha();
    else return false;
    return true;
  }

  private acrescentar(b: number): void {
    const n = this.tamanho;
    if (b === ESPACO && n > 0 && this.campo[n - 1] === ESPACO) return;
    if (n === this.campo.length) {
      if (n >= CAMPO_MAXIMO) return;
      const maior = Buffer.allocUnsafe(n * 2);
      this.campo.copy(maior);
      this.campo = maior;
    }
    this.campo[n] = b;
    this.tamanho = n + 1;
  }

  private fimDaLinha(): void {
    // a line with a single empty field is blank (or only spaces): skipped
    if (this.coluna === 0 && this.vazio()) {
      this.tamanho = 0;
      this.entreAspas = false; // a blank line written `""`: the next line's first field starts afresh
      return;
    }
    this.fimDoCampo();
    this.linhasLidas++;
    const cnpjMalformado = this.colunasDosCnaes !== undefined && this.tamanhoDoCnpj !== 14;
    if (cnpjMalformado || this.chaveMalformada || this.coluna > this.tipos.length + 1) this.linhasForaDoLayout++;
    this.chaveMalformada = false;
    if (cnpjMalformado) {
      // an establishment whose CNPJ is not three well-formed parts (the tail of a line a quoted line
      // break cut, a key left empty) would go live under a key no lookup can ask for: dropped
      this.saida.tamanho = this.inicioDaLinha;
    } else {
      const saida = this.saida.reservar(1);
      saida[this.saida.tamanho++] = LF;
      this.inicioDaLinha = this.saida.tamanho;
    }
    this.coluna = 0;
    this.tamanhoDoCnpj = 0;
  }

  private vazio(): boolean {
    for (let i = 0; i < this.tamanho; i++) if (!branco(this.campo[i])) return false;
    return true;
  }

  private fimDoCampo(): void {
    const campo = this.campo;
    const tipo = this.tipos[this.coluna] ?? 'texto';
    let inicio = 0;
    let fim = this.tamanho;
    while (inicio < fim && branco(campo[inicio])) inicio++;
    while (fim > inicio && branco(campo[fim - 1])) fim--;
    // the layout gives a DDD 4 characters and some rows pad it with zeros: no DDD starts with 0
    if (tipo === 'ddd') while (inicio < fim && campo[inicio] === ZERO) inicio++;
    if (tipo === 'codigo') for (let i = inicio; i < fim; i++) if (campo[i] >= A_MINUSCULO && campo[i] <= Z_MINUSCULO) campo[i] -= A_MINUSCULO - A_MAIUSCULO;
    if (this.colunasDosCnaes) this.guardarParaOsCnaes(inicio, fim);
    else if (this.coluna === 0 && this.chaveEhCnpjBasico) this.chaveMalformada = fim - inicio !== 8 || !alfanumerico(campo, inicio, fim);

    const saida = this.saida.reservar(2 * (fim - inicio) + 5);
    let n = this.saida.tamanho;
    if (this.coluna > 0) saida[n++] = PONTO_E_VIRGULA;
    // the database's own reader takes an unquoted NULL as null, a quoted one as text
    const nuloSemAspas = !this.entreAspas && this.tamanho === 4 && NULO.equals(campo.subarray(0, 4));
    if (inicio === fim || nuloSemAspas || (tipo === 'data' && !dataValida(campo, inicio, fim)) || (tipo === 'decimal' && !decimalValido(campo, inicio, fim))) {
      NULO.copy(saida, n);
      n += NULO.length;
    } else if (tipo === 'decimal') {
      // thousands' dots dropped, the comma a point
      saida[n++] = ASPAS;
      for (let i = inicio; i < fim; i++) if (campo[i] !== PONTO) saida[n++] = campo[i] === VIRGULA ? PONTO : campo[i];
      saida[n++] = ASPAS;
    } else {
      saida[n++] = ASPAS;
      for (let i = inicio; i < fim; i++) {
        const b = campo[i];
        if (b === ASPAS) saida[n++] = ASPAS;
        saida[n++] = b;
      }
      saida[n++] = ASPAS;
    }
    this.saida.tamanho = n;
    this.tamanho = 0;
    this.entreAspas = false;
    this.coluna++;
  }

  /** The CNPJ's parts, then one `cnae;cnpj` line per well-formed secondary CNAE (7 digits). */
  private guardarParaOsCnaes(inicio: number, fim: number): void {
    const colunas = this.colunasDosCnaes!;
    const coluna = this.coluna;
    const campo = this.campo;
    const qual = colunas.partes.indexOf(coluna);
    if (qual >= 0) {
      const parte = PARTES_DO_CNPJ[qual];
      // a part out of place, of the wrong size or not alphanumeric leaves the CNPJ incomplete: no lines for it
      if (this.tamanhoDoCnpj !== parte.inicio || fim - inicio !== parte.tamanho || !alfanumerico(campo, inicio, fim)) return;
      campo.copy(this.cnpj, parte.inicio, inicio, fim);
      this.tamanhoDoCnpj = parte.inicio + parte.tamanho;
      return;
    }
    if (coluna !== colunas.secundaria || this.tamanhoDoCnpj !== 14) return;
    for (let de = inicio; de < fim; ) {
      let ate = campo.indexOf(VIRGULA, de);
      if (ate < 0 || ate > fim) ate = fim;
      // blanks around a code (`6204000, 6209100`) are not part of it
      let a = de;
      let z = ate;
      while (a < z && branco(campo[a])) a++;
      while (z > a && branco(campo[z - 1])) z--;
      if (z - a === 7 && numerico(campo, a, z)) {
        const linhas = this.linhasDosCnaes.reservar(23);
        let n = this.linhasDosCnaes.tamanho;
        n += campo.copy(linhas, n, a, z);
        linhas[n++] = PONTO_E_VIRGULA;
        n += this.cnpj.copy(linhas, n);
        linhas[n++] = LF;
        this.linhasDosCnaes.tamanho = n;
      }
      de = ate + 1;
    }
  }
}

/**
 * Blank at a field's edges: a tab or a no-break space is as empty as a space (a field of only those
 * is null), and never part of a code, a name or a date.
 */
function branco(b: number): boolean {
  return b === ESPACO || b === TAB || b === NBSP;
}

/** A CNAE is 7 digits (the CNPJ's parts may hold letters, its activity codes do not). */
function numerico(campo: Buffer, inicio: number, fim: number): boolean {
  for (let i = inicio; i < fim; i++) if (campo[i] < ZERO || campo[i] > NOVE) return false;
  return true;
}

function alfanumerico(campo: Buffer, inicio: number, fim: number): boolean {
  for (let i = inicio; i < fim; i++) {
    const b = campo[i];
    if (!((b >= ZERO && b <= NOVE) || (b >= A_MAIUSCULO && b <= Z_MAIUSCULO))) return false;
  }
  return true;
}

/**
 * A date is AAAAMMDD of a day that exists. `0` and `00000000` are how the files write "no date"
 * (DESIGN §10); anything else that is not a day (`20211301`, `2021`, a cut or padded value) is no
 * date either, rather than text a date range would compare as if it were one.
 */
function dataValida(campo: Buffer, inicio: number, fim: number): boolean {
  if (fim - inicio !== 8) return false;
  let valor = 0;
  for (let i = inicio; i < fim; i++) {
    const b = campo[i];
    if (b < ZERO || b > NOVE) return false;
    valor = valor * 10 + (b - ZERO);
  }
  const ano = Math.floor(valor / 10000);
  const mes = Math.floor(valor / 100) % 100;
  const dia = valor % 100;
  if (ano === 0 || mes < 1 || mes > 12 || dia < 1) return false;
  const bissexto = ano % 4 === 0 && (ano % 100 !== 0 || ano % 400 === 0);
  const diasDoMes = mes === 2 ? (bissexto ? 29 : 28) : mes === 4 || mes === 6 || mes === 9 || mes === 11 ? 30 : 31;
  return dia <= diasDoMes;
}

/** Digits before the decimal comma DECIMAL(20,2) holds. */
const DIGITOS_DO_CAPITAL = 18;

/**
 * A capital the column holds as written: digits with an optional decimal comma (`1500,50`, `,5`),
 * dots only as thousands' separators beside a comma (`1.000,00`). Anything else would be stored as
 * another number (`1.000` read as 1, `abc` as 0, one too large as the column's maximum, a negative
 * capital has no meaning): null instead, unknown rather than wrong. More than 2 decimals are
 * rounded by the column; with 18 digits before the comma that rounding could overflow, so null too.
 */
function decimalValido(campo: Buffer, inicio: number, fim: number): boolean {
  let virgula = -1;
  for (let i = inicio; i < fim; i++) {
    if (campo[i] !== VIRGULA) continue;
    if (virgula >= 0) return false;
    virgula = i;
  }
  const fimDosInteiros = virgula < 0 ? fim : virgula;
  let digitos = 0; // before the comma, leading zeros left out
  let grupo = -1; // digits since the last thousands' dot (-1: no dot yet)
  for (let i = inicio; i < fimDosInteiros; i++) {
    const b = campo[i];
    if (b === PONTO) {
      // 1 to 3 digits before the first dot, exactly 3 between dots, and a comma after them
      if (virgula < 0 || i === inicio || (grupo >= 0 ? grupo !== 3 : i - inicio > 3)) return false;
      grupo = 0;
    } else if (b >= ZERO && b <= NOVE) {
      if (digitos > 0 || b !== ZERO) digitos++;
      if (grupo >= 0) grupo++;
    } else return false;
  }
  if (grupo >= 0 && grupo !== 3) return false;
  if (virgula >= 0) {
    if (virgula === fim - 1 && virgula === inicio) return false; // a lone comma
    if (!numerico(campo, virgula + 1, fim)) return false;
  }
  const decimais = virgula < 0 ? 0 : fim - virgula - 1;
  return digitos < DIGITOS_DO_CAPITAL || (digitos === DIGITOS_DO_CAPITAL && decimais <= 2);
}

const abrirZip = (caminho: string) =>
  new Promise<ZipFile>((ok, falha) =>
    yauzl.open(caminho, { lazyEntries: true, autoClose: false }, (err, zip) => (err ? falha(err) : ok(zip))),
  );

/**
 * What an archiver adds beside the files: macOS's resource forks (`__MACOSX/`, `._name`) and
 * hidden files (`.DS_Store`). Loaded, their bytes would become rows under junk keys.
 */
const acrescimoDoCompactador = (nome: string) => nome.startsWith('__MACOSX/') || path.posix.basename(nome).startsWith('.');

/**
 * The files inside a zip (folders and what an archiver adds left out), whatever their names. A zip
 * that cannot be read fails naming itself: the library's message names no file, and a month has
 * dozens of them.
 */
export async function entradasDoZip(caminho: string): Promise<{ zip: ZipFile; entradas: Entry[] }> {
  const danificado = (err: Error) => new Error(`${path.basename(caminho)}: ${err.message}`, { cause: err });
  const zip = await abrirZip(caminho).catch((err: Error) => {
    throw danificado(err);
  });
  const entradas: Entry[] = [];
  try {
    await new Promise<void>((ok, falha) => {
      zip.on('entry', (e: Entry) => {
        if (!e.fileName.endsWith('/') && !acrescimoDoCompactador(e.fileName)) entradas.push(e);
        zip.readEntry();
      });
      zip.once('end', ok);
      zip.once('error', falha);
      zip.readEntry();
    });
  } catch (err) {
    // opened without autoClose: a damaged directory would otherwise keep the file open
    zip.close();
    throw danificado(err as Error);
  }
  if (!entradas.length) {
    // a zip of no file (a packaging or download gone wrong) would replace its kind's live table with nothing
    zip.close();
    throw new Error(`${path.basename(caminho)} holds no file: nothing was changed`);
  }
  return { zip, entradas };
}

export const lerEntrada = (zip: ZipFile, entrada: Entry) =>
  new Promise<Readable>((ok, falha) => zip.openReadStream(entrada, (err, s) => (err ? falha(err) : ok(s))));
