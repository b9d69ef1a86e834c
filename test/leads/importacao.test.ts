import { Queue } from 'bullmq';
import { randomUUID } from 'node:crypto';
import { copyFileSync, readdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Connection } from 'mysql2/promise';
import { QueryTypes } from 'sequelize';
import * as contagem from '../../api/leads/contagem';
import * as geracao from '../../api/leads/geracao';
import { VALIDADE_DA_GERACAO_MS } from '../../api/leads/geracao';
import { emOrdemDasPartes, ESPERA_PELAS_SOBRAS, importarCnpj, partesQueFaltam, Progresso, PULSO, TROCA_DAS_TABELAS } from '../../api/leads/importacao';
import * as receita from '../../api/leads/receita';
import { ErroDeDominio } from '../../api/shared/errors';
import { banco, novaConexao, travaDaMigracao } from '../../lib/database';
import { importarCnpjPelaFila } from '../../lib/runner';
import { eventosDaFila, fila } from '../../queues/fila';
import { enfileirarImportacao, filaLeadsImportacao } from '../../queues/leads-importacao';
import { dormir, esperarAte, esperarOutraConexao } from '../helpers/espera';
import { cliente } from '../helpers/http';
import { identityDe } from '../helpers/identity';
import { iniciarSuite, SuiteDeTeste } from '../helpers/suite';
import {
  ArquivoDaReceita,
  cnpjValido,
  CODIGOS_PADRAO,
  csvDaReceita,
  diretorios,
  escreverMes,
  escreverZipsDaReceita,
  FIXTURES_DA_RECEITA,
  linhaDeEmpresa,
  linhaDeEstabelecimento,
  linhaDeSocio,
  linhaDoSimples,
  linhasDeCodigos,
  leituraPresa,
  MesDaReceita,
  nomeInternoReal,
  novoCnpj,
  tudoNulo,
} from './apoio';
import { contagemGuardada } from './apoio-empresas';

/**
 * Import of the Receita Federal's open CNPJ files (DESIGN §6; test/fixtures/receita/LEIA-ME.md):
 * zips of `;`-separated, double-quoted ISO-8859-1 CSV without header, read whatever the name of
 * the file inside; `import-cnpj <dir>` runs as a queue job with progress, and runs again on a new
 * month's files, replacing the data. What the import stored is read back through
 * GET /api/cnpj/{cnpj} (SPEC 4.2), as clients see it.
 */

let suite: SuiteDeTeste;
let api: ReturnType<typeof cliente>;
const dirs = diretorios();

beforeAll(async () => {
  suite = await iniciarSuite(['identity', 'leads'], { env: { LEADS_CNPJ_LIMITE_POR_MINUTO: '1000000' } });
  api = cliente(suite.url.leads);
});
afterAll(async () => {
  dirs.apagar();
  await suite?.encerrar();
});

const buscar = (cnpj: string) => api.get(`/api/cnpj/${cnpj}`);

/** The record of a CNPJ, failing the test unless it answers 200. */
/** How many imports the registry has recorded (a refused job records none). */
const importacoes = async () => (await banco('leads').query('SELECT id FROM importacao', { type: QueryTypes.SELECT })).length;

async function registro(cnpj: string): Promise<Record<string, any>> {
  const res = await buscar(cnpj);
  expect({ cnpj, status: res.status }).toEqual({ cnpj, status: 200 });
  return res.body;
}

/** A previous run's work table held by a statement of a run cut short: its connection, to unlock and end. */
async function sobraPresa(): Promise<Connection> {
  const sobra = await novaConexao('leads');
  try {
    await sobra.query('CREATE TABLE estabelecimento_nova LIKE estabelecimento');
    await sobra.query('LOCK TABLES estabelecimento_nova WRITE');
    return sobra;
  } catch (err) {
    await sobra.end();
    throw err;
  }
}

async function sql<T = Record<string, unknown>>(texto: string, parametros: unknown[] = []): Promise<T[]> {
  return (await banco('leads').query(texto, { replacements: parametros, type: QueryTypes.SELECT })) as T[];
}

const contar = async (tabela: string) => Number((await sql<{ n: number }>(`SELECT COUNT(*) AS n FROM ${tabela}`))[0].n);

/** This process's open file descriptors on `arquivo`. */
const abertosPorEstaProcesso = (arquivo: string) =>
  readdirSync('/proc/self/fd').filter((fd) => {
    try {
      return readlinkSync(`/proc/self/fd/${fd}`) === arquivo;
    } catch {
      return false; // closed while listed
    }
  });

/** Work tables an import leaves behind, if any (it must leave none). */
const tabelasDeTrabalho = async () =>
  (
    await sql<{ t: string }>(
      `SELECT table_name AS t FROM information_schema.tables WHERE table_schema = DATABASE() AND (table_name LIKE '%\\_nova' OR table_name LIKE '%\\_antiga')`,
    )
  ).map((r) => r.t);

/** A directory with a complete month (every kind of file) plus `extras` written over it. */
async function diretorioDoMes(mes: MesDaReceita, extras: Record<string, ArquivoDaReceita> = {}): Promise<string> {
  const dir = dirs.novo();
  await escreverMes(dir, mes);
  await escreverZipsDaReceita(dir, extras);
  return dir;
}

const importarMes = async (mes: MesDaReceita, extras: Record<string, ArquivoDaReceita> = {}) => importarCnpj(await diretorioDoMes(mes, extras));

const basico = (cnpj: string) => cnpj.slice(0, 8);

/** Why `fn` was refused: the domain error's kind and message. */
async function recusa(fn: () => Promise<unknown>): Promise<{ tipo: string; mensagem: string }> {
  try {
    await fn();
  } catch (err) {
    return { tipo: err instanceof ErroDeDominio ? err.tipo : (err as Error).name, mensagem: (err as Error).message };
  }
  throw new Error('expected a refusal, but it succeeded');
}

// ---------------------------------------------------------------------------------------------

describe('the real Receita sample files (SOURCE.md), imported through the queue (`suite import-cnpj <dir>`)', () => {
  const SERPRO = '33683111000280';
  let resultado: { linhas: Record<string, number> };

  beforeAll(async () => {
    resultado = (await importarCnpjPelaFila(FIXTURES_DA_RECEITA, () => undefined)) as typeof resultado;
  });

  test('GET /api/cnpj/33683111000280 answers every value SOURCE.md lists, codes and descriptions; empty fields are null (DESIGN §10)', async () => {
    const { socios, ...resto } = await registro(SERPRO);
    expect(resto).toEqual({
      ...tudoNulo(),
      cnpj: SERPRO,
      cnpj_basico: '33683111',
      cnpj_ordem: '0002',
      cnpj_dv: '80',
      identificador_matriz_filial: '2',
      identificador_matriz_filial_descricao: 'Filial',
      nome_fantasia: 'REGIONAL BRASILIA-DF',
      situacao_cadastral: '02',
      situacao_cadastral_descricao: 'Ativa',
      data_situacao_cadastral: '20040522',
      motivo_situacao_cadastral: '00',
      // two spaces in the raw file: runs of spaces are folded into one
      motivo_situacao_cadastral_descricao: 'SEM MOTIVO',
      data_inicio_atividade: '19670630',
      cnae_fiscal_principal: '6204000',
      cnae_fiscal_principal_descricao: 'Consultoria em tecnologia da informação',
      cnae_fiscal_secundaria: '6201501,6202300,6203100,6209100,6311900',
      tipo_logradouro: 'AVENIDA',
      logradouro: 'L2 SGAN',
      numero: '601',
      complemento: 'MODULO G',
      bairro: 'ASA NORTE',
      cep: '70836900',
      uf: 'DF',
      municipio: '9701',
      municipio_descricao: 'BRASILIA',
      empresa_razao_social: 'SERVICO FEDERAL DE PROCESSAMENTO DE DADOS (SERPRO)',
      empresa_natureza_juridica: '2011',
      empresa_natureza_juridica_descricao: 'Empresa Pública',
      empresa_qualificacao_responsavel: '16',
      empresa_qualificacao_responsavel_descricao: 'Presidente',
      empresa_capital_social: '1061004829,23',
      empresa_porte_empresa: '05',
      empresa_porte_empresa_descricao: 'Demais',
      simples_opcao_pelo_simples: 'S',
      simples_opcao_pelo_simples_descricao: 'Sim',
      simples_data_opcao_simples: '20140101',
      // `00000000` in the file: no date (DESIGN §10)
      simples_data_exclusao_simples: null,
      simples_opcao_pelo_mei: 'N',
      simples_opcao_pelo_mei_descricao: 'Não',
      tem_empresa: true,
      tem_simples: true,
    });
    // pais, phones, e-mail, situação especial and the MEI dates are empty in the file
    for (const campo of ['pais', 'pais_descricao', 'ddd_1', 'telefone_1', 'ddd_2', 'telefone_2', 'ddd_fax', 'fax', 'correio_eletronico', 'situacao_especial']) {
      expect({ campo, valor: resto[campo] }).toEqual({ campo, valor: null });
    }
    expect(socios).toHaveLength(6);
  });

  test('the six partners come in the listed order (byte order: ANTONINO before ANTONIO), with their codes and descriptions', async () => {
    const { socios } = await registro(SERPRO);
    expect(socios.map((s: any) => s.nome_socio_razao_social)).toEqual([
      'ANDRE DE CESERO',
      'ANTONINO DOS SANTOS GUERRA NETO',
      'ANTONIO DE PADUA FERREIRA PASSOS',
      'GILENO GURJAO BARRETO',
      'RICARDO CEZAR DE MOURA JUCA',
      'WILSON BIANCARDI COURY',
    ]);
    const { representante_legal, ...primeiro } = socios[0];
    // `***000000**` is the Receita's "no representative": kept as written or made null
    expect(['***000000**', null]).toContain(representante_legal);
    expect(primeiro).toEqual({
      cnpj_basico: '33683111',
      identificador_socio: '2',
      identificador_socio_descricao: expect.stringMatching(/f[ií]sica/i),
      nome_socio_razao_social: 'ANDRE DE CESERO',
      cnpj_cpf_socio: '***220050**',
      qualificacao_socio: '10',
      qualificacao_socio_descricao: 'Diretor',
      data_entrada_sociedade: '20160616',
      pais: null,
      pais_descricao: null,
      nome_representante: null,
      qualificacao_representante: '00',
      qualificacao_representante_descricao: 'Não informada',
      faixa_etaria: '6',
    });
    expect(socios.map((s: any) => [s.qualificacao_socio, s.qualificacao_socio_descricao, s.faixa_etaria])).toEqual([
      ['10', 'Diretor', '6'],
      ['05', 'Administrador', '7'],
      ['10', 'Diretor', '7'],
      ['16', 'Presidente', '5'],
      ['10', 'Diretor', '5'],
      ['10', 'Diretor', '8'],
    ]);
  });

  test('the company 19131243 has no establishment: the import loads it without error and its CNPJ answers 404', async () => {
    expect(resultado.linhas).toMatchObject({ empresa: 2, socio: 7, estabelecimento: 1 });
    expect(await sql('SELECT razao_social FROM empresa WHERE cnpj_basico = ?', ['19131243'])).toEqual([{ razao_social: 'OPEN KNOWLEDGE BRASIL' }]);
    expect((await buscar(cnpjValido('191312430001'))).status).toBe(404);
  });

  test('files outside the layout (Lucro Real.zip and the other tax-regime zips, tabmun.csv) are ignored; the trailing blank line adds no row', async () => {
    expect(resultado.linhas).toEqual({
      estabelecimento: 1,
      estabelecimento_cnae_secundaria: 5,
      empresa: 2,
      socio: 7,
      simples: 1,
      cnae: 6,
      motivo: 2,
      municipio: 1,
      natureza_juridica: 1,
      pais: 1,
      qualificacao: 4,
    });
    expect(await contar('estabelecimento')).toBe(1);
    // Lucro Real.zip holds 00.000.000/0001-91 in its own CSV format: not read as an establishment
    expect((await buscar('00000000000191')).status).toBe(404);
    expect(await tabelasDeTrabalho()).toEqual([]);
  });
});

// ---------------------------------------------------------------------------------------------

describe('what the files may hold (DESIGN §6 and §10 Leads; SOURCE.md format)', () => {
  test('NUL bytes are dropped and runs of spaces folded into one, in data and code tables', async () => {
    const cnpj = novoCnpj();
    const estab = csvDaReceita([
      linhaDeEstabelecimento({ cnpj, nome_fantasia: 'PADA@RIA  DO   ZE', logradouro: '  DAS@ FLORES  ', complemento: '@@', ddd_1: '1@1', numero: '  ' }),
    ]).replace(/@/g, '\0');
    const cnaes = csvDaReceita([['6204000', 'Consultoria  em\0 tecnologia']]);
    await importarMes({}, { Estabelecimentos0: { linhas: estab }, Cnaes: { linhas: cnaes } });

    expect(await registro(cnpj)).toMatchObject({
      nome_fantasia: 'PADARIA DO ZE',
      logradouro: 'DAS FLORES',
      complemento: null,
      numero: null,
      ddd_1: '11',
      cnae_fiscal_principal_descricao: 'Consultoria em tecnologia',
    });
  });

  test('a `;` inside quotes, doubled and stray quotes, the word NULL, accents and a decimal comma reach the record intact (the capital as the file writes it)', async () => {
    const cnpj = novoCnpj();
    const estab = csvDaReceita([linhaDeEstabelecimento({ cnpj, nome_fantasia: 'BAR; RESTAURANTE', complemento: 'NULL', bairro: 'SÃO JOÃO' })]);
    // a stray quote (not before `;` or a line end) is text, as the database's own reader takes it
    const [cabeca, cauda] = estab.split('"BAR; RESTAURANTE"');
    const linha = `${cabeca}"BAR; RESTAURANTE ""O REI"" DO "PASTEL" BOM"${cauda}`;
    await importarMes({}, {
      Estabelecimentos0: { linhas: linha },
      Empresas0: { linhas: [linhaDeEmpresa({ cnpj_basico: basico(cnpj), razao_social: 'AÇÃO; LTDA', capital_social: '1234,56' })] },
    });

    expect(await registro(cnpj)).toMatchObject({
      nome_fantasia: 'BAR; RESTAURANTE "O REI" DO "PASTEL" BOM',
      complemento: 'NULL',
      bairro: 'SÃO JOÃO',
      empresa_razao_social: 'AÇÃO; LTDA',
      empresa_capital_social: '1234,56',
    });
  });

  test('quotes the Receita leaves undoubled inside a name, even right before its end or before a `;`: the text keeps them, no field shifts, no row is lost', async () => {
    const [a, b] = [novoCnpj(), novoCnpj()];
    // csvDaReceita quotes each value as the Receita does, without doubling the quotes inside
    const estab = csvDaReceita([
      linhaDeEstabelecimento({ cnpj: a, nome_fantasia: 'BAR DO "ZE"', complemento: 'LOJA "A";B', bairro: '"CENTRO"', uf: 'SP', ddd_1: '11' }),
      linhaDeEstabelecimento({ cnpj: b, nome_fantasia: 'OUTRA', uf: 'RJ' }),
    ]);
    const empresa = csvDaReceita([linhaDeEmpresa({ cnpj_basico: basico(a), razao_social: 'COMERCIO "X"', capital_social: '1500,00', natureza_juridica: '2062' })]);
    await importarMes({}, { Estabelecimentos0: { linhas: estab }, Empresas0: { linhas: empresa } });

    expect(await registro(a)).toMatchObject({
      nome_fantasia: 'BAR DO "ZE"',
      complemento: 'LOJA "A";B',
      bairro: '"CENTRO"',
      uf: 'SP',
      ddd_1: '11',
      empresa_razao_social: 'COMERCIO "X"',
      empresa_natureza_juridica: '2062',
      empresa_capital_social: '1500,00',
    });
    expect(await registro(b)).toMatchObject({ nome_fantasia: 'OUTRA', uf: 'RJ' });
    expect(await contar('estabelecimento')).toBe(2);
  });

  test('bytes 0x80-0x9F (Windows-1252 punctuation in files declared ISO-8859-1) become the characters meant, not C1 controls; other accents unchanged', async () => {
    const cnpj = novoCnpj();
    // raw bytes: “BAR” – D’ARC € … and ÇÃ; 0x81 has no Windows-1252 character and stays U+0081
    const nome = Buffer.from([0x93, ...Buffer.from('BAR', 'latin1'), 0x94, 0x20, 0x96, 0x20, 0x44, 0x92, ...Buffer.from('ARC ', 'latin1'), 0x80, 0x20, 0x85, 0x20, 0xc7, 0xc3, 0x81]);
    const [antes, depois] = csvDaReceita([linhaDeEstabelecimento({ cnpj, nome_fantasia: '@' })]).split('@');
    await importarMes({}, { Estabelecimentos0: { linhas: antes + nome.toString('latin1') + depois } }); // written byte for byte

    expect((await registro(cnpj)).nome_fantasia).toBe('\u201cBAR\u201d \u2013 D\u2019ARC \u20ac \u2026 \u00c7\u00c3\u0081');
  });

  test('capital_social the column cannot hold as written (thousands dots, too large, negative, not a number) is null, never another number; the import goes on', async () => {
    const capitais = ['1.234,56', ',5', '', '-5,00', '1.000', 'abc', '1000000000000000000,00', '999999999999999999,99'];
    const cnpjs = capitais.map(() => novoCnpj());
    await importarMes(
      {},
      {
        Estabelecimentos0: { linhas: cnpjs.map((cnpj) => linhaDeEstabelecimento({ cnpj })) },
        Empresas0: { linhas: cnpjs.map((cnpj, i) => linhaDeEmpresa({ cnpj_basico: basico(cnpj), capital_social: capitais[i] })) },
      },
    );

    const obtidos = Object.fromEntries(await Promise.all(cnpjs.map(async (cnpj, i) => [capitais[i], (await registro(cnpj)).empresa_capital_social])));
    expect(obtidos).toEqual({
      '1.234,56': '1234,56',
      ',5': '0,50',
      '': null,
      '-5,00': null,
      '1.000': null,
      abc: null,
      '1000000000000000000,00': null,
      '999999999999999999,99': '999999999999999999,99',
    });
  });

  test('a line break inside a quoted field (CRLF or LF) is a space in the text, and the next row is still its own', async () => {
    const [a, b] = [novoCnpj(), novoCnpj()];
    const estab = csvDaReceita([
      linhaDeEstabelecimento({ cnpj: a, complemento: 'BLOCO A\r\nSALA 2', logradouro: 'DAS\nFLORES', uf: 'SP' }),
      linhaDeEstabelecimento({ cnpj: b, uf: 'RJ' }),
    ]);
    await importarMes({}, { Estabelecimentos0: { linhas: estab } });

    expect(await registro(a)).toMatchObject({ complemento: 'BLOCO A SALA 2', logradouro: 'DAS FLORES', uf: 'SP' });
    expect(await registro(b)).toMatchObject({ uf: 'RJ' });
    expect(await contar('estabelecimento')).toBe(2);
  });

  test('a trailing `;` and a row with fewer fields than the layout: the row is kept, the fields it has in place, the missing ones null', async () => {
    const [a, b, c] = [novoCnpj(), novoCnpj(), novoCnpj()];
    const [la, lb] = [a, b].map((cnpj) => csvDaReceita([linhaDeEstabelecimento({ cnpj, uf: 'SP' })]).replace('\n', ''));
    const curta = csvDaReceita([linhaDeEstabelecimento({ cnpj: c, nome_fantasia: 'CURTA' }).slice(0, 6)]);
    const resultado = await importarMes({}, { Estabelecimentos0: { linhas: `${la};\n${lb};""\n${curta}` } });

    expect(resultado.linhas.estabelecimento).toBe(3);
    expect(await registro(a)).toMatchObject({ uf: 'SP', data_situacao_especial: null });
    expect(await registro(b)).toMatchObject({ uf: 'SP' });
    expect(await registro(c)).toMatchObject({ nome_fantasia: 'CURTA', situacao_cadastral: '02', uf: null, cnae_fiscal_principal: null });
  });

  test('CRLF line ends: no carriage return stays in the last column, every row is read', async () => {
    const [a, b] = [novoCnpj(), novoCnpj()];
    const crlf = (linhas: string[][]) => csvDaReceita(linhas).replace(/\n/g, '\r\n');
    await importarMes(
      {},
      {
        Estabelecimentos0: {
          linhas: crlf([
            linhaDeEstabelecimento({ cnpj: a, situacao_especial: 'X', data_situacao_especial: '20210101' }),
            linhaDeEstabelecimento({ cnpj: b, correio_eletronico: 'b@empresa.test' }),
          ]),
        },
        Simples: { linhas: crlf([linhaDoSimples({ cnpj_basico: basico(a), opcao_pelo_mei: 'S', data_opcao_mei: '20200202', data_exclusao_mei: '20210303' })]) },
        Municipios: { linhas: crlf([['7107', 'SAO PAULO']]) },
      },
    );

    expect(await registro(a)).toMatchObject({ data_situacao_especial: '20210101', municipio_descricao: 'SAO PAULO', simples_data_exclusao_mei: '20210303' });
    expect(await registro(b)).toMatchObject({ correio_eletronico: 'b@empresa.test', data_situacao_especial: null });
    expect(await contar('estabelecimento')).toBe(2);
  });

  test('blank lines at the start, in the middle and at the end are skipped', async () => {
    const [a, b] = [novoCnpj(), novoCnpj()];
    const [la, lb] = [a, b].map((cnpj) => csvDaReceita([linhaDeEstabelecimento({ cnpj })]));
    const resultado = await importarMes({}, { Estabelecimentos0: { linhas: `\n\n${la}\n\n\n${lb}\r\n\n\r\n\n` } });

    expect(resultado.linhas.estabelecimento).toBe(2);
    expect(await contar('estabelecimento')).toBe(2);
    await registro(a);
    await registro(b);
  });

  test('a line of only spaces leaves no row with an empty key (it would lead every listing)', async () => {
    const a = novoCnpj();
    const la = csvDaReceita([linhaDeEstabelecimento({ cnpj: a })]);
    const le = csvDaReceita([linhaDeEmpresa({ cnpj_basico: basico(a) })]);
    const resultado = await importarMes({}, { Estabelecimentos0: { linhas: `   \n${la}    \n` }, Empresas0: { linhas: ` \n${le}  \n` } });

    expect(resultado.linhas.estabelecimento).toBe(1);
    expect(await contar('estabelecimento')).toBe(1);
    expect(await contar('empresa')).toBe(1);
    await registro(a);
  });

  test('the name of the file inside the zip does not matter, even in a subfolder', async () => {
    const cnpj = novoCnpj();
    await importarMes(
      {},
      {
        Estabelecimentos0: { interno: 'qualquer nome.txt', linhas: [linhaDeEstabelecimento({ cnpj })] },
        Empresas0: { interno: 'pasta/sub/EMPRESAS.CSV', linhas: [linhaDeEmpresa({ cnpj_basico: basico(cnpj), razao_social: 'DENTRO DA PASTA' })] },
      },
    );
    expect(await registro(cnpj)).toMatchObject({ tem_empresa: true, empresa_razao_social: 'DENTRO DA PASTA' });
  });

  test("what an archiver adds beside the file (macOS's __MACOSX/ and ._ resource forks, .DS_Store) is not loaded as rows", async () => {
    const cnpj = novoCnpj();
    const lixo = 'Mac OS X        \u0002\u0000;"ATTR";"com.apple.quarantine"\n';
    await importarMes(
      {},
      {
        Estabelecimentos0: { linhas: [linhaDeEstabelecimento({ cnpj })], outras: { [`__MACOSX/._${nomeInternoReal('Estabelecimentos0')}`]: lixo } },
        Empresas0: {
          linhas: [linhaDeEmpresa({ cnpj_basico: basico(cnpj), razao_social: 'SO A EMPRESA' })],
          outras: { '.DS_Store': lixo, 'pasta/._EMPRECSV': lixo },
        },
      },
    );
    expect(await registro(cnpj)).toMatchObject({ tem_empresa: true, empresa_razao_social: 'SO A EMPRESA' });
    const [[{ n }]] = (await banco('leads').query("SELECT COUNT(*) AS n FROM empresa WHERE cnpj_basico LIKE 'Mac%' OR razao_social LIKE '%ATTR%'")) as any;
    expect(Number(n)).toBe(0);
  });

  test('several parts of a kind (Estabelecimentos0.zip, Estabelecimentos1.zip...) are loaded together', async () => {
    const [a, b, c] = [novoCnpj(), novoCnpj(), novoCnpj()];
    const resultado = await importarMes(
      {},
      {
        Estabelecimentos0: { linhas: [linhaDeEstabelecimento({ cnpj: a })] },
        Estabelecimentos1: { linhas: [linhaDeEstabelecimento({ cnpj: b })] },
        Estabelecimentos2: { linhas: [linhaDeEstabelecimento({ cnpj: c })] },
        Empresas0: { linhas: [linhaDeEmpresa({ cnpj_basico: basico(a), razao_social: 'A' })] },
        Empresas1: { linhas: [linhaDeEmpresa({ cnpj_basico: basico(b), razao_social: 'B' })] },
        Socios0: { linhas: [linhaDeSocio({ cnpj_basico: basico(a), nome_socio_razao_social: 'SOCIO A0' })] },
        Socios1: { linhas: [linhaDeSocio({ cnpj_basico: basico(a), nome_socio_razao_social: 'SOCIO A1' })] },
      },
    );
    expect(resultado.linhas).toMatchObject({ estabelecimento: 3, empresa: 2, socio: 2 });
    expect(await registro(a)).toMatchObject({
      empresa_razao_social: 'A',
      socios: [expect.objectContaining({ nome_socio_razao_social: 'SOCIO A0' }), expect.objectContaining({ nome_socio_razao_social: 'SOCIO A1' })],
    });
    expect(await registro(b)).toMatchObject({ empresa_razao_social: 'B', socios: [] });
    expect(await registro(c)).toMatchObject({ tem_empresa: false });
  });

  test.each([
    ['00000000', '00000000'],
    ['0', '0'],
    ['empty', ''],
  ])('the date %s means no date: null in the establishment, Simples and partner dates (DESIGN §10)', async (_caso, semData) => {
    const cnpj = novoCnpj();
    await importarMes({
      estabelecimentos: [
        linhaDeEstabelecimento({ cnpj, data_situacao_cadastral: semData, data_inicio_atividade: semData, situacao_especial: 'X', data_situacao_especial: semData }),
      ],
      simples: [
        linhaDoSimples({
          cnpj_basico: basico(cnpj),
          data_opcao_simples: semData,
          data_exclusao_simples: semData,
          data_opcao_mei: semData,
          data_exclusao_mei: semData,
        }),
      ],
      socios: [linhaDeSocio({ cnpj_basico: basico(cnpj), data_entrada_sociedade: semData })],
    });
    const r = await registro(cnpj);
    expect(r).toMatchObject({
      data_situacao_cadastral: null,
      data_inicio_atividade: null,
      data_situacao_especial: null,
      simples_data_opcao_simples: null,
      simples_data_exclusao_simples: null,
      simples_data_opcao_mei: null,
      simples_data_exclusao_mei: null,
      tem_simples: true,
    });
    expect(r.socios).toEqual([expect.objectContaining({ data_entrada_sociedade: null })]);
  });

  test('a real date next to an empty one is kept as AAAAMMDD text', async () => {
    const cnpj = novoCnpj();
    await importarMes({ estabelecimentos: [linhaDeEstabelecimento({ cnpj, data_situacao_cadastral: '19991231', data_inicio_atividade: '' })] });
    expect(await registro(cnpj)).toMatchObject({ data_situacao_cadastral: '19991231', data_inicio_atividade: null });
  });

  test('a value that is no day of the calendar is no date: null, like 0 and 00000000; 29 February only in a leap year', async () => {
    const validas = ['20240229', '20000229', '20211231', '19000101'];
    const invalidas = ['20230229', '19000229', '20211301', '20210431', '20210100', '2021', '202101011', '0000000', '00000101', '2021-1-1', '0'];
    const cnpjs = [...validas, ...invalidas].map(() => novoCnpj());
    await importarMes({
      estabelecimentos: [...validas, ...invalidas].map((data, i) => linhaDeEstabelecimento({ cnpj: cnpjs[i], data_inicio_atividade: data })),
    });
    const lidas = [];
    for (const cnpj of cnpjs) lidas.push((await registro(cnpj)).data_inicio_atividade);
    expect(lidas).toEqual([...validas, ...invalidas.map(() => null)]);
  });

  test('a code written without the leading zeros its table has (a country 69 where Paises has 069, as real months do) keeps its code as written and gets its description', async () => {
    const cnpj = novoCnpj();
    await importarMes({
      paises: { ...CODIGOS_PADRAO.paises, '069': 'ARGENTINA', '063': 'ANTIGUA E BARBUDA' },
      estabelecimentos: [linhaDeEstabelecimento({ cnpj, pais: '69', motivo_situacao_cadastral: '1' })],
      empresas: [linhaDeEmpresa({ cnpj_basico: basico(cnpj), qualificacao_responsavel: '5' })],
      socios: [linhaDeSocio({ cnpj_basico: basico(cnpj), pais: '63', qualificacao_socio: '49', qualificacao_representante: '0' })],
    });
    const r = await registro(cnpj);
    expect(r).toMatchObject({
      pais: '69',
      pais_descricao: 'ARGENTINA',
      motivo_situacao_cadastral: '1',
      motivo_situacao_cadastral_descricao: CODIGOS_PADRAO.motivos['01'],
      empresa_qualificacao_responsavel: '5',
      empresa_qualificacao_responsavel_descricao: 'Administrador',
    });
    expect(r.socios).toEqual([
      expect.objectContaining({ pais: '63', pais_descricao: 'ANTIGUA E BARBUDA', qualificacao_representante: '0', qualificacao_representante_descricao: 'Não informada' }),
    ]);
  });

  test('a code absent from its code table (CNAE, município, motivo, país, natureza, qualificação) keeps its code, with description null, and is no error', async () => {
    const cnpj = novoCnpj();
    const resultado = await importarMes({
      estabelecimentos: [
        linhaDeEstabelecimento({ cnpj, cnae_fiscal_principal: '9999999', municipio: '0001', motivo_situacao_cadastral: '98', pais: '997', situacao_cadastral: '99' }),
      ],
      empresas: [linhaDeEmpresa({ cnpj_basico: basico(cnpj), natureza_juridica: '9998', qualificacao_responsavel: '97', porte_empresa: '02' })],
      socios: [linhaDeSocio({ cnpj_basico: basico(cnpj), qualificacao_socio: '96', pais: '996', qualificacao_representante: '95', identificador_socio: '9' })],
    });
    expect(resultado.linhas.estabelecimento).toBe(1);
    const r = await registro(cnpj);
    expect(r).toMatchObject({
      cnae_fiscal_principal: '9999999',
      cnae_fiscal_principal_descricao: null,
      municipio: '0001',
      municipio_descricao: null,
      motivo_situacao_cadastral: '98',
      motivo_situacao_cadastral_descricao: null,
      pais: '997',
      pais_descricao: null,
      situacao_cadastral: '99',
      situacao_cadastral_descricao: null,
      empresa_natureza_juridica: '9998',
      empresa_natureza_juridica_descricao: null,
      empresa_qualificacao_responsavel: '97',
      empresa_qualificacao_responsavel_descricao: null,
      empresa_porte_empresa: '02',
      empresa_porte_empresa_descricao: null,
    });
    expect(r.socios).toEqual([
      expect.objectContaining({
        qualificacao_socio: '96',
        qualificacao_socio_descricao: null,
        pais: '996',
        pais_descricao: null,
        qualificacao_representante: '95',
        qualificacao_representante_descricao: null,
        identificador_socio: '9',
        identificador_socio_descricao: null,
      }),
    ]);
  });

  test('an establishment without a company row: tem_empresa false and every empresa_* null; without a Simples row: tem_simples false and every simples_* null', async () => {
    const [sozinho, soEmpresa] = [novoCnpj(), novoCnpj()];
    await importarMes({
      estabelecimentos: [linhaDeEstabelecimento({ cnpj: sozinho }), linhaDeEstabelecimento({ cnpj: soEmpresa })],
      empresas: [linhaDeEmpresa({ cnpj_basico: basico(soEmpresa) })],
    });
    const r = await registro(sozinho);
    expect(r).toMatchObject({ tem_empresa: false, tem_simples: false, socios: [] });
    const nulos = Object.entries(r).filter(([k]) => k.startsWith('empresa_') || k.startsWith('simples_'));
    expect(nulos.length).toBe(17);
    expect(nulos.filter(([, v]) => v !== null)).toEqual([]);

    expect(await registro(soEmpresa)).toMatchObject({ tem_empresa: true, empresa_razao_social: 'EMPRESA TESTE LTDA', tem_simples: false, simples_opcao_pelo_simples: null });
  });

  test('an alphanumeric CNPJ (letters in the first 12 positions) is imported and found in any case; letters written lower case in the file are stored upper case', async () => {
    const oficial = '12ABC34501DE35';
    const minusculo = cnpjValido('AB1CD2EF0A01');
    await importarMes({
      estabelecimentos: [
        linhaDeEstabelecimento({ cnpj: oficial, nome_fantasia: 'EXEMPLO DA RECEITA' }),
        linhaDeEstabelecimento({ cnpj: minusculo.toLowerCase(), nome_fantasia: 'MINUSCULO NO ARQUIVO' }),
      ],
      empresas: [linhaDeEmpresa({ cnpj_basico: '12ABC345', razao_social: 'ALFA' }), linhaDeEmpresa({ cnpj_basico: basico(minusculo).toLowerCase(), razao_social: 'BETA' })],
      socios: [linhaDeSocio({ cnpj_basico: basico(minusculo).toLowerCase(), nome_socio_razao_social: 'SOCIA BETA' })],
      simples: [linhaDoSimples({ cnpj_basico: '12ABC345' })],
    });

    for (const escrito of ['12abc34501de35', '12ABC34501DE35', '12.abc.345%2F01de-35']) {
      expect(await registro(escrito)).toMatchObject({ cnpj: oficial, cnpj_basico: '12ABC345', cnpj_ordem: '01DE', cnpj_dv: '35', empresa_razao_social: 'ALFA', tem_simples: true });
    }
    expect(await registro(minusculo.toLowerCase())).toMatchObject({
      cnpj: minusculo,
      cnpj_basico: basico(minusculo),
      nome_fantasia: 'MINUSCULO NO ARQUIVO',
      empresa_razao_social: 'BETA',
      socios: [expect.objectContaining({ cnpj_basico: basico(minusculo), nome_socio_razao_social: 'SOCIA BETA' })],
    });
  });

  test('a key repeated in a file keeps one row, the first (establishment, company, Simples, code table)', async () => {
    const cnpj = novoCnpj();
    const resultado = await importarMes({
      estabelecimentos: [linhaDeEstabelecimento({ cnpj, nome_fantasia: 'PRIMEIRA' }), linhaDeEstabelecimento({ cnpj, nome_fantasia: 'SEGUNDA' })],
      empresas: [linhaDeEmpresa({ cnpj_basico: basico(cnpj), razao_social: 'PRIMEIRA LTDA' }), linhaDeEmpresa({ cnpj_basico: basico(cnpj), razao_social: 'SEGUNDA LTDA' })],
      simples: [linhaDoSimples({ cnpj_basico: basico(cnpj), opcao_pelo_simples: 'S' }), linhaDoSimples({ cnpj_basico: basico(cnpj), opcao_pelo_simples: 'N' })],
      cnaes: { '6204000': 'PRIMEIRA DESCRICAO' },
    });
    expect(resultado.linhas).toMatchObject({ estabelecimento: 1, empresa: 1, simples: 1 });
    expect(await contar('estabelecimento')).toBe(1);
    expect(await registro(cnpj)).toMatchObject({ nome_fantasia: 'PRIMEIRA', empresa_razao_social: 'PRIMEIRA LTDA', simples_opcao_pelo_simples: 'S' });

    await importarMes({ estabelecimentos: [linhaDeEstabelecimento({ cnpj })] }, { Cnaes: { linhas: linhasDeCodigos({ '6204000': 'PRIMEIRA' }).concat([['6204000', 'SEGUNDA']]) } });
    expect(await registro(cnpj)).toMatchObject({ cnae_fiscal_principal_descricao: 'PRIMEIRA' });
    expect(await contar('cnae')).toBe(1);
  });

  /** The listing filtered by one secondary CNAE: its total and CNPJs. */
  const porCnaeSecundario = async (cnae: string) => {
    const token = await identityDe(suite.url.identity).admin();
    const res = await api.get('/api/empresas', { token, query: { cnae_secundaria: cnae } });
    expect(res.status).toBe(200);
    return { total: res.body.total, cnpjs: res.body.itens.map((i: { cnpj: string }) => i.cnpj) };
  };

  test("a CNPJ repeated in the month's files is found by the secondary CNAEs of the row kept, not by a later row's (DESIGN §6 filter cnae_secundaria)", async () => {
    const cnpj = novoCnpj();
    await importarMes({
      estabelecimentos: [
        linhaDeEstabelecimento({ cnpj, nome_fantasia: 'PRIMEIRA', cnae_fiscal_secundaria: '6201501, 4711302' }),
        linhaDeEstabelecimento({ cnpj, nome_fantasia: 'SEGUNDA', cnae_fiscal_secundaria: '4751201' }),
      ],
    });
    expect(await porCnaeSecundario('4751201')).toEqual({ total: 0, cnpjs: [] });
    expect(await porCnaeSecundario('6201501')).toEqual({ total: 1, cnpjs: [cnpj] });
    expect(await porCnaeSecundario('4711302')).toEqual({ total: 1, cnpjs: [cnpj] });
    expect(await registro(cnpj)).toMatchObject({ nome_fantasia: 'PRIMEIRA', cnae_fiscal_secundaria: '6201501, 4711302' });
  });

  test('a secondary CNAE listed twice by one establishment: the establishment is still found by that CNAE, once (DESIGN §6 filter cnae_secundaria)', async () => {
    const [repete, outro] = [novoCnpj(), novoCnpj()];
    await importarMes({
      estabelecimentos: [
        linhaDeEstabelecimento({ cnpj: repete, cnae_fiscal_secundaria: '6201501,6201501,4711302' }),
        linhaDeEstabelecimento({ cnpj: outro, cnae_fiscal_secundaria: '6201501' }),
      ],
    });
    expect(await porCnaeSecundario('6201501')).toEqual({ total: 2, cnpjs: [repete, outro].sort() });
    expect(await porCnaeSecundario('4711302')).toEqual({ total: 1, cnpjs: [repete] });
  });

  test('a DDD the file pads (`0011`, `011`, ` 11 `) is stored as its 2 digits, so `ddd=11` finds it; zeros alone are no DDD', async () => {
    const [a, b, c, d, e] = [novoCnpj(), novoCnpj(), novoCnpj(), novoCnpj(), novoCnpj()];
    await importarMes({
      estabelecimentos: [
        linhaDeEstabelecimento({ cnpj: a, ddd_1: '0011', telefone_1: '33334444' }),
        linhaDeEstabelecimento({ cnpj: b, ddd_1: ' 11 ', telefone_1: '33334444' }),
        linhaDeEstabelecimento({ cnpj: c, ddd_1: '0061', ddd_2: '011', ddd_fax: '0021' }),
        linhaDeEstabelecimento({ cnpj: d, ddd_1: '21' }),
        linhaDeEstabelecimento({ cnpj: e, ddd_1: '0000', ddd_2: '0' }),
      ],
    });
    const token = await identityDe(suite.url.identity).admin();
    const achados = async (ddd: string) => {
      const res = await api.get('/api/empresas', { token, query: { ddd } });
      expect(res.status).toBe(200);
      return res.body.itens.map((i: { cnpj: string }) => i.cnpj);
    };
    expect(await achados('11')).toEqual([a, b, c].sort());
    expect(await achados('61')).toEqual([c]);
    expect(await registro(c)).toMatchObject({ ddd_1: '61', ddd_2: '11', ddd_fax: '21' });
    expect(await registro(e)).toMatchObject({ ddd_1: null, ddd_2: null });
  });

  test('a kind of file absent from the directory keeps its current data (api/leads/importacao.ts)', async () => {
    const cnpj = novoCnpj();
    await importarMes({
      estabelecimentos: [linhaDeEstabelecimento({ cnpj, nome_fantasia: 'ANTES' })],
      empresas: [linhaDeEmpresa({ cnpj_basico: basico(cnpj), razao_social: 'CONTINUA LTDA' })],
    });
    const dir = dirs.novo();
    await escreverZipsDaReceita(dir, { Estabelecimentos0: { linhas: [linhaDeEstabelecimento({ cnpj, nome_fantasia: 'DEPOIS' })] } });
    await importarCnpj(dir);
    expect(await registro(cnpj)).toMatchObject({ nome_fantasia: 'DEPOIS', empresa_razao_social: 'CONTINUA LTDA' });
  });
});

// ---------------------------------------------------------------------------------------------

/** A month with `n` extra establishments: big enough that its import takes a while. */
let grande: { dir: string; cnpj: string } | undefined;
async function mesGrande(n = 40_000) {
  if (grande) return grande;
  const dir = dirs.novo('grande');
  const cnpj = cnpjValido('555000010001');
  const base = csvDaReceita([linhaDeEstabelecimento({ cnpj: '00000000000000', nome_fantasia: 'MES 2', correio_eletronico: 'contato@mes2.test' })]);
  const partes: string[] = [csvDaReceita([linhaDeEstabelecimento({ cnpj, nome_fantasia: 'MES 2' })])];
  for (let i = 1; i <= n; i++) {
    const c = cnpjValido(`7${String(i).padStart(7, '0')}0001`);
    partes.push(`"${c.slice(0, 8)}";"0001";"${c.slice(12)}"${base.slice(base.indexOf(';"1";'))}`);
  }
  await escreverMes(dir, {
    estabelecimentos: [],
    empresas: [linhaDeEmpresa({ cnpj_basico: basico(cnpj), razao_social: 'EMPRESA MES 2' })],
    socios: [linhaDeSocio({ cnpj_basico: basico(cnpj), nome_socio_razao_social: 'SOCIO UNICO' })],
  });
  await escreverZipsDaReceita(dir, { Estabelecimentos0: { linhas: partes.join('') } });
  grande = { dir, cnpj };
  return grande;
}

describe('importing a new month (DESIGN §6: runs again on a new month\'s files)', () => {
  const dois = (cnpj: string, mes: string) => ({
    estabelecimentos: [linhaDeEstabelecimento({ cnpj, nome_fantasia: mes })],
    empresas: [linhaDeEmpresa({ cnpj_basico: basico(cnpj), razao_social: `EMPRESA ${mes}` })],
    socios: ['ANA', 'BRUNO'].map((nome) => linhaDeSocio({ cnpj_basico: basico(cnpj), nome_socio_razao_social: nome })),
  });

  /** A month live whose CNPJ is named "MES 1", and the folder of the next, which names it "MES 2". */
  async function mesVivoEOProximo() {
    const cnpj = novoCnpj();
    await importarMes(dois(cnpj, 'MES 1'));
    return { cnpj, dir: await diretorioDoMes(dois(cnpj, 'MES 2')) };
  }

  test('replaces the data: a CNPJ only in the old month is gone, a changed value shows the new one, one only in the new month appears; no duplicates', async () => {
    const [soNoPrimeiro, nosDois, soNoSegundo] = [novoCnpj(), novoCnpj(), novoCnpj()];
    const m1 = dois(nosDois, 'MES 1');
    await importarMes({ ...m1, estabelecimentos: [...m1.estabelecimentos, linhaDeEstabelecimento({ cnpj: soNoPrimeiro })] });
    expect(await registro(nosDois)).toMatchObject({ nome_fantasia: 'MES 1', empresa_razao_social: 'EMPRESA MES 1' });
    expect((await buscar(soNoSegundo)).status).toBe(404);

    const m2 = dois(nosDois, 'MES 2');
    const dir2 = await diretorioDoMes({ ...m2, estabelecimentos: [...m2.estabelecimentos, linhaDeEstabelecimento({ cnpj: soNoSegundo })] });
    await importarCnpj(dir2);
    expect((await buscar(soNoPrimeiro)).status).toBe(404);
    await registro(soNoSegundo);
    const r = await registro(nosDois);
    expect(r).toMatchObject({ nome_fantasia: 'MES 2', empresa_razao_social: 'EMPRESA MES 2' });
    expect(r.socios.map((s: any) => s.nome_socio_razao_social)).toEqual(['ANA', 'BRUNO']);

    // the same month once more: nothing doubled
    await importarCnpj(dir2);
    expect((await registro(nosDois)).socios.map((s: any) => s.nome_socio_razao_social)).toEqual(['ANA', 'BRUNO']);
    expect([await contar('estabelecimento'), await contar('empresa'), await contar('socio')]).toEqual([2, 1, 2]);
    expect(await tabelasDeTrabalho()).toEqual([]);
  });

  test('each month swapped in brings the counts of its broad filter sets (uf, situacao_cadastral, matriz_filial), kept under its generation', async () => {
    const m1 = dois(novoCnpj(), 'MES 1');
    await importarMes({ ...m1, estabelecimentos: [...m1.estabelecimentos, linhaDeEstabelecimento({ cnpj: novoCnpj(), uf: 'RJ', situacao_cadastral: '08' })] });
    geracao.esquecerGeracao();
    expect([await contagemGuardada({}), await contagemGuardada({ uf: 'SP' }), await contagemGuardada({ uf: 'RJ', situacao_cadastral: '08', matriz_filial: '1' })]).toEqual([
      { total: 2, estimado: false },
      { total: 1, estimado: false },
      { total: 1, estimado: false },
    ]);
    await importarMes(dois(novoCnpj(), 'MES 2'));
    geracao.esquecerGeracao();
    expect([await contagemGuardada({}), await contagemGuardada({ uf: 'RJ' })]).toEqual([{ total: 1, estimado: false }, null]);
  });

  test("a failed count pass fails no import: the month is live and recorded done, and its broad sets are counted when listed", async () => {
    const falha = jest.spyOn(contagem, 'contarFiltrosComuns').mockRejectedValueOnce(new Error('Redis fora do ar'));
    try {
      const cnpj = novoCnpj();
      const dir = await diretorioDoMes(dois(cnpj, 'MES 1'));
      await importarCnpj(dir);
      expect(falha).toHaveBeenCalledTimes(1);
      expect(await registro(cnpj)).toMatchObject({ nome_fantasia: 'MES 1' });
      expect(await sql('SELECT situacao FROM importacao WHERE diretorio = ?', [dir])).toEqual([{ situacao: 'concluida' }]);
    } finally {
      falha.mockRestore();
    }
  });

  test('the fresh tables swapped in keep every index of the live ones (the listing filters\' indexes, cep and start date included)', async () => {
    const indices = async (tabela: string) =>
      (await banco('leads').query(`SHOW INDEX FROM ${tabela}`, { type: QueryTypes.SELECT }))
        .map((i: any) => `${i.Key_name}:${i.Seq_in_index}:${i.Column_name}:${i.Index_type}`)
        .sort();
    const antes = await indices('estabelecimento');
    expect(antes).toContain('estabelecimento_cep:1:cep:BTREE');
    expect(antes).toEqual(expect.arrayContaining(['estabelecimento_data_inicio:1:data_inicio_atividade:BTREE', 'estabelecimento_data_inicio:2:cnpj:BTREE']));
    const outros = { empresa: await indices('empresa'), socio: await indices('socio') };
    await importarMes(dois(novoCnpj(), 'INDICES'));
    expect(await indices('estabelecimento')).toEqual(antes);
    expect({ empresa: await indices('empresa'), socio: await indices('socio') }).toEqual(outros);
  });

  test('while a month is being imported, lookups keep answering the old data, then the new one: always 200, never a gap', async () => {
    const { dir, cnpj } = await mesGrande();
    await importarMes({ ...dois(cnpj, 'MES 1'), estabelecimentos: [linhaDeEstabelecimento({ cnpj, nome_fantasia: 'MES 1' })] });
    expect((await registro(cnpj)).nome_fantasia).toBe('MES 1');

    let terminou = false;
    const importacao = importarCnpj(dir).finally(() => (terminou = true));
    const respostas: { status: number; nome?: string; socios?: number; durante: boolean }[] = [];
    while (!terminou) {
      const res = await buscar(cnpj);
      respostas.push({ status: res.status, nome: res.body?.nome_fantasia, socios: res.body?.socios?.length, durante: !terminou });
    }
    await importacao;
    const res = await buscar(cnpj);
    respostas.push({ status: res.status, nome: res.body?.nome_fantasia, socios: res.body?.socios?.length, durante: false });

    expect(respostas.filter((r) => r.status !== 200)).toEqual([]);
    const nomes = respostas.map((r) => r.nome);
    // old answers, then new ones: once the new month shows, the old one never comes back
    const primeiraNova = nomes.indexOf('MES 2');
    expect(primeiraNova).toBeGreaterThan(0);
    expect(nomes.slice(0, primeiraNova).every((n) => n === 'MES 1')).toBe(true);
    expect(nomes.slice(primeiraNova).every((n) => n === 'MES 2')).toBe(true);
    // the import took long enough that several lookups happened during it, answered from the old month
    expect(respostas.filter((r) => r.durante && r.nome === 'MES 1').length).toBeGreaterThanOrEqual(3);
    expect(respostas.at(-1)).toEqual({ status: 200, nome: 'MES 2', socios: 1, durante: false });
  });

  test("a newer version's migration of the live tables during the import is not undone: the swap waits for it, then stops, the month not swapped in", async () => {
    const { cnpj, dir } = await mesVivoEOProximo();
    // a migration under way: its lock held, as lib/database.ts migrar holds it
    const migracao = await novaConexao('leads');
    try {
      await migracao.query('SELECT GET_LOCK(?, 0)', [travaDaMigracao('leads')]);
      const importacao = importarCnpj(dir).then(
        () => 'swapped',
        (err: Error) => err.message,
      );
      await esperarOutraConexao(migracao, 'the swap waiting for the migration', [`SELECT GET_LOCK('${travaDaMigracao('leads')}'%`], 1, 60_000);
      await migracao.query('ALTER TABLE estabelecimento ADD INDEX estabelecimento_teste_migracao (cep, cnpj)');
      await migracao.query('SELECT RELEASE_LOCK(?)', [travaDaMigracao('leads')]);
      expect(await importacao).toMatch(/estabelecimento mudou durante a importação/);
      // the migration's index is still on the live table
      const [indices] = await migracao.query("SHOW INDEX FROM estabelecimento WHERE Key_name = 'estabelecimento_teste_migracao'");
      expect((indices as unknown[]).length).toBeGreaterThan(0);
    } finally {
      await migracao.query('ALTER TABLE estabelecimento DROP INDEX IF EXISTS estabelecimento_teste_migracao').catch(() => undefined);
      await migracao.end();
    }
    expect((await registro(cnpj)).nome_fantasia).toBe('MES 1');
    expect(await tabelasDeTrabalho()).toEqual([]);
    // the next import swaps in
    await importarCnpj(dir);
    expect((await registro(cnpj)).nome_fantasia).toBe('MES 2');
  });

  test('a read holding the live table past one wait of the swap: the swap tries again, and the new month goes live', async () => {
    const { cnpj, dir } = await mesVivoEOProximo();
    const leitor = await leituraPresa();
    const importacao = importarCnpj(dir);
    // held past the 2 s the swap waits each time
    await esperarOutraConexao(leitor, 'the swap waiting', ['RENAME TABLE%']);
    await dormir(3000);
    expect((await registro(cnpj)).nome_fantasia).toBe('MES 1');
    await leitor.query('UNLOCK TABLES');
    await leitor.end();
    await importacao;
    expect((await registro(cnpj)).nome_fantasia).toBe('MES 2');
    expect(await tabelasDeTrabalho()).toEqual([]);
  });

  test('a shutdown while the swap waits for reads: the attempt under way ends, then the import fails, saying so, instead of waiting minutes; the live data stays', async () => {
    const { cnpj, dir } = await mesVivoEOProximo();
    // a hold no stop of long reads can lift: the swap waits as long as it lasts
    const leitor = await leituraPresa();
    const parar = new AbortController();
    try {
      const importacao = recusa(() => importarCnpj(dir, undefined, parar.signal));
      await esperarOutraConexao(leitor, 'the swap waiting', ['RENAME TABLE%']);
      const inicio = Date.now();
      parar.abort();
      expect(await importacao).toEqual({ tipo: expect.any(String), mensagem: expect.stringMatching(/interrompida/) });
      // the attempt under way, waiting 2 s at most, and the clean-up (of 60 attempts, minutes)
      expect(Date.now() - inicio).toBeLessThan(5000);
    } finally {
      await leitor.query('UNLOCK TABLES');
      await leitor.end();
    }
    expect((await registro(cnpj)).nome_fantasia).toBe('MES 1');
    expect(await tabelasDeTrabalho()).toEqual([]);
    expect(await sql('SELECT situacao FROM importacao WHERE diretorio = ? ORDER BY iniciada_em DESC LIMIT 1', [dir])).toEqual([{ situacao: 'falhou' }]);
  });

  test('reads that keep the live table past a third of the swap\'s attempts are stopped: the new month goes live instead of the import failing', async () => {
    const { cnpj, dir } = await mesVivoEOProximo();
    const antes = { ...TROCA_DAS_TABELAS };
    Object.assign(TROCA_DAS_TABELAS, { tentativas: 3, interromperLeiturasApos: 1 });
    // a listing's read that outlasts every wait of the swap (each attempt waits 2 s)
    const leitor = await novaConexao('leads');
    const leitura = leitor.query('SELECT SLEEP(60) FROM estabelecimento LIMIT 1').then(
      () => 'ended',
      (err: Error) => err.message,
    );
    // a long statement that reads none of the swapped tables is left alone
    const outro = await novaConexao('leads');
    const alheia = outro.query('SELECT SLEEP(6) AS espera').then(
      () => 'ended',
      (err: Error) => err.message,
    );
    try {
      await importarCnpj(dir);
      expect((await registro(cnpj)).nome_fantasia).toBe('MES 2');
      expect(await leitura).not.toBe('ended');
      expect(await alheia).toBe('ended');
      expect(await tabelasDeTrabalho()).toEqual([]);
    } finally {
      Object.assign(TROCA_DAS_TABELAS, antes);
      await outro.end().catch(() => undefined);
      await leitor.query('DO 1').catch(() => undefined);
      await leitor.end();
    }
  }, 60_000);

  test('a zip that holds no file fails the import and changes nothing: the live table is not replaced by an empty one', async () => {
    const cnpj = novoCnpj();
    await importarMes(dois(cnpj, 'MES 1'));
    const antes = await registro(cnpj);
    const dir = await diretorioDoMes(dois(cnpj, 'MES 2'));
    // a zip with no entry: its end-of-directory record alone
    writeFileSync(path.join(dir, 'Simples.zip'), Buffer.concat([Buffer.from('PK\u0005\u0006', 'latin1'), Buffer.alloc(18)]));
    const erro = await recusa(() => importarCnpj(dir));
    expect(erro.mensagem).toBe('Simples.zip holds no file: nothing was changed');
    expect(await registro(cnpj)).toEqual(antes);
    expect(await tabelasDeTrabalho()).toEqual([]);
  });

  test('a file that holds no line (empty, or blank lines only), even one part of several, fails the import and changes nothing', async () => {
    const cnpj = novoCnpj();
    await importarMes(dois(cnpj, 'MES 1'));
    const antes = await registro(cnpj);
    for (const [nome, linhas] of [
      ['Socios0', ''],
      ['Estabelecimentos1', '\r\n\n  \n'],
    ]) {
      const dir = await diretorioDoMes(dois(cnpj, 'MES 2'));
      await escreverZipsDaReceita(dir, { [nome]: { linhas } });
      const erro = await recusa(() => importarCnpj(dir));
      expect(erro.mensagem).toBe(`${nome}.zip holds no line: nothing was changed`);
      expect(await registro(cnpj)).toEqual(antes);
      expect(await tabelasDeTrabalho()).toEqual([]);
    }
    // a part whose every line an earlier part already holds (the same key) loads none, and is no empty file
    const mes = dois(cnpj, 'MES 2');
    const dir = await diretorioDoMes(mes);
    await escreverZipsDaReceita(dir, { Estabelecimentos1: { linhas: mes.estabelecimentos } });
    await importarCnpj(dir);
    expect((await registro(cnpj)).nome_fantasia).toBe('MES 2');
  });

  test("a file in another layout (another kind's lines under its name, another separator) fails the import and changes nothing; a few lines out of place are loaded", async () => {
    const cnpj = novoCnpj();
    await importarMes(dois(cnpj, 'MES 1'));
    const antes = await registro(cnpj);
    const mes = dois(cnpj, 'MES 2');
    for (const [nome, linhas, tabela, campos] of [
      // every line dropped (no well-formed CNPJ in its place): the live table would have gone empty
      ['Estabelecimentos0', csvDaReceita(mes.empresas), 'estabelecimento', 30],
      // loaded as garbage under the first field
      ['Socios0', csvDaReceita(mes.socios).replaceAll('";"', '","'), 'socio', 11],
    ] as const) {
      const dir = await diretorioDoMes(mes);
      await escreverZipsDaReceita(dir, { [nome]: { linhas } });
      const erro = await recusa(() => importarCnpj(dir));
      const n = nome === 'Socios0' ? 2 : 1;
      expect(erro.mensagem).toBe(`${nome}.zip: ${n} of ${n} lines are not in the layout of ${tabela} (${campos} fields separated by ";"): nothing was changed`);
      expect(await registro(cnpj)).toEqual(antes);
      expect(await tabelasDeTrabalho()).toEqual([]);
    }
    // one line of three out of place (two fields too many): the month loads, that line as well as the database can
    const dir = await diretorioDoMes({ ...mes, socios: [...mes.socios, [...mes.socios[0], 'A MAIS', 'OUTRO']] });
    await importarCnpj(dir);
    expect((await registro(cnpj)).nome_fantasia).toBe('MES 2');
  });

  test("a previous run's work table still held in the database (its worker killed mid index build): the import fails within its wait, saying so, and changes nothing; once free, the next one imports", async () => {
    const { cnpj, dir } = await mesVivoEOProximo();
    const sobra = await sobraPresa();
    const espera = ESPERA_PELAS_SOBRAS.segundos;
    ESPERA_PELAS_SOBRAS.segundos = 1;
    try {
      const inicio = Date.now();
      const erro = await recusa(() => importarCnpj(dir));
      expect(erro.mensagem).toContain('still in use');
      // its one-second wait, and the clean-up's two: not the server's day
      expect(Date.now() - inicio).toBeLessThan(8_000);
      expect((await registro(cnpj)).nome_fantasia).toBe('MES 1');
      expect(await sql('SELECT situacao FROM importacao WHERE diretorio = ?', [dir])).toEqual([{ situacao: 'falhou' }]);
      await sobra.query('UNLOCK TABLES');
    } finally {
      ESPERA_PELAS_SOBRAS.segundos = espera;
      await sobra.end();
    }
    await importarCnpj(dir);
    expect((await registro(cnpj)).nome_fantasia).toBe('MES 2');
    expect(await tabelasDeTrabalho()).toEqual([]);
  });

  test('a failed import (a corrupt zip) leaves the previous data intact and no work tables behind', async () => {
    const cnpj = novoCnpj();
    await importarMes(dois(cnpj, 'MES 1'));
    const antes = await registro(cnpj);

    const dir = await diretorioDoMes(dois(cnpj, 'MES 2'));
    writeFileSync(path.join(dir, 'Empresas0.zip'), Buffer.from('PK\u0003\u0004 isto não é um zip de verdade'));
    const erro = await recusa(() => importarCnpj(dir));
    expect(erro.tipo).not.toBe('conflito');
    // the operator is told which of the month's zips to download again
    expect(erro.mensagem).toMatch(/^Empresas0\.zip: /);

    expect(await registro(cnpj)).toEqual(antes);
    expect(await tabelasDeTrabalho()).toEqual([]);
    expect(await sql('SELECT situacao FROM importacao WHERE diretorio = ?', [dir])).toEqual([{ situacao: 'falhou' }]);

    // a zip cut in half (an interrupted download) fails the same way
    const cortado = await diretorioDoMes(dois(cnpj, 'MES 3'));
    const inteiro = readFileSync(path.join(cortado, 'Estabelecimentos0.zip'));
    writeFileSync(path.join(cortado, 'Estabelecimentos0.zip'), inteiro.subarray(0, Math.floor(inteiro.length / 2)));
    await recusa(() => importarCnpj(cortado));
    expect(await registro(cnpj)).toEqual(antes);
    expect(await tabelasDeTrabalho()).toEqual([]);

    // a zip whose directory is damaged past its end record: it fails the same way and stays not open
    const danificado = await diretorioDoMes(dois(cnpj, 'MES 3'));
    const zip = path.join(danificado, 'Empresas0.zip');
    const bytes = readFileSync(zip);
    bytes.writeUInt32LE(0x09090909, bytes.indexOf(Buffer.from([0x50, 0x4b, 0x01, 0x02])));
    writeFileSync(zip, bytes);
    await recusa(() => importarCnpj(danificado));
    expect(await registro(cnpj)).toEqual(antes);
    expect(await tabelasDeTrabalho()).toEqual([]);
    expect(abertosPorEstaProcesso(zip)).toEqual([]);

    // and the next good month imports normally
    await importarMes(dois(cnpj, 'MES 4'));
    expect((await registro(cnpj)).nome_fantasia).toBe('MES 4');
  });

  test('a failure cuts the loads still in flight instead of waiting for them: a large file in progress is not loaded to its end', async () => {
    const { dir: grande } = await mesGrande();
    const dir = dirs.novo();
    for (const nome of readdirSync(grande)) copyFileSync(path.join(grande, nome), path.join(dir, nome));
    // a part that fails as soon as it is opened: of another kind, which loads beside the
    // establishments (a second part of theirs would wait for the first)
    writeFileSync(path.join(dir, 'Socios1.zip'), Buffer.from('PK\u0003\u0004 isto não é um zip de verdade'));
    // the lines each file's cleaning read on their way to the database (this process's own: a
    // server-wide count of rows written took in what the other test files wrote meanwhile)
    const limpezas = new Set<receita.LimpezaDeCampos>();
    const transformar = receita.LimpezaDeCampos.prototype._transform;
    const lidas = () => Math.max(0, ...[...limpezas].map((l) => l.linhasLidas));
    const limpeza = jest.spyOn(receita.LimpezaDeCampos.prototype, '_transform').mockImplementation(function (this: receita.LimpezaDeCampos, ...args) {
      limpezas.add(this);
      return transformar.apply(this, args);
    });
    // the failing part opened once the establishments' load is well under way (2,000 of its 40,000
    // lines read): loads start four at a time, the largest first, and it failed before that load
    // had read a line (bounded well within the test's time-out, so the spies are always restored)
    const abrir = receita.entradasDoZip;
    const abertura = jest.spyOn(receita, 'entradasDoZip').mockImplementation(async (caminho) => {
      if (caminho.endsWith('Socios1.zip')) await esperarAte(async () => lidas() >= 2_000, 'the establishments loading', 10_000);
      return abrir(caminho);
    });
    try {
      expect((await recusa(() => importarCnpj(dir))).mensagem).toContain('Socios1.zip');
    } finally {
      limpeza.mockRestore();
      abertura.mockRestore();
    }
    // cut in flight: loaded to its end, it would have read all 40,000 (every line it loads is read first)
    expect(lidas()).toBeGreaterThanOrEqual(2_000);
    expect(lidas()).toBeLessThan(20_000);
    expect(await tabelasDeTrabalho()).toEqual([]);
    expect(await sql('SELECT situacao FROM importacao WHERE diretorio = ?', [dir])).toEqual([{ situacao: 'falhou' }]);
  });

  test('a shutdown (the worker\'s abort signal) cuts the import under way: it fails, saying so, and the live data stays', async () => {
    const cnpj = novoCnpj();
    await importarMes(dois(cnpj, 'MES 1'));
    const { dir } = await mesGrande();
    const olho = await novaConexao('leads');
    const parar = new AbortController();
    try {
      const importacao = recusa(() => importarCnpj(dir, undefined, parar.signal));
      await esperarOutraConexao(olho, 'the load under way', ['LOAD DATA%']);
      parar.abort();
      expect(await importacao).toEqual({ tipo: expect.any(String), mensagem: expect.stringMatching(/interrompida/) });
    } finally {
      await olho.end();
    }
    expect((await registro(cnpj)).nome_fantasia).toBe('MES 1');
    expect(await tabelasDeTrabalho()).toEqual([]);
    expect(await sql('SELECT situacao FROM importacao WHERE diretorio = ? ORDER BY iniciada_em DESC LIMIT 1', [dir])).toEqual([{ situacao: 'falhou' }]);
  });

  test('work tables a run cut short left behind are dropped by the next import, even of kinds it does not bring', async () => {
    await banco('leads').query('CREATE TABLE socio_nova LIKE socio');
    await banco('leads').query('CREATE TABLE simples_antiga LIKE simples');
    expect((await tabelasDeTrabalho()).sort()).toEqual(['simples_antiga', 'socio_nova']);
    const dir = dirs.novo();
    await escreverZipsDaReceita(dir, { Estabelecimentos0: { linhas: [linhaDeEstabelecimento({ cnpj: novoCnpj() })] } });
    await importarCnpj(dir);
    expect(await tabelasDeTrabalho()).toEqual([]);
  });

  test('once the new month is live, a failing tidy-up step neither fails the import nor keeps last month\'s counts', async () => {
    const cnpj = novoCnpj();
    await importarMes(dois(cnpj, 'MES 1'));
    const token = await identityDe(suite.url.identity).admin();
    const total = async () => (await api.get('/api/empresas', { token, query: { uf: 'SP' } })).body.total;
    const antes = await total();
    // the record of the run refuses to be marked done
    await banco('leads').query(`CREATE TRIGGER importacao_recusa BEFORE UPDATE ON importacao FOR EACH ROW
      IF NEW.situacao = 'concluida' THEN SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'recusada'; END IF`);
    try {
      const m2 = dois(cnpj, 'MES 2');
      await importarMes({ ...m2, estabelecimentos: [...m2.estabelecimentos, linhaDeEstabelecimento({ cnpj: novoCnpj(), uf: 'SP' })] });
    } finally {
      await banco('leads').query('DROP TRIGGER importacao_recusa');
    }
    expect((await registro(cnpj)).nome_fantasia).toBe('MES 2');
    expect(await total()).not.toBe(antes);
    expect(await tabelasDeTrabalho()).toEqual([]);
  });

  test('a run that dies right after its swap: other processes still stop serving last month\'s counts, within VALIDADE_DA_GERACAO_MS', async () => {
    const cnpj = novoCnpj();
    await importarMes(dois(cnpj, 'MES 1'));
    const token = await identityDe(suite.url.identity).admin();
    const total = async () => (await api.get('/api/empresas', { token, query: { uf: 'SP' } })).body.total;
    const antes = await total();
    // the first step after the swap throws: nothing of the tidy-up runs, as if the process had been
    // killed there (this process then reads the generation as another one would)
    const morte = jest.spyOn(geracao, 'esquecerGeracao').mockImplementation(() => {
      throw new Error('processo encerrado');
    });
    try {
      const m2 = dois(cnpj, 'MES 2');
      const dir = await diretorioDoMes({ ...m2, estabelecimentos: [...m2.estabelecimentos, linhaDeEstabelecimento({ cnpj: novoCnpj(), uf: 'SP' })] });
      await expect(importarCnpj(dir)).rejects.toThrow('processo encerrado');
    } finally {
      morte.mockRestore();
    }
    const [morta] = await sql<{ id: string; situacao: string }>('SELECT id, situacao FROM importacao ORDER BY iniciada_em DESC LIMIT 1');
    expect(morta.situacao).toBe('em_andamento');
    await dormir(VALIDADE_DA_GERACAO_MS);
    expect(await total()).toBe(antes + 1);
    // the next import drops what the tidy-up would have, and records the dead run as what it was:
    // its month went live, so it is no run cut short
    await importarMes(dois(cnpj, 'MES 3'));
    expect(await tabelasDeTrabalho()).toEqual([]);
    expect(await sql('SELECT situacao FROM importacao WHERE id = ?', [morta.id])).toEqual([{ situacao: 'concluida' }]);
  });

  test("another process serves a new month's code descriptions with its rows, within VALIDADE_DA_GERACAO_MS of the swap", async () => {
    const cnpj = novoCnpj();
    await importarMes({ estabelecimentos: [linhaDeEstabelecimento({ cnpj, cnae_fiscal_principal: '6204000' })] });
    expect((await registro(cnpj)).cnae_fiscal_principal_descricao).toBe(CODIGOS_PADRAO.cnaes['6204000']);
    // the swap as another process's import makes it: the table and the generation change, and this
    // process is not told
    await banco('leads').query("UPDATE cnae SET descricao = 'CONSULTORIA (MES 2)' WHERE codigo = '6204000'");
    await banco('leads').query(`UPDATE ${geracao.TABELA_DA_GERACAO} SET geracao = UUID() WHERE id = 1`);
    await dormir(VALIDADE_DA_GERACAO_MS);
    expect((await registro(cnpj)).cnae_fiscal_principal_descricao).toBe('CONSULTORIA (MES 2)');
  });

  test('a month missing a numbered part (a failed download) is refused, naming the part, and the data stays', async () => {
    const cnpj = novoCnpj();
    await importarMes(dois(cnpj, 'MES 1'));
    const dir = dirs.novo();
    await escreverZipsDaReceita(dir, {
      Estabelecimentos0: { linhas: [linhaDeEstabelecimento({ cnpj: novoCnpj() })] },
      Estabelecimentos2: { linhas: [linhaDeEstabelecimento({ cnpj: novoCnpj() })] },
      Empresas1: { linhas: [linhaDeEmpresa({ cnpj_basico: basico(cnpj), razao_social: 'OUTRA' })] },
      Socios0: { linhas: [] },
    });
    expect(await recusa(() => importarCnpj(dir))).toEqual({
      tipo: 'dados_invalidos',
      mensagem: expect.stringMatching(/Faltam partes.*Empresas0\.zip, Estabelecimentos1\.zip\. Nada foi importado/),
    });
    expect(await registro(cnpj)).toMatchObject({ nome_fantasia: 'MES 1', empresa_razao_social: 'EMPRESA MES 1' });
    expect(await tabelasDeTrabalho()).toEqual([]);
    expect(partesQueFaltam(['Socios0.zip', 'Socios1.zip', 'Simples.zip', 'Cnaes.zip', 'socios3.zip'])).toEqual(['Socios2.zip']);
    // parts load by their number: of a key repeated across them the first loaded is kept
    expect(emOrdemDasPartes(['Estabelecimentos10.zip', 'Empresas1.zip', 'Estabelecimentos2.zip', 'Estabelecimentos1.zip', 'Cnaes.zip'])).toEqual([
      'Cnaes.zip',
      'Empresas1.zip',
      'Estabelecimentos1.zip',
      'Estabelecimentos2.zip',
      'Estabelecimentos10.zip',
    ]);
    // a stray name does not make millions of names
    const estranha = partesQueFaltam(['Empresas0.zip', 'Empresas5.zip', 'Empresas20260101.zip']);
    expect(estranha).toEqual([...[1, 2, 3, 4, 6, 7, 8, 9, 10, 11].map((n) => `Empresas${n}.zip`), 'mais 20260089 de Empresas']);
  });

  test('a directory without Estabelecimentos*.zip is refused with a clear error, and the data stays', async () => {
    const cnpj = novoCnpj();
    await importarMes(dois(cnpj, 'MES 1'));
    const dir = dirs.novo();
    await escreverZipsDaReceita(dir, { Empresas0: { linhas: [linhaDeEmpresa({ cnpj_basico: basico(cnpj), razao_social: 'OUTRA' })] } });
    writeFileSync(path.join(dir, 'estabelecimentos.csv'), 'not a zip');

    expect(await recusa(() => importarCnpj(dir))).toEqual({ tipo: 'dados_invalidos', mensagem: expect.stringMatching(/Estabelecimentos\*?\.zip/) });
    // the same through the queue, as `suite import-cnpj <dir>` runs it
    await expect(importarCnpjPelaFila(dir, () => undefined)).rejects.toThrow(/Estabelecimentos/);
    await expect(importarCnpjPelaFila(path.join(dir, 'nao-existe'), () => undefined)).rejects.toThrow(/no such directory/);
    expect(await registro(cnpj)).toMatchObject({ nome_fantasia: 'MES 1', empresa_razao_social: 'EMPRESA MES 1' });
  });

  test('suite import-cnpj where Redis refuses CLIENT LIST (left out of an ACL): the import runs instead of failing, the command taking the queue as one no worker serves', async () => {
    const { dir, cnpj } = await mesGrande();
    const recusa = jest.spyOn(Queue.prototype, 'getWorkersCount').mockRejectedValue(new Error("NOPERM User suite has no permissions to run the 'client|list' command"));
    try {
      const r = (await importarCnpjPelaFila(dir, () => undefined)) as { linhas: Record<string, number> };
      expect(r.linhas.estabelecimento).toBeGreaterThan(0);
      expect(recusa).toHaveBeenCalled();
    } finally {
      recusa.mockRestore();
    }
    expect((await registro(cnpj)).cnpj).toBe(cnpj);
  });

  test('two imports at the same time: the second is refused (409 conflict) while the first goes on to the end', async () => {
    const { dir, cnpj } = await mesGrande();
    const outro = novoCnpj();
    const primeira = importarCnpj(dir);
    const em = await (async () => {
      for (let i = 0; i < 500; i++) {
        if ((await sql('SELECT id FROM importacao WHERE diretorio = ? AND situacao = ?', [dir, 'em_andamento'])).length) return true;
        await new Promise((r) => setTimeout(r, 10));
      }
      return false;
    })();
    expect(em).toBe(true);

    const segunda = await recusa(async () => importarCnpj(await diretorioDoMes({ estabelecimentos: [linhaDeEstabelecimento({ cnpj: outro })] })));
    expect(segunda).toEqual({ tipo: 'conflito', mensagem: expect.stringMatching(/andamento/) });

    await primeira;
    expect((await registro(cnpj)).nome_fantasia).toBe('MES 2');
    expect((await buscar(outro)).status).toBe(404);
    // the lock is released: the next import runs
    await importarMes({ estabelecimentos: [linhaDeEstabelecimento({ cnpj: outro })] });
    await registro(outro);
  });
});

// ---------------------------------------------------------------------------------------------

describe('the import as a queue job, with progress (DESIGN §6 and §8)', () => {
  test('`suite import-cnpj <dir>` (importarCnpjPelaFila) passes progress on: phases in order, percent never going back, ending at 100', async () => {
    const cnpj = novoCnpj();
    const dir = await diretorioDoMes({ estabelecimentos: [linhaDeEstabelecimento({ cnpj })] });
    const progresso: Progresso[] = [];
    const resultado = (await importarCnpjPelaFila(dir, (p) => progresso.push(p as Progresso))) as { linhas: Record<string, number> };

    expect(resultado.linhas.estabelecimento).toBe(1);
    await registro(cnpj);
    expect(progresso.at(-1)).toMatchObject({ fase: 'concluida', percentual: 100 });
    const percentuais = progresso.map((p) => p.percentual);
    expect(percentuais).toEqual([...percentuais].sort((a, b) => a - b));
    expect(percentuais.every((p) => p >= 0 && p <= 100)).toBe(true);
    // loading, then indexing (the kinds loaded side by side: loading while any of them still is), the swap, the end: never back
    const ordem = ['carregando', 'indexando', 'trocando', 'concluida'];
    const fases = progresso.map((p) => ordem.indexOf(p.fase));
    expect(fases).toEqual([...fases].sort((a, b) => a - b));
    expect(new Set(fases)).toEqual(new Set([0, 1, 2, 3]));
    // a table named while it is indexed (other kinds may still load meanwhile), a file only while files are read
    expect(progresso.flatMap((p) => p.indexando ?? [])).toContain('estabelecimento');
    expect(progresso.filter((p) => p.fase !== 'carregando').every((p) => p.arquivo === undefined)).toBe(true);
  });

  test('a long step tells its progress again every PULSO.ms, its seconds moving: a wait for a previous run\'s leftovers shows alive', async () => {
    const dir = await diretorioDoMes({ estabelecimentos: [linhaDeEstabelecimento({ cnpj: novoCnpj() })] });
    const progresso: Progresso[] = [];
    // the import waits for it
    const sobra = await sobraPresa();
    const pulso = PULSO.ms;
    PULSO.ms = 100;
    try {
      const importacao = importarCnpj(dir, (p) => progresso.push(p));
      await esperarAte(() => progresso.some((p) => p.segundos >= 2), 'two seconds of waiting told');
      const enquantoEspera = [...progresso];
      await sobra.query('UNLOCK TABLES');
      await importacao;
      // told again and again while nothing moved: the same phase and percent, the seconds going on
      expect(enquantoEspera.length).toBeGreaterThanOrEqual(5);
      expect(enquantoEspera.every((p) => p.fase === 'carregando' && p.percentual === 0)).toBe(true);
      const segundos = enquantoEspera.map((p) => p.segundos);
      expect(segundos).toEqual([...segundos].sort((a, b) => a - b));
      expect(new Set(segundos).size).toBeGreaterThanOrEqual(2);
    } finally {
      PULSO.ms = pulso;
      await sobra.end();
    }
  });

  test('a job added to the queue runs on the workers; its progress stays on the job, at 100 when done, and its result counts the rows', async () => {
    const cnpj = novoCnpj();
    const dir = await diretorioDoMes({
      estabelecimentos: [linhaDeEstabelecimento({ cnpj }), linhaDeEstabelecimento()],
      empresas: [linhaDeEmpresa({ cnpj_basico: basico(cnpj) })],
      socios: [linhaDeSocio({ cnpj_basico: basico(cnpj) })],
    });
    const eventos = eventosDaFila(filaLeadsImportacao);
    await eventos.waitUntilReady();
    const job = await enfileirarImportacao(dir);
    const vistos: unknown[] = [];
    const ouvir = ({ jobId, data }: { jobId: string; data: unknown }) => jobId === job.id && vistos.push(data);
    eventos.on('progress', ouvir);
    try {
      await job.waitUntilFinished(eventos, 60_000);
    } finally {
      eventos.off('progress', ouvir);
    }

    const feito = await fila(filaLeadsImportacao).getJob(job.id!);
    expect(await feito!.getState()).toBe('completed');
    expect(feito!.progress).toMatchObject({ fase: 'concluida', percentual: 100 });
    expect(feito!.returnvalue).toMatchObject({ linhas: { estabelecimento: 2, empresa: 1, socio: 1 } });
    await registro(cnpj);
    expect(vistos.length).toBeGreaterThanOrEqual(2);
    expect(vistos.at(-1)).toMatchObject({ fase: 'concluida', percentual: 100 });
  });

  test('a finished import job retried from the dashboard fails at once, saying why, and imports nothing: its month may be older than one imported since', async () => {
    const cnpj = novoCnpj();
    const antigo = await diretorioDoMes({ estabelecimentos: [linhaDeEstabelecimento({ cnpj, nome_fantasia: 'MES ANTIGO' })] });
    const eventos = eventosDaFila(filaLeadsImportacao);
    await eventos.waitUntilReady();
    const q = fila(filaLeadsImportacao);
    const job = await enfileirarImportacao(antigo);
    await job.waitUntilFinished(eventos, 60_000);
    // a newer month imported since
    await importarCnpjPelaFila(await diretorioDoMes({ estabelecimentos: [linhaDeEstabelecimento({ cnpj, nome_fantasia: 'MES NOVO' })] }), () => undefined);
    const antes = await importacoes();

    await (await q.getJob(job.id!))!.retry('completed');
    await esperarAte(async () => (await q.getJob(job.id!))!.getState().then((e) => e === 'failed'), 'the retried job failed', 30_000);
    const repetido = await q.getJob(job.id!);
    expect(repetido!.failedReason).toMatch(/já rodou.*import-cnpj/);
    expect(await importacoes()).toBe(antes);
    expect((await registro(cnpj)).nome_fantasia).toBe('MES NOVO');
  });

  test('a copy of an import job (the dashboard\'s duplicate or add) fails at once, saying why, and imports nothing', async () => {
    const cnpj = novoCnpj();
    const mes = await diretorioDoMes({ estabelecimentos: [linhaDeEstabelecimento({ cnpj, nome_fantasia: 'MES COPIADO' })] });
    const eventos = eventosDaFila(filaLeadsImportacao);
    await eventos.waitUntilReady();
    const antes = await importacoes();
    // what the dashboard's duplicate makes: a job's data (its pedido, its id) under a new id
    const copia = await fila(filaLeadsImportacao).add('importar', { diretorio: mes, pedido: randomUUID() });
    await expect(copia.waitUntilFinished(eventos, 30_000)).rejects.toThrow(/não foi criado por suite import-cnpj/);
    // and a job added by hand with a directory alone
    const aMao = await fila(filaLeadsImportacao).add('importar', { diretorio: mes });
    await expect(aMao.waitUntilFinished(eventos, 30_000)).rejects.toThrow(/não foi criado por suite import-cnpj/);
    expect(await importacoes()).toBe(antes);
    expect((await buscar(cnpj)).status).toBe(404);
  });

  test('a job on a directory it cannot import fails once (no retry), with the reason on the job', async () => {
    const dir = dirs.novo();
    const eventos = eventosDaFila(filaLeadsImportacao);
    await eventos.waitUntilReady();
    const job = await enfileirarImportacao(dir);
    await expect(job.waitUntilFinished(eventos, 30_000)).rejects.toThrow(/Estabelecimentos/);
    const falho = await fila(filaLeadsImportacao).getJob(job.id!);
    expect(await falho!.getState()).toBe('failed');
    expect(falho!.attemptsMade).toBe(1);
    expect(falho!.failedReason).toMatch(/Estabelecimentos/);
  });
});
