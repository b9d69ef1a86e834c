import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { CnaesSecundarios, LAYOUTS, LayoutDeArquivo, LimpezaDeCampos, sqlDeCarga } from '../../api/leads/receita';

/**
 * The cleaning of the Receita's fields on their way to LOAD DATA (api/leads/receita.ts), byte by
 * byte. The import tests load the real samples and edge cases through the database; these pin down
 * how each field is read and written, which the database then loads as is.
 */

const LAYOUT: LayoutDeArquivo = {
  tipo: 'Teste',
  tabela: 'teste',
  colunas: [
    { nome: 'codigo', tipo: 'codigo' },
    { nome: 'nome', tipo: 'texto' },
    { nome: 'inicio', tipo: 'data' },
    { nome: 'capital', tipo: 'decimal' },
  ],
};

/** The cleaned text of `entrada`, fed in chunks of `tamanho` bytes (latin1: one byte a character). */
async function limpar(entrada: string | Buffer, tamanho = 1 << 16): Promise<string> {
  const bytes = typeof entrada === 'string' ? Buffer.from(entrada, 'latin1') : entrada;
  const partes: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += tamanho) partes.push(bytes.subarray(i, i + tamanho));
  const limpeza = new LimpezaDeCampos(LAYOUT);
  Readable.from(partes).pipe(limpeza);
  return (await buffer(limpeza)).toString('latin1');
}

describe('LimpezaDeCampos: each field as the database should load it', () => {
  test('quoted fields are written quoted, trimmed, runs of spaces folded; empty fields become an unquoted NULL', async () => {
    expect(await limpar('"ab12";"  JOSE   DA  SILVA ";"20200131";"1500,50"\n')).toBe('"AB12";"JOSE DA SILVA";"20200131";"1500.50"\n');
    expect(await limpar('"";"   ";"";""\n')).toBe('NULL;NULL;NULL;NULL\n');
  });

  test('a tab or a no-break space at the edges is blank as a space is: trimmed, and a field of only those is null', async () => {
    expect(await limpar('"\tab12\xa0";"\xa0JOSE\tSILVA\t";"\t20200131 ";"\xa01500,50\t"\n')).toBe('"AB12";"JOSE\tSILVA";"20200131";"1500.50"\n');
    expect(await limpar('"1";"\t";"\xa0\xa0";" \t\xa0"\n')).toBe('"1";NULL;NULL;NULL\n');
    // a line of only such bytes is blank
    expect(await limpar('"1";"A";"";""\n\t\xa0\n"2";"B";"";""\n')).toBe('"1";"A";NULL;NULL\n"2";"B";NULL;NULL\n');
  });

  test('codes are upper case (alphanumeric CNPJ parts), and only codes', async () => {
    expect(await limpar('"12abc34d";"loja abc";"";""\n')).toBe('"12ABC34D";"loja abc";NULL;NULL\n');
  });

  test('dates: 0 and 00000000 mean no date (DESIGN §10), a real date is kept as text', async () => {
    expect(await limpar('"1";"x";"0";""\n"2";"x";"00000000";""\n"3";"x";"20051103";""\n"4";"x";" 0 ";""\n')).toBe(
      '"1";"x";NULL;NULL\n"2";"x";NULL;NULL\n"3";"x";"20051103";NULL\n"4";"x";NULL;NULL\n',
    );
  });

  test('capital: a number DECIMAL(20,2) holds as written, or null; never another number', async () => {
    const capital = async (valor: string) => (await limpar(`"1";"A";"";"${valor}"\n`)).split(';')[3].trim();
    const casos: Record<string, string> = {
      '1061004829,23': '"1061004829.23"',
      '1500': '"1500"',
      ',5': '".5"',
      '0,00': '"0.00"',
      '1.000,00': '"1000.00"', // thousands' dots beside a decimal comma are unambiguous
      '12.345.678,9': '"12345678.9"',
      '999999999999999999,99': '"999999999999999999.99"', // the column's largest
      '000000000000000000001,5': '"000000000000000000001.5"', // leading zeros count for nothing
      '1,005': '"1.005"', // the column rounds to cents
      // each of these the column would store as another number (1, 0, its maximum, a negative)
      '1.000': 'NULL',
      '1.5': 'NULL',
      '1000.00': 'NULL',
      '1.00,00': 'NULL',
      '1234.567,00': 'NULL',
      '-5,00': 'NULL',
      '+5': 'NULL',
      'abc': 'NULL',
      '1 000,00': 'NULL',
      '1,2,3': 'NULL',
      ',': 'NULL',
      '1000000000000000000,00': 'NULL',
      '999999999999999999,999': 'NULL', // rounding to cents would pass the maximum
    };
    const obtidos: Record<string, string> = {};
    for (const valor of Object.keys(casos)) obtidos[valor] = await capital(valor);
    expect(obtidos).toEqual(casos);
  });

  test('the word NULL quoted stays text; unquoted it is a null, as the database\'s own reader takes it', async () => {
    expect(await limpar('"1";"NULL";"";""\n')).toBe('"1";"NULL";NULL;NULL\n');
    expect(await limpar('1;NULL;NULL;NULL\n2; NULL;;\n')).toBe('"1";NULL;NULL;NULL\n"2";"NULL";NULL;NULL\n');
  });

  test('a `;` inside a quoted field is text; a doubled quote is one quote; a quote not followed by `;` or a line end is text', async () => {
    expect(await limpar('"1";"BAR; RESTAURANTE";"";""\n')).toBe('"1";"BAR; RESTAURANTE";NULL;NULL\n');
    expect(await limpar('"1";"O ""REI"" DO PASTEL";"";""\n')).toBe('"1";"O ""REI"" DO PASTEL";NULL;NULL\n');
    expect(await limpar('"1";"O "REI" DO PASTEL";"";""\n')).toBe('"1";"O ""REI"" DO PASTEL";NULL;NULL\n');
  });

  test('undoubled quotes inside a quoted field (as the Receita writes them) are text: the row keeps every field, the next row is whole', async () => {
    const depois = ';"20200101";"10,5"\n"2";"B";"";""\n';
    const resto = ';"20200101";"10.5"\n"2";"B";NULL;NULL\n';
    // a quote inside, at the start, and right before the end of the field
    expect(await limpar(`"1";"EMPRESA "X" LTDA"${depois}`)).toBe(`"1";"EMPRESA ""X"" LTDA"${resto}`);
    expect(await limpar(`"1";""X" EMPRESA"${depois}`)).toBe(`"1";"""X"" EMPRESA"${resto}`);
    expect(await limpar(`"1";"BAR DO "ZE""${depois}`)).toBe(`"1";"BAR DO ""ZE"""${resto}`);
    expect(await limpar(`"1";"BAR DO "ZE"""${depois}`)).toBe(`"1";"BAR DO ""ZE"""${resto}`); // doubled, as a CSV writes it
    // and in the last field of its line, or of the file (a fifth field: text)
    expect(await limpar('"1";"A";"";"";"BAR "ZE""\n"2";"B";"";""\n')).toBe('"1";"A";NULL;NULL;"BAR ""ZE"""\n"2";"B";NULL;NULL\n');
    expect(await limpar('"1";"A";"";"";"BAR "ZE""')).toBe('"1";"A";NULL;NULL;"BAR ""ZE"""\n');
  });

  test('a quote then `;` inside a name: text when what follows is not the start of a field; `";"` cannot be told from a boundary', async () => {
    expect(await limpar('"1";"LOJA "A";B" LTDA";"20200101";"10,5"\n"2";"B";"";""\n')).toBe(
      '"1";"LOJA ""A"";B"" LTDA";"20200101";"10.5"\n"2";"B";NULL;NULL\n',
    );
    expect(await limpar('"1";"LOJA "A"; B";"20200101";"10,5"\n')).toBe('"1";"LOJA ""A""; B";"20200101";"10.5"\n');
    // unrecoverable: the row gets one field too many and its later fields shift (the database warns),
    // but it keeps its key, and the next row is whole
    const [linha, seguinte] = (await limpar('"1";"LOJA "A";"B";"20200101";"10,5"\n"2";"B";"";""\n')).split('\n');
    expect(linha.split(';')).toHaveLength(5);
    expect(linha.startsWith('"1";"LOJA ""A";')).toBe(true);
    expect(seguinte).toBe('"2";"B";NULL;NULL');
    // a quoted field followed by an empty unquoted one, a trailing `;` or the end of the file is still a boundary
    expect(await limpar('"1";"A";;"1"\n"2";"B";"";\n"3";"C";"";"1";')).toBe('"1";"A";NULL;"1"\n"2";"B";NULL;NULL\n"3";"C";NULL;"1";NULL\n');
  });

  test('unquoted fields are read up to the next `;`, quotes in them are text', async () => {
    expect(await limpar('1;JOSE "ZE" SILVA;20200101;10\n')).toBe('"1";"JOSE ""ZE"" SILVA";"20200101";"10"\n');
  });

  test('a line break inside a quoted field is a space (folded with its neighbours); outside quotes it ends the line', async () => {
    expect(await limpar('"1";"RUA X \r\n BLOCO B";"";""\n"2";"A\nB";"";""\n')).toBe('"1";"RUA X BLOCO B";NULL;NULL\n"2";"A B";NULL;NULL\n');
  });

  test('NUL bytes and carriage returns are dropped anywhere', async () => {
    expect(await limpar(Buffer.from('"1";"A\0B";"2020\x000101";""\r\n"2";"C";"";"1"\r\n', 'latin1'))).toBe(
      '"1";"AB";"20200101";NULL\n"2";"C";NULL;"1"\n',
    );
  });

  test('blank lines and lines of only spaces are skipped; a last line without a line break is kept', async () => {
    expect(await limpar('\n\n"1";"A";"";""\n   \n\n"2";"B";"";""')).toBe('"1";"A";NULL;NULL\n"2";"B";NULL;NULL\n');
    // a blank line written as one quoted empty field: skipped, and the next line's unquoted NULL is still a null
    expect(await limpar('"1";"A";"";""\n""\nNULL;"B";"";""\n')).toBe('"1";"A";NULL;NULL\nNULL;"B";NULL;NULL\n');
  });

  test('ISO-8859-1 bytes pass through unchanged (the database reads them as latin1)', async () => {
    expect(await limpar(Buffer.from('"1";"AÇÃO  ÚNICA";"";""\n', 'latin1'))).toBe('"1";"AÇÃO ÚNICA";NULL;NULL\n');
  });

  test('fields beyond the layout are cleaned as text; a short line keeps its fields (the database warns about both)', async () => {
    expect(await limpar('"1";"A";"";"";" extra ";"x"\n"2"\n')).toBe('"1";"A";NULL;NULL;"extra";"x"\n"2"\n');
  });

  test('the same text in chunks of any size gives the same output (fields, quotes and line ends split between chunks)', async () => {
    const entrada =
      '\n"ab";"O ""REI""  DA  ; BOLA";"00000000";"1,5"\r\n"cd";"X"Y";"20200101";""\n\n  \n"ef";;0;\n"gh";"Z";"";"2,25"\n' +
      '"ij";"BAR "ZE"";"";""\n"kl";"LOJA "A";B"";"";"1"\r\n"mn";"A";"";"";"Z "Q""';
    const inteira = await limpar(entrada);
    expect(inteira).toBe(
      '"AB";"O ""REI"" DA ; BOLA";NULL;"1.5"\n"CD";"X""Y";"20200101";NULL\n"EF";NULL;NULL;NULL\n"GH";"Z";NULL;"2.25"\n' +
        '"IJ";"BAR ""ZE""";NULL;NULL\n"KL";"LOJA ""A"";B""";NULL;"1"\n"MN";"A";NULL;NULL;"Z ""Q"""\n',
    );
    for (let tamanho = 1; tamanho <= 8; tamanho++) expect(await limpar(entrada, tamanho)).toBe(inteira);
  });

  test('a file with no line break (carriage returns alone, which are dropped) fails past 8 MB of one line instead of holding the whole file', async () => {
    const linha = `"1";"${'A'.repeat(60_000)}";"";""\r`;
    const entrada = Buffer.from(linha.repeat(200), 'latin1');
    await expect(limpar(entrada)).rejects.toThrow('a line longer than 8 MB');
  });

  test('a quote never closed keeps at most 64 KB of its field, so memory stays flat', async () => {
    const saida = await limpar(`"1";"${'A'.repeat(200_000)}`);
    expect(saida.length).toBeLessThanOrEqual(64 * 1024 + 16);
    expect(saida.startsWith('"1";"AAAA')).toBe(true);
  });
});

describe('CnaesSecundarios: one `cnae;cnpj` line per secondary CNAE, beside the establishments', () => {
  const ESTABELECIMENTOS = LAYOUTS.find((l) => l.tabela === 'estabelecimento')!;
  const SECUNDARIA = ESTABELECIMENTOS.colunas.findIndex((c) => c.nome === 'cnae_fiscal_secundaria');

  /** A line of establishments with the CNPJ's parts and the secondary CNAEs given, the rest empty. */
  const linha = (basico: string, ordem: string, dv: string, secundarias: string) =>
    ESTABELECIMENTOS.colunas.map((_, i) => `"${i === 0 ? basico : i === 1 ? ordem : i === 2 ? dv : i === SECUNDARIA ? secundarias : ''}"`).join(';') + '\n';

  async function separar(entrada: string, lerDevagar = false) {
    const cnaes = new CnaesSecundarios();
    const limpeza = new LimpezaDeCampos(ESTABELECIMENTOS, undefined, cnaes);
    let maiorEspera = 0; // most bytes waiting for the slow reader at any time
    const linhasDosCnaes = (async () => {
      const partes: Buffer[] = [];
      for await (const parte of cnaes) {
        partes.push(parte);
        maiorEspera = Math.max(maiorEspera, cnaes.readableLength);
        if (lerDevagar) await new Promise((r) => setImmediate(r));
      }
      return Buffer.concat(partes).toString('latin1');
    })();
    const bytes = Buffer.from(entrada, 'latin1');
    const partes: Buffer[] = [];
    for (let i = 0; i < bytes.length; i += 4096) partes.push(bytes.subarray(i, i + 4096));
    Readable.from(partes).pipe(limpeza);
    const dados = (await buffer(limpeza)).toString('latin1');
    return { dados, cnaes: await linhasDosCnaes, maiorEspera };
  }

  test('each well-formed CNAE of the list (7 digits, blanks around it dropped), with the full CNPJ; malformed ones give none, and an establishment without a whole CNPJ is not loaded at all', async () => {
    const { dados, cnaes } = await separar(
      linha('00000068', '0001', '70', '6204000,6209100') +
        linha('00000215', '0001', '02', '') +
        linha('00000300', '0001', '02', '4711302 ,  4712100') +
        linha('00000400', '0001', '02', '\t6204000\xa0,\xa04712100') +
        linha('12abc34d', '0001', '35', ' 62040aa , 123,4751201') +
        linha('1234', '0001', '99', '6204000') +
        linha('0000;068', '0001', '70', '6204000'),
    );
    expect(cnaes).toBe('6204000;00000068000170\n6209100;00000068000170\n4711302;00000300000102\n4712100;00000300000102\n6204000;00000400000102\n4712100;00000400000102\n4751201;12ABC34D000135\n');
    // the five with a whole CNPJ go to their own table; the two without one nowhere
    expect(dados.split('\n').map((l) => l.split(';').slice(0, 3).join(';'))).toEqual([
      '"00000068";"0001";"70"',
      '"00000215";"0001";"02"',
      '"00000300";"0001";"02"',
      '"00000400";"0001";"02"',
      '"12ABC34D";"0001";"35"',
      '',
    ]);
  });

  test('a quote right before a line break inside a field cuts the line there: the establishment keeps its first fields, and the rest of its line, whose CNPJ is no CNPJ, is not loaded as another', async () => {
    const COMPLEMENTO = ESTABELECIMENTOS.colunas.findIndex((c) => c.nome === 'complemento');
    const campos = ESTABELECIMENTOS.colunas.map((_, i) => (i === 0 ? '00000068' : i === 1 ? '0001' : i === 2 ? '70' : i === COMPLEMENTO ? 'APTO "B"\nBLOCO 2' : 'X'));
    const cortada = `${campos.map((c) => `"${c}"`).join(';')}\n`;
    for (const tamanho of [7, 4096]) {
      const cnaes = new CnaesSecundarios();
      cnaes.resume();
      const limpeza = new LimpezaDeCampos(ESTABELECIMENTOS, undefined, cnaes);
      const bytes = Buffer.from(cortada + linha('00000215', '0001', '02', ''), 'latin1');
      const partes: Buffer[] = [];
      for (let i = 0; i < bytes.length; i += tamanho) partes.push(bytes.subarray(i, i + tamanho));
      Readable.from(partes).pipe(limpeza);
      const linhas = (await buffer(limpeza)).toString('latin1').split('\n');
      expect({ tamanho, chaves: linhas.map((l) => l.split(';').slice(0, 3).join(';')) }).toEqual({
        tamanho,
        chaves: ['"00000068";"0001";"70"', '"00000215";"0001";"02"', ''],
      });
    }
  });

  test('keys partly empty or cut short (a part missing, a short line) are not loaded', async () => {
    const { dados } = await separar(
      linha('', '0001', '91', '') + linha('11111111', '', '', '') + '"22222222";"0001"\n' + linha('00000068', '0001', '70', ''),
    );
    expect(dados.split('\n').map((l) => l.split(';').slice(0, 3).join(';'))).toEqual(['"00000068";"0001";"70"', '']);
  });

  test('a reader of the CNAEs slower than the establishments\' still gets every line (back-pressure, nothing dropped)', async () => {
    let entrada = '';
    for (let i = 0; i < 20_000; i++) entrada += linha(String(i).padStart(8, '0'), '0001', '00', '6204000,6209100,4751201');
    const { dados, cnaes, maiorEspera } = await separar(entrada, true);
    expect(cnaes.split('\n').filter(Boolean)).toHaveLength(60_000);
    expect(dados.split('\n').filter(Boolean)).toHaveLength(20_000);
    // 1.4 MB of lines, never more than a few chunks of them waiting: the cleaning waited for the reader
    expect(maiorEspera).toBeLessThan(64 * 1024);
  });

  test('a cleaning that fails before the CNAEs\' load has asked for its lines ends that stream with the error, and nothing throws', async () => {
    const cnaes = new CnaesSecundarios();
    const limpeza = new LimpezaDeCampos(ESTABELECIMENTOS, undefined, cnaes);
    limpeza.on('error', () => undefined); // the import's pipeline listens to the cleaning; nobody yet to the CNAEs
    limpeza.destroy(new Error('zip corrompido'));
    await new Promise((r) => setImmediate(r));
    expect(cnaes.destroyed).toBe(true);
    expect(cnaes.errored?.message).toBe('zip corrompido');
  });
});

describe('sqlDeCarga', () => {
  test('loads each field straight into its column; only computed columns have an expression', () => {
    const sql = sqlDeCarga({ ...LAYOUT, calculadas: { chave: 'CONCAT(codigo, nome)' } }, 'teste_nova');
    expect(sql).toContain('INTO TABLE teste_nova');
    expect(sql).toContain('(codigo, nome, inicio, capital)');
    expect(sql).toContain('SET chave = CONCAT(codigo, nome)');
    expect(sqlDeCarga(LAYOUT, 'teste_nova')).not.toMatch(/\n\s*SET /);
  });
});
