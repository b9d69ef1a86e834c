import { digitosVerificadores, normalizarCnpj } from '../../api/shared/cnpj';
import { descricao, DESCRICOES } from '../../api/leads/cnpj';
import { importarCnpj } from '../../api/leads/importacao';
import { ErroDeDominio } from '../../api/shared/errors';
import { cliente, esperarProblema } from '../helpers/http';
import { iniciarSuite, SuiteDeTeste } from '../helpers/suite';
import {
  CAMPOS_DO_CNPJ,
  CAMPOS_DO_SOCIO,
  CAMPOS_OPCIONAIS_DO_CNPJ,
  cnpjValido,
  comDvErrado,
  comMascara,
  diretorios,
  dvDoCnpj,
  escreverMes,
  linhaDeEmpresa,
  linhaDeEstabelecimento,
  linhaDeSocio,
  linhaDoSimples,
  novoCnpj,
} from './apoio';

/**
 * GET /api/cnpj/{cnpj} (SPEC 4.2, SPEC §2 Establishment; DESIGN §4 and §6): public, the CNPJ with
 * or without its mask, exactly 14 characters, check digits verified (400 otherwise), 404 when the
 * registry has no such establishment, the full record in the shape of SPEC §2. The rate limit has
 * its own file (cnpj-limite.test.ts); here it is set out of reach.
 */

let suite: SuiteDeTeste;
let api: ReturnType<typeof cliente>;
const dirs = diretorios();

/** Real companies (SOURCE.md) and the Receita's own alphanumeric example (IN RFB 2.229/2024). */
const SERPRO = '33683111000280';
const BANCO_DO_BRASIL = '00000000000191';
const ALFANUMERICO = '12ABC34501DE35';
/** Every column of every file filled, for the shape tests. */
const COMPLETO = cnpjValido('987654320001');
/** Only the columns no establishment goes without. */
const ESPARSO = novoCnpj('0001');
/** Partners whose file repeats a line whole. */
const COM_REPETIDOS = cnpjValido('876543210001');

const CODIGOS = {
  cnaes: { '6204000': 'Consultoria em tecnologia da informação', '6201501': 'Desenvolvimento de programas de computador sob encomenda' },
  motivos: { '00': 'SEM MOTIVO', '01': 'EXTINCAO POR ENCERRAMENTO LIQUIDACAO VOLUNTARIA' },
  municipios: { '9701': 'BRASILIA', '7107': 'SAO PAULO' },
  naturezas: { '2011': 'Empresa Pública', '2062': 'Sociedade Empresária Limitada' },
  paises: { '105': 'BRASIL', '249': 'ESTADOS UNIDOS' },
  qualificacoes: { '05': 'Administrador', '16': 'Presidente', '49': 'Sócio-Administrador' },
};

beforeAll(async () => {
  suite = await iniciarSuite(['identity', 'leads'], { workers: false, env: { LEADS_CNPJ_LIMITE_POR_MINUTO: '100000' } });
  api = cliente(suite.url.leads);
  const b = (cnpj: string) => cnpj.slice(0, 8);
  await importarCnpj(
    await escreverMes(dirs.novo(), {
      ...CODIGOS,
      estabelecimentos: [
        linhaDeEstabelecimento({ cnpj: SERPRO, identificador_matriz_filial: '2', nome_fantasia: 'REGIONAL BRASILIA-DF', municipio: '9701', uf: 'DF' }),
        linhaDeEstabelecimento({ cnpj: BANCO_DO_BRASIL, nome_fantasia: 'DIRECAO GERAL' }),
        linhaDeEstabelecimento({ cnpj: ALFANUMERICO, nome_fantasia: 'ALFANUMERICA' }),
        linhaDeEstabelecimento({
          cnpj: COMPLETO,
          identificador_matriz_filial: '1',
          nome_fantasia: 'COMPLETA',
          situacao_cadastral: '08',
          data_situacao_cadastral: '20230301',
          motivo_situacao_cadastral: '01',
          nome_cidade_exterior: 'MIAMI',
          pais: '249',
          data_inicio_atividade: '20100115',
          cnae_fiscal_principal: '6204000',
          cnae_fiscal_secundaria: '6201501',
          tipo_logradouro: 'AVENIDA',
          logradouro: 'PAULISTA',
          numero: '1000',
          complemento: 'SALA 1',
          bairro: 'BELA VISTA',
          cep: '01310100',
          uf: 'SP',
          municipio: '7107',
          ddd_1: '11',
          telefone_1: '30000001',
          ddd_2: '21',
          telefone_2: '30000002',
          ddd_fax: '31',
          fax: '30000003',
          correio_eletronico: 'contato@completa.test',
          situacao_especial: 'RECUPERACAO JUDICIAL',
          data_situacao_especial: '20220202',
        }),
        linhaDeEstabelecimento({ cnpj: ESPARSO }),
        linhaDeEstabelecimento({ cnpj: COM_REPETIDOS, nome_fantasia: 'COM REPETIDOS' }),
      ],
      empresas: [
        linhaDeEmpresa({ cnpj_basico: b(SERPRO), razao_social: 'SERVICO FEDERAL DE PROCESSAMENTO DE DADOS (SERPRO)', natureza_juridica: '2011', qualificacao_responsavel: '16', capital_social: '1061004829,23', porte_empresa: '05' }),
        linhaDeEmpresa({ cnpj_basico: b(ALFANUMERICO), razao_social: 'ALFA NUMERICA LTDA' }),
        linhaDeEmpresa({
          cnpj_basico: b(COMPLETO),
          razao_social: 'COMPLETA S.A.',
          natureza_juridica: '2011',
          qualificacao_responsavel: '05',
          capital_social: '1500,50',
          porte_empresa: '03',
          ente_federativo_responsavel: 'UNIAO',
        }),
      ],
      socios: [
        linhaDeSocio({ cnpj_basico: b(SERPRO), nome_socio_razao_social: 'WILSON BIANCARDI COURY', qualificacao_socio: '16' }),
        linhaDeSocio({ cnpj_basico: b(SERPRO), nome_socio_razao_social: 'ANDRE DE CESERO', qualificacao_socio: '05' }),
        linhaDeSocio({ cnpj_basico: b(ALFANUMERICO), nome_socio_razao_social: 'ANA ALFA' }),
        // a partner without a name (real months have had some), first in the file
        linhaDeSocio({ cnpj_basico: b(COM_REPETIDOS), nome_socio_razao_social: '', qualificacao_socio: '22' }),
        // a line repeated whole, as real months repeat some; and two of one name that differ
        linhaDeSocio({ cnpj_basico: b(COM_REPETIDOS), nome_socio_razao_social: 'CARLA REPETIDA' }),
        linhaDeSocio({ cnpj_basico: b(COM_REPETIDOS), nome_socio_razao_social: 'BETO BETA', qualificacao_socio: '49' }),
        linhaDeSocio({ cnpj_basico: b(COM_REPETIDOS), nome_socio_razao_social: 'CARLA REPETIDA' }),
        linhaDeSocio({ cnpj_basico: b(COM_REPETIDOS), nome_socio_razao_social: 'BETO BETA', qualificacao_socio: '05' }),
        linhaDeSocio({
          cnpj_basico: b(COMPLETO),
          identificador_socio: '3',
          nome_socio_razao_social: 'JOHN DOE',
          cnpj_cpf_socio: '***999999**',
          qualificacao_socio: '49',
          data_entrada_sociedade: '20150505',
          pais: '249',
          representante_legal: '***111111**',
          nome_representante: 'MARIA PROCURADORA',
          qualificacao_representante: '05',
          faixa_etaria: '5',
        }),
      ],
      simples: [
        linhaDoSimples({ cnpj_basico: b(SERPRO), data_opcao_simples: '20140101' }),
        // a record of neither option (one opted out of both): a record all the same
        linhaDoSimples({
          cnpj_basico: b(BANCO_DO_BRASIL),
          opcao_pelo_simples: 'N',
          data_opcao_simples: '20070701',
          data_exclusao_simples: '20080101',
          opcao_pelo_mei: 'N',
        }),
        linhaDoSimples({
          cnpj_basico: b(COMPLETO),
          opcao_pelo_simples: 'N',
          data_opcao_simples: '20110101',
          data_exclusao_simples: '20120101',
          opcao_pelo_mei: 'S',
          data_opcao_mei: '20130101',
          data_exclusao_mei: '20140101',
        }),
      ],
    }),
  );
});
afterAll(async () => {
  dirs.apagar();
  await suite?.encerrar();
});

const buscar = (cnpj: string) => api.get(`/api/cnpj/${cnpj}`);

describe('check digits: digitosVerificadores and the test helper agree with real CNPJs (SPEC §2 cnpj_dv)', () => {
  test.each([
    ['SERPRO', SERPRO],
    ['Banco do Brasil', BANCO_DO_BRASIL],
    ['the Receita example of an alphanumeric CNPJ', ALFANUMERICO],
  ])('%s: both calculations give its published check digits', (_nome, cnpj) => {
    expect(digitosVerificadores(cnpj.slice(0, 12))).toBe(cnpj.slice(12));
    expect(dvDoCnpj(cnpj.slice(0, 12))).toBe(cnpj.slice(12));
  });

  test('both calculations agree on random numeric and alphanumeric bases', () => {
    const simbolos = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ';
    for (let i = 0; i < 500; i++) {
      const alfabeto = i % 2 ? simbolos : simbolos.slice(0, 10);
      const base = Array.from({ length: 12 }, () => alfabeto[Math.floor(Math.random() * alfabeto.length)]).join('');
      expect([base, digitosVerificadores(base)]).toEqual([base, dvDoCnpj(base)]);
    }
  });
});

describe('normalizarCnpj (SPEC 4.2 rule 1)', () => {
  const motivo = (entrada: string) => {
    try {
      normalizarCnpj(entrada);
    } catch (err) {
      return err instanceof ErroDeDominio ? err.tipo : `not a domain error: ${String(err)}`;
    }
    return 'accepted';
  };

  test('accepts the mask or plain characters and answers the 14 characters, letters upper case', () => {
    expect(normalizarCnpj(SERPRO)).toBe(SERPRO);
    expect(normalizarCnpj(comMascara(SERPRO))).toBe(SERPRO);
    expect(normalizarCnpj('12.abc.345/01de-35')).toBe(ALFANUMERICO);
    expect(normalizarCnpj('12abc34501de35')).toBe(ALFANUMERICO);
  });

  test.each([
    ['13 digits', SERPRO.slice(0, 13)],
    ['15 digits', `${SERPRO}0`],
    ['empty', ''],
    ['only the mask', '../-'],
    ['a masked CNPJ missing its order digits', '33.683.111/-80'],
    ['wrong first check digit', `${SERPRO.slice(0, 12)}${(Number(SERPRO[12]) + 1) % 10}${SERPRO[13]}`],
    ['wrong second check digit', comDvErrado(SERPRO)],
    ['a letter in a check digit position', '12ABC34501DE3A'],
    ['a character that is neither digit, letter nor mask', '3368311100028*'],
    // letters outside A-Z whose upper case is an ASCII letter (ſ → S, ı → I, ﬀ → FF)
    ['a long s (upper case S)', `12ſBC34501DE${digitosVerificadores('12SBC34501DE')}`],
    ['a dotless i (upper case I)', `12ıBC34501DE${digitosVerificadores('12IBC34501DE')}`],
    ['a ligature whose upper case is two letters', `1ﬀBC34501DE${digitosVerificadores('1FFBC34501DE')}`],
    // the one CNPJ of a single repeated character whose check digits work out; the Receita issues none
    ['fourteen zeros', '00000000000000'],
    ['fourteen zeros with the mask', '00.000.000/0000-00'],
  ])('refuses %s as invalid data (400)', (_caso, entrada) => {
    expect(motivo(entrada)).toBe('dados_invalidos');
  });
});

describe('GET /api/cnpj/{cnpj}: what is accepted (SPEC 4.2 rule 1, DESIGN §4 400)', () => {
  test('the route is public: no token, plain 14 digits, answers 200 with the record', async () => {
    const res = await buscar(SERPRO);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ cnpj: SERPRO, cnpj_basico: '33683111', nome_fantasia: 'REGIONAL BRASILIA-DF' });
  });

  test('with the mask NN.NNN.NNN/NNNN-NN (the slash URL-encoded) it answers the same record', async () => {
    const semMascara = await buscar(SERPRO);
    const mascarado = await buscar('33.683.111%2F0002-80');
    expect(mascarado.status).toBe(200);
    expect(mascarado.body).toEqual(semMascara.body);
  });

  test('with the mask and its slash not encoded (two path segments) it answers the same record', async () => {
    const semMascara = await buscar(SERPRO);
    const mascarado = await buscar('33.683.111/0002-80');
    expect(mascarado.status).toBe(200);
    expect(mascarado.body).toEqual(semMascara.body);
  });

  test('a trailing slash, after the plain or the masked CNPJ, is one more mask character', async () => {
    const semMascara = await buscar(SERPRO);
    for (const escrito of [`${SERPRO}/`, '33.683.111/0002-80/']) {
      const res = await buscar(escrito);
      expect({ escrito, status: res.status, corpo: res.body }).toEqual({ escrito, status: 200, corpo: semMascara.body });
    }
    expect((await buscar('/')).status).toBe(400);
  });

  test('a CNPJ starting with zeros keeps them (Banco do Brasil 00.000.000/0001-91)', async () => {
    const res = await buscar(encodeURIComponent(comMascara(BANCO_DO_BRASIL)));
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ cnpj: BANCO_DO_BRASIL, cnpj_basico: '00000000', cnpj_ordem: '0001', cnpj_dv: '91' });
  });

  test('an alphanumeric CNPJ is found whatever the case of its letters, with or without mask', async () => {
    for (const escrito of [ALFANUMERICO, '12abc34501de35', '12.AbC.345%2F01dE-35']) {
      const res = await buscar(escrito);
      expect({ escrito, status: res.status }).toEqual({ escrito, status: 200 });
      expect(res.body).toMatchObject({
        cnpj: ALFANUMERICO,
        cnpj_basico: '12ABC345',
        cnpj_ordem: '01DE',
        cnpj_dv: '35',
        nome_fantasia: 'ALFANUMERICA',
        tem_empresa: true,
        empresa_razao_social: 'ALFA NUMERICA LTDA',
        socios: [expect.objectContaining({ cnpj_basico: '12ABC345', nome_socio_razao_social: 'ANA ALFA' })],
      });
    }
  });

  test.each([
    ['13 digits', SERPRO.slice(0, 13)],
    ['15 digits', `${SERPRO}1`],
    ['14 characters of which 11 are digits', '33.683.111%2F000'],
    ['a blank', '%20'],
    ['only mask characters', '..-'],
    ['a masked CNPJ with a digit missing', '33.683.111%2F0002-8'],
    ['a short path of several segments', '123/45'],
    ['a masked CNPJ with a digit missing and its slash not encoded', '33.683.111/0002-8'],
  ])('not exactly 14 characters once the mask is removed: %s → 400 problem+json', async (_caso, escrito) => {
    const problema = esperarProblema(await buscar(escrito), 400);
    expect(problema.detail).toMatch(/14/);
  });

  test.each([
    ['second check digit', comDvErrado(SERPRO)],
    ['first check digit', `${SERPRO.slice(0, 12)}${(Number(SERPRO[12]) + 1) % 10}${SERPRO[13]}`],
    ['check digits of an alphanumeric CNPJ', '12ABC34501DE53'],
  ])('a wrong %s → 400 problem+json (DESIGN §4: bad CNPJ digits)', async (_caso, escrito) => {
    esperarProblema(await buscar(escrito), 400);
  });

  test.each([
    ['a letter in the check digits', '12ABC34501DE3A'],
    ['letters in both check digits', '12ABC34501DEAB'],
    ['a symbol among the characters', '3368311100028%2A'],
  ])('%s → 400 problem+json: letters are allowed only in the first 12 positions', async (_caso, escrito) => {
    esperarProblema(await buscar(escrito), 400);
  });

  test('a valid CNPJ the registry does not hold → 404 problem+json', async () => {
    const ausente = cnpjValido('112233440001');
    esperarProblema(await buscar(ausente), 404);
    esperarProblema(await buscar(encodeURIComponent(comMascara(ausente))), 404);
    esperarProblema(await buscar(cnpjValido('ZZZZZZZZ0001')), 404);
  });

  test('lookups sent together (read in one statement) each get their own record, partners and all; an unknown one among them gets its 404', async () => {
    const cnpjs = [SERPRO, BANCO_DO_BRASIL, ALFANUMERICO, COMPLETO, ESPARSO];
    const sozinhos = [];
    for (const cnpj of cnpjs) sozinhos.push((await buscar(cnpj)).body);
    expect(sozinhos.map((r) => r.socios.length)).toEqual([2, 0, 1, 1, 0]);
    const ausente = cnpjValido('112233440001');
    // twice each, in another order, with the unknown one in the middle
    const juntos = await Promise.all([...cnpjs, ausente, ...[...cnpjs].reverse()].map((c) => buscar(c)));
    const esperado = [...sozinhos, null, ...[...sozinhos].reverse()];
    expect(juntos.map((r) => (r.status === 200 ? r.body : null))).toEqual(esperado);
    esperarProblema(juntos[5], 404);
  });

  test('a 200 carries Cache-Control (the registry changes once a month)', async () => {
    const res = await buscar(SERPRO);
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toMatch(/max-age=\d+/);
  });

  test('an unknown CNPJ (404) and a malformed one (400) say how long to keep them, as a record does: they change no sooner', async () => {
    const registro = (await buscar(SERPRO)).headers.get('cache-control');
    for (const [escrito, status] of [
      [cnpjValido('112233440001'), 404],
      [comDvErrado(SERPRO), 400],
      ['123', 400],
    ] as const) {
      const res = await buscar(escrito);
      esperarProblema(res, status);
      expect({ escrito, cache: res.headers.get('cache-control') }).toEqual({ escrito, cache: registro });
    }
  });
});

test('tem_simples is true when a Simples/MEI record exists, even one of neither option (SPEC §2)', async () => {
  const res = await buscar(BANCO_DO_BRASIL);
  expect(res.body).toMatchObject({
    tem_simples: true,
    simples_opcao_pelo_simples: 'N',
    simples_opcao_pelo_simples_descricao: 'Não',
    simples_data_opcao_simples: '20070701',
    simples_data_exclusao_simples: '20080101',
    simples_opcao_pelo_mei: 'N',
  });
});

describe('descriptions without a code table come from the layout, code by code (SPEC §2)', () => {
  test.each([
    ['SITUACOES', { '01': 'Nula', '02': 'Ativa', '03': 'Suspensa', '04': 'Inapta', '08': 'Baixada' }],
    ['MATRIZ_FILIAL', { '1': 'Matriz', '2': 'Filial' }],
    ['PORTES', { '00': 'Não informado', '01': 'Microempresa', '03': 'Empresa de Pequeno Porte', '05': 'Demais' }],
    ['SIM_NAO', { S: 'Sim', N: 'Não' }],
    ['IDENTIFICADOR_DE_SOCIO', { '1': 'Pessoa Jurídica', '2': 'Pessoa Física', '3': 'Estrangeiro' }],
  ] as const)('%s', (tabela, esperadas) => {
    for (const [codigo, texto] of Object.entries(esperadas)) expect(descricao(DESCRICOES[tabela], codigo)).toBe(texto);
    // a code outside the layout (real data has them) describes as null, not as an error
    expect(descricao(DESCRICOES[tabela], '99')).toBeNull();
    expect(descricao(DESCRICOES[tabela], null)).toBeNull();
  });
});

describe('the response has exactly the shape of SPEC §2 Establishment (Cnpj)', () => {
  test('every field of SPEC and no other; with every column filled, every optional field is a string', async () => {
    const res = await buscar(COMPLETO);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(CAMPOS_DO_CNPJ);
    for (const campo of CAMPOS_OPCIONAIS_DO_CNPJ) expect({ campo, tipo: typeof res.body[campo] }).toEqual({ campo, tipo: 'string' });
    expect(res.body.tem_empresa).toBe(true);
    expect(res.body.tem_simples).toBe(true);
    expect(res.body.socios).toHaveLength(1);
    const [socio] = res.body.socios;
    expect(Object.keys(socio).sort()).toEqual(CAMPOS_DO_SOCIO);
    for (const [campo, valor] of Object.entries(socio)) expect({ campo, tipo: typeof valor }).toEqual({ campo, tipo: 'string' });
  });

  test('codes and dates are text, leading zeros kept; AAAAMMDD dates; capital with a decimal comma', async () => {
    const { body } = await buscar(COMPLETO);
    expect(body).toMatchObject({
      cnpj: COMPLETO,
      cnpj_basico: COMPLETO.slice(0, 8),
      cnpj_ordem: '0001',
      cnpj_dv: COMPLETO.slice(12),
      identificador_matriz_filial: '1',
      identificador_matriz_filial_descricao: 'Matriz',
      situacao_cadastral: '08',
      situacao_cadastral_descricao: 'Baixada',
      data_situacao_cadastral: '20230301',
      motivo_situacao_cadastral: '01',
      motivo_situacao_cadastral_descricao: 'EXTINCAO POR ENCERRAMENTO LIQUIDACAO VOLUNTARIA',
      situacao_especial: 'RECUPERACAO JUDICIAL',
      data_situacao_especial: '20220202',
      data_inicio_atividade: '20100115',
      cnae_fiscal_principal: '6204000',
      cnae_fiscal_principal_descricao: 'Consultoria em tecnologia da informação',
      cnae_fiscal_secundaria: '6201501',
      cep: '01310100',
      municipio: '7107',
      municipio_descricao: 'SAO PAULO',
      nome_cidade_exterior: 'MIAMI',
      pais: '249',
      pais_descricao: 'ESTADOS UNIDOS',
      ddd_1: '11',
      telefone_1: '30000001',
      ddd_fax: '31',
      fax: '30000003',
      correio_eletronico: 'contato@completa.test',
      empresa_razao_social: 'COMPLETA S.A.',
      empresa_natureza_juridica: '2011',
      empresa_natureza_juridica_descricao: 'Empresa Pública',
      empresa_porte_empresa: '03',
      empresa_porte_empresa_descricao: 'Empresa de Pequeno Porte',
      empresa_capital_social: '1500,50',
      empresa_ente_federativo_responsavel: 'UNIAO',
      empresa_qualificacao_responsavel: '05',
      empresa_qualificacao_responsavel_descricao: 'Administrador',
      simples_opcao_pelo_simples: 'N',
      simples_opcao_pelo_simples_descricao: 'Não',
      simples_data_opcao_simples: '20110101',
      simples_data_exclusao_simples: '20120101',
      simples_opcao_pelo_mei: 'S',
      simples_opcao_pelo_mei_descricao: 'Sim',
      simples_data_opcao_mei: '20130101',
      simples_data_exclusao_mei: '20140101',
    });
    expect(body.socios[0]).toEqual({
      cnpj_basico: COMPLETO.slice(0, 8),
      identificador_socio: '3',
      identificador_socio_descricao: expect.stringMatching(/estrangeir/i),
      nome_socio_razao_social: 'JOHN DOE',
      cnpj_cpf_socio: '***999999**',
      qualificacao_socio: '49',
      qualificacao_socio_descricao: 'Sócio-Administrador',
      data_entrada_sociedade: '20150505',
      pais: '249',
      pais_descricao: 'ESTADOS UNIDOS',
      representante_legal: '***111111**',
      nome_representante: 'MARIA PROCURADORA',
      qualificacao_representante: '05',
      qualificacao_representante_descricao: 'Administrador',
      faixa_etaria: '5',
    });
  });

  test('a record with little data: the same keys, optional fields string or null, socios an empty array, tem_* false', async () => {
    const res = await buscar(ESPARSO);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(CAMPOS_DO_CNPJ);
    for (const campo of CAMPOS_OPCIONAIS_DO_CNPJ) {
      expect({ campo, tipo: res.body[campo] === null ? 'null' : typeof res.body[campo] }).toEqual({ campo, tipo: expect.stringMatching(/^(string|null)$/) });
    }
    expect(res.body).toMatchObject({ cnpj: ESPARSO, socios: [], tem_empresa: false, tem_simples: false, empresa_razao_social: null, simples_opcao_pelo_simples: null });
  });

  test('partners come in alphabetical order of name (SPEC §2 socios)', async () => {
    const { body } = await buscar(SERPRO);
    expect(body.socios.map((s: { nome_socio_razao_social: string }) => s.nome_socio_razao_social)).toEqual(['ANDRE DE CESERO', 'WILSON BIANCARDI COURY']);
  });

  test('a partner line the Receita repeats whole is one partner, listed once; lines of the same name that differ are each listed; one without a name comes last', async () => {
    const { body } = await buscar(COM_REPETIDOS);
    expect(body.socios.map((s: Record<string, string>) => [s.nome_socio_razao_social, s.qualificacao_socio])).toEqual([
      ['BETO BETA', '49'],
      ['BETO BETA', '05'],
      ['CARLA REPETIDA', expect.any(String)],
      [null, '22'],
    ]);
  });
});
