import { QueryTypes } from 'sequelize';
import { esperarProblema } from '../helpers/http';
import { SuiteDeTeste } from '../helpers/suite';
import { cnpjsDoNome, LIMITES_DO_NOME } from '../../api/leads/busca-por-nome';
import { novaGeracaoDosDados } from '../../api/leads/geracao';
import { chaveDosFiltros, nomeNaChave } from '../../api/leads/filtros';
import * as database from '../../lib/database';
import { TABELA } from '../../models/shared/sql';
import { schemas } from '../../api/leads/schemas';
import { esquemaPronto } from '../../api/shared/validacao';
import { acessoLeads } from '../../api/leads/acesso';
import {
  acrescentar,
  basicoNovo,
  CAMPOS_DO_RESUMO,
  Cadastro,
  casaComNome,
  centavos,
  Consulta,
  empresa,
  esperados,
  estabelecimento,
  Leads,
  leadsComCadastro,
  resumoEsperado,
  Visao,
} from './apoio-empresas';

/*
 * GET /api/empresas (SPEC 4.2, rules 1 to 3; access of SPEC §5 and DESIGN §3; the filters of
 * DESIGN §6). Counting, its cache and its limits (rule 4) are in empresas-contagem.test.ts.
 * The registry is seeded once and never changed here, so every test reads the same rows.
 */

const CAPITAIS_GRANDES = ['1234567890123456.78', '1234567890123456.79'];

let suite: SuiteDeTeste;
let leads: Leads;
let cadastro: Cadastro;
let master: string;

beforeAll(async () => {
  ({ suite, leads, cadastro, master } = await leadsComCadastro());
  // names with words InnoDB's full-text index skips by default ("com" of comércio, "www")
  // and one whose words an underscore joins, which the index reads as one word
  for (const razao_social of ['CASA COM ARTE LTDA', 'WWW INFORMATICA LTDA', 'ABC_DEF COMERCIO LTDA']) {
    const basico = basicoNovo();
    await acrescentar(cadastro, [{ e: estabelecimento({ cnpj_basico: basico, nome_fantasia: null }), em: empresa({ cnpj_basico: basico, razao_social }) }]);
  }
  // capitals a cent apart with 16 digits before the comma: a double holds them as one number
  for (const capital_social of CAPITAIS_GRANDES) {
    const basico = basicoNovo();
    await acrescentar(cadastro, [{ e: estabelecimento({ cnpj_basico: basico }), em: empresa({ cnpj_basico: basico, capital_social }) }]);
  }
  await novaGeracaoDosDados();
});
afterAll(() => suite.encerrar());

const todos = () => esperados(cadastro);

/** The filtered listing, every page, next to what the seed says it must be. */
async function conferir(query: Consulta, p: (v: Visao) => boolean) {
  const esperado = esperados(cadastro, p);
  const { cnpjs, total, estimado } = await leads.listarTudo(master, query);
  expect({ cnpjs, total, estimado }).toEqual({ cnpjs: esperado, total: esperado.length, estimado: false });
  return esperado;
}

/** A filter test means something only when its expected set is neither empty nor everything. */
function seletivo(esperado: string[]) {
  expect(esperado.length).toBeGreaterThan(0);
  expect(esperado.length).toBeLessThan(cadastro.estabelecimentos.length);
}

describe('access (SPEC §5: any permission of area empresas; DESIGN §3 and §4)', () => {
  test('without a token: 401 problem+json', async () => {
    esperarProblema(await leads.listar(undefined), 401);
  });

  test('with a token that is not a valid identity token, or not sent as Bearer: 401', async () => {
    esperarProblema(await leads.listar('abc.def.ghi'), 401);
    esperarProblema(await leads.listar(undefined, {}, { headers: { authorization: `Basic ${master}` } }), 401);
  });

  test('a user with no collaborator record in leads (no profile) is refused with 403 (DESIGN §3)', async () => {
    // created in identity after the last master listing on leads: leads has no record of this person
    const { token } = await leads.identity.criarUsuarioLogado();
    esperarProblema(await leads.listar(token), 403);
  });

  test('a collaborator whose profile was removed is refused with 403 (DESIGN §3)', async () => {
    const { token } = await leads.pessoa(null);
    esperarProblema(await leads.listar(token), 403);
  });

  test('a profile with every action of colaboradores but none of empresas grants nothing here: 403 (SPEC §5)', async () => {
    const { token } = await leads.pessoa({ colaboradores: ['ler', 'criar', 'editar', 'deletar'] });
    esperarProblema(await leads.listar(token), 403);
  });

  test('a profile whose empresas list is empty grants nothing: 403 (SPEC §5)', async () => {
    const { token } = await leads.pessoa({ empresas: [], colaboradores: ['ler'] });
    esperarProblema(await leads.listar(token), 403);
  });

  test.each(['ler', 'criar', 'editar', 'deletar'])(
    'any action in area empresas grants the listing: a profile with only %s gets 200 (SPEC 4.2 access, SPEC 5.2)',
    async (acao) => {
      const { token } = await leads.pessoa({ empresas: [acao] });
      const res = await leads.listar(token);
      expect(res.status).toBe(200);
      expect(res.body.total).toBe(todos().length);
    },
  );

  test('the seeded profile Acesso inicial, given by the master listing, reads empresas and only reads (DESIGN §3)', async () => {
    const { token } = await leads.pessoa();
    expect((await leads.listar(token)).status).toBe(200);
    const perfis = await leads.api.get('/perfil_acesso/filtro', { token: master, query: { nome: 'Acesso inicial' } });
    expect(perfis.body).toEqual([
      expect.objectContaining({ nome: 'Acesso inicial', permissoes: { empresas: ['ler'], colaboradores: ['ler'] }, sistema: true }),
    ]);
    const antes = perfis.body[0];
    esperarProblema(await leads.api.post('/perfil_acesso', { token, body: { nome: 'Meu', permissoes: { empresas: ['ler'] } } }), 403);
    esperarProblema(await leads.api.patch(`/perfil_acesso/${antes.id}`, { token, body: { permissoes: { empresas: ['editar'] } } }), 403);
    expect((await leads.api.get(`/perfil_acesso/${antes.id}`, { token: master })).body).toEqual(antes);
  });

  test("Acesso inicial's permissions following the service's areas (a version dropping one): forgotten at once in the process that rewrote them", async () => {
    const { token } = await leads.pessoa();
    expect((await leads.listar(token)).status).toBe(200);
    try {
      // as a start of a version without the area would seed it
      await acessoLeads.perfis.semearAcessoInicial(['colaboradores']);
      esperarProblema(await leads.listar(token), 403);
    } finally {
      await acessoLeads.perfis.semearAcessoInicial(acessoLeads.areas);
    }
    expect((await leads.listar(token)).status).toBe(200);
  });

  test('an identity master lists without any profile or local record (SPEC 5.1)', async () => {
    expect((await leads.listar(master)).status).toBe(200);
    const { token } = await leads.identity.criarUsuarioLogado({ e_master: true });
    const res = await leads.listar(token);
    expect(res.status).toBe(200);
    expect(res.body.total).toBe(todos().length);
  });

  test('an application token (no profile, not master) is refused with 403 (DESIGN §3)', async () => {
    const app = await leads.identity.criarAplicativo();
    esperarProblema(await leads.listar(app.token), 403);
  });

  test('order of checks is 401 → 403 → 400: a bad query from an unauthorized caller is not a 400 (DESIGN §4)', async () => {
    const ruim = { uf: 'XX', tamanho: 'dez', data_inicio_de: '2020' };
    esperarProblema(await leads.listar(undefined, ruim), 401);
    esperarProblema(await leads.listar('abc.def.ghi', ruim), 401);
    const semPerfil = await leads.pessoa({ colaboradores: ['ler'] });
    esperarProblema(await leads.listar(semPerfil.token, ruim), 403);
    const app = await leads.identity.criarAplicativo();
    esperarProblema(await leads.listar(app.token, ruim), 403);
    const comPerfil = await leads.pessoa({ empresas: ['ler'] });
    const problema = esperarProblema(await leads.listar(comPerfil.token, ruim), 400);
    expect(problema.errors.map((e: { campo: string }) => e.campo).sort()).toEqual(['data_inicio_de', 'tamanho', 'uf']);
  });
});

describe('rule 1: establishments in CNPJ order, each a CnpjResumo (SPEC 4.2 rule 1, SPEC §2)', () => {
  test('the page has exactly estimado, itens, pagina, tamanho and total', async () => {
    const res = await leads.listar(master);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(Object.keys(res.body).sort()).toEqual(['estimado', 'itens', 'pagina', 'tamanho', 'total']);
    expect(res.body).toEqual({
      estimado: false,
      itens: expect.any(Array),
      pagina: 1,
      tamanho: 12,
      total: todos().length,
    });
  });

  test('every establishment is listed once, in CNPJ order (alphanumeric CNPJs after the numeric ones)', async () => {
    const { cnpjs, total } = await leads.listarTudo(master);
    expect(total).toBe(cadastro.estabelecimentos.length);
    expect(cnpjs).toEqual(todos());
    expect(new Set(cnpjs).size).toBe(cnpjs.length);
    // letters sort after digits: the alphanumeric CNPJs that start with a letter come last
    const comLetra = cnpjs.findIndex((c) => /^[A-Z]/.test(c));
    expect(cnpjs.slice(comLetra).every((c) => /^[A-Z]/.test(c))).toBe(true);
    expect(cnpjs.at(-1)!.slice(0, 8)).toBe('Z9Y8X7W6');
    expect(cnpjs.some((c) => c.startsWith('12ABC345'))).toBe(true);
  });

  test('each item has exactly the CnpjResumo fields: cnpj a string, the others strings or null', async () => {
    const { itens } = await leads.listarTudo(master);
    const fora = itens.filter(
      (item) =>
        Object.keys(item).sort().join() !== CAMPOS_DO_RESUMO.join() ||
        !/^[0-9A-Z]{12}[0-9]{2}$/.test(String(item.cnpj)) ||
        CAMPOS_DO_RESUMO.some((c) => item[c] !== null && typeof item[c] !== 'string'),
    );
    expect(fora).toEqual([]);
    // every nullable field is null somewhere in the seed, and a string elsewhere
    for (const campo of CAMPOS_DO_RESUMO.filter((c) => c !== 'cnpj')) {
      expect({ campo, nulo: itens.some((i) => i[campo] === null), texto: itens.some((i) => typeof i[campo] === 'string') }).toEqual({
        campo,
        nulo: !['situacao_cadastral_descricao', 'uf'].includes(campo),
        texto: true,
      });
    }
  });

  test('each item carries the values of its establishment, company and municipality (decimal comma, status description)', async () => {
    const { itens } = await leads.listarTudo(master);
    expect(itens).toEqual(todos().map((cnpj) => resumoEsperado(cadastro, cnpj)));
    // the seed covers the interesting shapes
    expect(itens.some((i) => i.empresa_capital_social === '1000,50')).toBe(true);
    expect(itens.some((i) => i.empresa_capital_social === '0,00')).toBe(true);
    expect(itens.some((i) => i.empresa_razao_social === null)).toBe(true); // company not in the registry
    expect(itens.some((i) => i.municipio_descricao === null && i.uf === 'MG')).toBe(true); // code without a table row
    expect(new Set(itens.map((i) => i.situacao_cadastral_descricao))).toEqual(new Set(['Nula', 'Ativa', 'Suspensa', 'Inapta', 'Baixada']));
  });
});

describe('rule 2: each filter of DESIGN §6 alone gives exactly the matching establishments (SPEC 4.2 rule 2)', () => {
  const casos: [string, Consulta, (v: Visao) => boolean][] = [
    ['uf', { uf: 'SP' }, ({ e }) => e.uf === 'SP'],
    ['uf in lower case', { uf: 'ex' }, ({ e }) => e.uf === 'EX'],
    ['municipio (code)', { municipio: '7107' }, ({ e }) => e.municipio === '7107'],
    ['municipio without its leading zeros (97 is 0097)', { municipio: '97' }, ({ e }) => e.municipio === '0097'],
    ['cnae (principal only, not the secondary ones)', { cnae: '4711302' }, ({ e }) => e.cnae_fiscal_principal === '4711302'],
    ['cnae with a leading zero', { cnae: '0111301' }, ({ e }) => e.cnae_fiscal_principal === '0111301'],
    ['cnae with its mask 6204-0/00', { cnae: '6204-0/00' }, ({ e }) => e.cnae_fiscal_principal === '6204000'],
    ['cnae_secundaria (any of the secondary codes)', { cnae_secundaria: '6201501' }, (v) => v.secundarias.includes('6201501')],
    ['cnae_secundaria with its mask 6204-0/00', { cnae_secundaria: '6204-0/00' }, (v) => v.secundarias.includes('6204000')],
    ['situacao_cadastral', { situacao_cadastral: '08' }, ({ e }) => e.situacao_cadastral === '08'],
    ['situacao_cadastral without the leading zero (2 is 02)', { situacao_cadastral: '2' }, ({ e }) => e.situacao_cadastral === '02'],
    ['natureza_juridica (of the company)', { natureza_juridica: '2062' }, ({ em }) => em?.natureza_juridica === '2062'],
    ['natureza_juridica with its mask 206-2', { natureza_juridica: '206-2' }, ({ em }) => em?.natureza_juridica === '2062'],
    ['porte (of the company)', { porte: '03' }, ({ em }) => em?.porte_empresa === '03'],
    ['porte without the leading zero (1 is 01)', { porte: '1' }, ({ em }) => em?.porte_empresa === '01'],
    ['matriz_filial 1 (head offices)', { matriz_filial: '1' }, ({ e }) => e.identificador_matriz_filial === '1'],
    ['matriz_filial 2 (branches)', { matriz_filial: '2' }, ({ e }) => e.identificador_matriz_filial === '2'],
    ['opcao_simples S', { opcao_simples: 'S' }, ({ si }) => si?.opcao_pelo_simples === 'S'],
    [
      'opcao_simples N (including companies without a Simples record, and establishments without a company)',
      { opcao_simples: 'N' },
      ({ si }) => si?.opcao_pelo_simples !== 'S',
    ],
    ['opcao_mei S', { opcao_mei: 'S' }, ({ si }) => si?.opcao_pelo_mei === 'S'],
    ['opcao_mei n (lower case; no Simples record counts as N)', { opcao_mei: 'n' }, ({ si }) => si?.opcao_pelo_mei !== 'S'],
    ['opcao_simples true (a boolean, DESIGN §4: S)', { opcao_simples: 'true' }, ({ si }) => si?.opcao_pelo_simples === 'S'],
    ['opcao_mei false (N)', { opcao_mei: 'false' }, ({ si }) => si?.opcao_pelo_mei !== 'S'],
    [
      'data_inicio_de (inclusive; no start date never matches)',
      { data_inicio_de: '20100101' },
      ({ e }) => e.data_inicio_atividade !== null && e.data_inicio_atividade >= '20100101',
    ],
    [
      'data_inicio_ate (inclusive)',
      { data_inicio_ate: '19991231' },
      ({ e }) => e.data_inicio_atividade !== null && e.data_inicio_atividade <= '19991231',
    ],
    [
      'data_inicio_de with data_inicio_ate (a range)',
      { data_inicio_de: '20050101', data_inicio_ate: '20101231' },
      ({ e }) => e.data_inicio_atividade !== null && e.data_inicio_atividade >= '20050101' && e.data_inicio_atividade <= '20101231',
    ],
    [
      'capital_social_min with a decimal comma (1000,50 inclusive)',
      { capital_social_min: '1000,50' },
      ({ em }) => !!em?.capital_social && centavos(em.capital_social) >= 100_050,
    ],
    [
      'capital_social_max with a decimal point (1000.50 inclusive)',
      { capital_social_max: '1000.50' },
      ({ em }) => !!em?.capital_social && centavos(em.capital_social) <= 100_050,
    ],
    [
      'capital_social_min with capital_social_max (a range, integer bounds)',
      { capital_social_min: '1000', capital_social_max: '50000' },
      ({ em }) => !!em?.capital_social && centavos(em.capital_social) >= 100_000 && centavos(em.capital_social) <= 5_000_000,
    ],
    ['capital_social_min 0 (every company with a capital)', { capital_social_min: '0' }, ({ em }) => !!em?.capital_social],
    ['ddd (of either phone)', { ddd: '61' }, ({ e }) => e.ddd_1 === '61' || e.ddd_2 === '61'],
    ['tem_email true', { tem_email: 'true' }, ({ e }) => e.correio_eletronico !== null],
    ['tem_email false', { tem_email: 'false' }, ({ e }) => e.correio_eletronico === null],
    ['tem_telefone true (either phone)', { tem_telefone: 'true' }, ({ e }) => e.telefone_1 !== null || e.telefone_2 !== null],
    ['tem_telefone false (neither phone)', { tem_telefone: 'false' }, ({ e }) => e.telefone_1 === null && e.telefone_2 === null],
    ['cep (a prefix)', { cep: '70836' }, ({ e }) => !!e.cep?.startsWith('70836')],
    ['cep of one digit (a prefix)', { cep: '7' }, ({ e }) => !!e.cep?.startsWith('7')],
    ['cep with its mask 70836-900 (the whole CEP)', { cep: '70836-900' }, ({ e }) => e.cep === '70836900'],
    ['cep with a masked prefix 01.310', { cep: '01.310' }, ({ e }) => !!e.cep?.startsWith('01310')],
    ['nome: a word of the razão social, without accent and in lower case', { nome: 'industria' }, (v) => casaComNome(v, 'industria')],
    ['nome: a word of the nome fantasia, with accent', { nome: 'Visão' }, (v) => casaComNome(v, 'Visão')],
    ['nome: a word in either name (café is in both kinds)', { nome: 'CAFE' }, (v) => casaComNome(v, 'CAFE')],
    ['nome: the start of a word (joão finds Joãozinho)', { nome: 'joão' }, (v) => casaComNome(v, 'joão')],
    ['nome: every word must be present (são joão)', { nome: 'são joão' }, (v) => casaComNome(v, 'são joão')],
    // as some keyboards and pasted text send it: each accent a character of its own
    ['nome: the same words typed decomposed (são joão in NFD)', { nome: 'são joão'.normalize('NFD') }, (v) => casaComNome(v, 'são joão')],
    ['nome: words in another order (doce açúcar)', { nome: 'doce açúcar' }, (v) => casaComNome(v, 'doce açúcar')],
    ['nome: only short words are a prefix of either name (pa)', { nome: 'pa' }, (v) => casaComNome(v, 'pa')],
    ['nome: one letter is a prefix too (p)', { nome: 'p' }, (v) => casaComNome(v, 'p')],
    ['nome: a word the full-text index skips by default (casa com arte)', { nome: 'casa com arte' }, (v) => casaComNome(v, 'casa com arte')],
    ['nome: only such a word and another (www informatica)', { nome: 'www informatica' }, (v) => casaComNome(v, 'www informatica')],
    ['nome: such a word written with an accent (casa cóm arte)', { nome: 'casa cóm arte' }, (v) => casaComNome(v, 'casa cóm arte')],
    ['nome: words joined by an underscore, one word as the index reads it (abc_def)', { nome: 'abc_def' }, (v) => casaComNome(v, 'abc_def')],
  ];

  test.each(casos)('%s (DESIGN §6)', async (_nome, query, p) => {
    seletivo(await conferir(query, p));
  });

  describe('a name with more matches than are listed beforehand is matched row by row, with the same result', () => {
    const nomes = casos.filter(([titulo]) => titulo.startsWith('nome:'));
    const lista = LIMITES_DO_NOME.lista;
    beforeAll(async () => {
      LIMITES_DO_NOME.lista = 0;
      await novaGeracaoDosDados();
    });
    afterAll(async () => {
      LIMITES_DO_NOME.lista = lista;
      await novaGeracaoDosDados();
    });

    test.each(nomes)('%s, row by row', async (_nome, query, p) => {
      seletivo(await conferir(query, p));
    });
  });

  test('capital bounds compare to the cent as written, also past the digits a JS number holds (DECIMAL(20,2), 18 before the comma)', async () => {
    // exact cents of the DECIMAL text (always 2 decimals in the seed)
    const exatos = (capital: string) => BigInt(capital.replace(/[.,]/, ''));
    const [menor, maior] = CAPITAIS_GRANDES.map(exatos);
    const com = (f: (c: bigint) => boolean) => ({ em }: Visao) => !!em?.capital_social && f(exatos(em.capital_social));
    expect(await conferir({ capital_social_min: '1234567890123456,79' }, com((c) => c >= maior))).toHaveLength(1);
    expect(await conferir({ capital_social_min: '1234567890123456.78' }, com((c) => c >= menor))).toHaveLength(2);
    seletivo(await conferir({ capital_social_max: '1234567890123456,78' }, com((c) => c <= menor)));
    // written in other ways, the same bound is the same filter set (one cached count)
    const chave = (capital_social_min: string) => chaveDosFiltros(esquemaPronto(schemas.empresas, true).validate({ capital_social_min }).value);
    expect(new Set(['1000,5', '1000.50', '01000,50', '1000.5'].map(chave)).size).toBe(1);
    expect(chave('1000')).toBe(chave('1000,00'));
    expect(chave('1000')).not.toBe(chave('1000,01'));
  });

  test('opcao_simples N includes establishments of companies without a Simples record and without a company', async () => {
    const { cnpjs } = await leads.listarTudo(master, { opcao_simples: 'N' });
    const semSimples = esperados(cadastro, (v) => !!v.em && !v.si);
    const semEmpresa = esperados(cadastro, (v) => !v.em);
    expect(semSimples.length).toBeGreaterThan(0);
    expect(semEmpresa.length).toBeGreaterThan(0);
    expect(cnpjs).toEqual(expect.arrayContaining([...semSimples, ...semEmpresa]));
  });

  test('ddd matches the second phone too, not only the first', async () => {
    const { cnpjs } = await leads.listarTudo(master, { ddd: '61' });
    const peloSegundo = esperados(cadastro, ({ e }) => e.ddd_2 === '61' && e.ddd_1 !== '61');
    expect(peloSegundo.length).toBeGreaterThan(0);
    expect(cnpjs).toEqual(expect.arrayContaining(peloSegundo));
  });

  test('ddd with leading zeros (011, 0061) is the DDD the import stores (11, 61): the same results and one cached count', async () => {
    for (const ddd of ['061', '0061', ' 061 ']) seletivo(await conferir({ ddd }, ({ e }) => e.ddd_1 === '61' || e.ddd_2 === '61'));
    const chave = (ddd: string) => chaveDosFiltros(esquemaPronto(schemas.empresas, true).validate({ ddd }).value);
    expect(new Set(['11', '011', '0011'].map(chave)).size).toBe(1);
  });

  test('data_inicio_de and data_inicio_ate equal to a start date include it at both ends', async () => {
    const dia = cadastro.estabelecimentos.find((e) => e.data_inicio_atividade)!.data_inicio_atividade!;
    const esperado = await conferir({ data_inicio_de: dia, data_inicio_ate: dia }, ({ e }) => e.data_inicio_atividade === dia);
    expect(esperado.length).toBeGreaterThan(0);
  });
});

describe('rule 2: filters combine, empty values and unknown parameters are ignored (SPEC 4.2 rule 2, DESIGN §4)', () => {
  test('several filters combine with AND', async () => {
    seletivo(
      await conferir(
        { uf: 'SP', situacao_cadastral: '02', tem_email: 'true', opcao_simples: 'S' },
        ({ e, si }) => e.uf === 'SP' && e.situacao_cadastral === '02' && e.correio_eletronico !== null && si?.opcao_pelo_simples === 'S',
      ),
    );
  });

  test('filters of the establishment, the company and the names combine with AND', async () => {
    seletivo(
      await conferir(
        { nome: 'padaria', matriz_filial: '1', capital_social_min: '1000', porte: '01' },
        (v) =>
          casaComNome(v, 'padaria') &&
          v.e.identificador_matriz_filial === '1' &&
          !!v.em?.capital_social &&
          centavos(v.em.capital_social) >= 100_000 &&
          v.em.porte_empresa === '01',
      ),
    );
  });

  test('a combination that no establishment satisfies lists nothing, total 0', async () => {
    const res = await leads.listar(master, { uf: 'EX', municipio: '7107' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ estimado: false, itens: [], pagina: 1, tamanho: 12, total: 0 });
  });

  test('every filter given empty (or blank) equals no filter at all', async () => {
    const vazios: Consulta = {
      uf: '',
      municipio: '',
      cnae: '',
      cnae_secundaria: '',
      situacao_cadastral: '',
      natureza_juridica: '',
      porte: '',
      matriz_filial: '',
      opcao_simples: '',
      opcao_mei: '',
      data_inicio_de: '',
      data_inicio_ate: '',
      capital_social_min: '',
      capital_social_max: '',
      ddd: '',
      tem_email: ' ',
      tem_telefone: '  ',
      cep: '   ',
      nome: ' ',
    };
    await conferir(vazios, () => true);
  });

  test('an empty filter next to a real one leaves the real one alone (?uf=&cnae=4711302)', async () => {
    seletivo(await conferir({ uf: '', cnae: '4711302' }, ({ e }) => e.cnae_fiscal_principal === '4711302'));
  });

  test('unknown query parameters are ignored', async () => {
    seletivo(await conferir({ uf: 'RJ', ordenar: 'nome', razao_social: 'x', filtro: 'zzz' }, ({ e }) => e.uf === 'RJ'));
  });
});

describe('rule 2: invalid filter values answer 400 problem+json naming the field (DESIGN §4)', () => {
  const invalidos: [string, string][] = [
    ['uf', 'XX'],
    ['uf', 'S'],
    ['municipio', '12345'],
    ['cnae', '620400'],
    ['cnae', '6204-0/0'],
    ['cnae_secundaria', '62040001'],
    ['situacao_cadastral', '123'],
    ['natureza_juridica', '206'],
    // a code filter drops only mask characters: other text is an error, not an empty (ignored) value
    ['porte', 'grande'],
    ['municipio', 'abc'],
    ['cnae', 'abcdefg'],
    ['cnae_secundaria', '62O4000'],
    ['situacao_cadastral', 'ativa'],
    ['natureza_juridica', 'xxxx'],
    ['ddd', 'ab'],
    ['cep', 'abc'],
    ['matriz_filial', '3'],
    // codes the Receita does not use (SPEC §2 lists them), as matriz_filial 3 or uf XX
    ['situacao_cadastral', '05'],
    ['situacao_cadastral', '9'],
    ['porte', '02'],
    ['porte', '4'],
    ['opcao_simples', 'X'],
    ['opcao_mei', 'talvez'],
    ['data_inicio_de', '2020'],
    ['data_inicio_ate', '20201301'],
    ['data_inicio_de', '2020-01-01'],
    // the form of a date, and no day of the calendar
    ['data_inicio_de', '20230231'],
    ['data_inicio_ate', '20230229'],
    ['capital_social_min', 'abc'],
    ['capital_social_max', '1.000,50'],
    ['capital_social_min', '-5'],
    ['ddd', '1'],
    ['ddd', '123'],
    // leading zeros dropped, what is left must still be a DDD (none starts with 0)
    ['ddd', '0'],
    ['ddd', '00'],
    ['ddd', '01'],
    ['ddd', '0123'],
    ['tem_email', 'sim'],
    ['tem_telefone', '1'],
    ['cep', '123456789'],
    ['nome', 'x'.repeat(151)],
    // longer than any word a full-text index keeps: searched, it would be left out silently
    ['nome', `padaria ${'a'.repeat(85)}`],
  ];

  test.each(invalidos)('%s=%s answers 400 naming the field, in words (no rule\'s expression)', async (campo, valor) => {
    const problema = esperarProblema(await leads.listar(master, { [campo]: valor }), 400);
    expect(problema.errors).toEqual([expect.objectContaining({ campo, mensagem: expect.not.stringMatching(/pattern|\/\^/) })]);
  });

  test('several invalid values are all named in one answer', async () => {
    const problema = esperarProblema(
      await leads.listar(master, { uf: 'XX', data_inicio_de: '2020', capital_social_min: 'abc', cnae: '1' }),
      400,
    );
    expect(problema.errors.map((e: { campo: string }) => e.campo).sort()).toEqual(['capital_social_min', 'cnae', 'data_inicio_de', 'uf']);
  });

  test.each([
    ['data_inicio_ate', 'data_inicio_de', { data_inicio_de: '20200102', data_inicio_ate: '20200101' }],
    ['data_inicio_ate', 'data_inicio_de', { data_inicio_de: '20210101', data_inicio_ate: '20201231' }],
    ['capital_social_max', 'capital_social_min', { capital_social_min: '1000,01', capital_social_max: '1000' }],
    ['capital_social_max', 'capital_social_min', { capital_social_min: '10', capital_social_max: '9,99' }],
    ['capital_social_max', 'capital_social_min', { capital_social_min: '1234567890123456,79', capital_social_max: '1234567890123456.78' }],
  ])('an inverted range answers 400: %s names %s', async (campo, outro, query) => {
    const problema = esperarProblema(await leads.listar(master, query), 400);
    expect(problema.errors).toEqual([{ campo, mensagem: expect.stringContaining(outro) }]);
  });

  test('ranges compared as the filters read them: equal ends however written, and numbers by value, not as text', async () => {
    for (const query of [
      { capital_social_min: '1000,5', capital_social_max: '01000.50' },
      { capital_social_min: '9', capital_social_max: '10' },
      { capital_social_min: '0', capital_social_max: '1234567890123456,78' },
    ]) {
      expect({ query, status: (await leads.listar(master, query)).status }).toEqual({ query, status: 200 });
    }
  });

  test.each([
    [{ data_inicio_de: '20201301', data_inicio_ate: '20200101', capital_social_min: 'abc', capital_social_max: '5' }, ['capital_social_min', 'data_inicio_de']],
    // of the right form but no day of the calendar, or too many digits: invalid all the same
    [{ data_inicio_de: '20230231', data_inicio_ate: '20230201' }, ['data_inicio_de']],
    [{ data_inicio_de: '20230301', data_inicio_ate: '20230231' }, ['data_inicio_ate']],
    [{ capital_social_min: '1234567890123456789', capital_social_max: '5' }, ['capital_social_min']],
    [{ capital_social_min: '1.2.3', capital_social_max: '1' }, ['capital_social_min']],
    [{ capital_social_min: '10', capital_social_max: '1234567890123456789' }, ['capital_social_max']],
  ])('an invalid end of a range is named alone, once, not also as an inverted range: %o', async (query, campos) => {
    const problema = esperarProblema(await leads.listar(master, query), 400);
    expect(problema.errors.map((e: { campo: string }) => e.campo).sort()).toEqual(campos);
  });

  test('a word as long as the full-text index keeps (84 letters) is searched like any other', async () => {
    const res = await leads.listar(master, { nome: `padaria ${'a'.repeat(84)}` });
    expect({ status: res.status, total: res.body.total }).toEqual({ status: 200, total: 0 });
  });

  test.each([
    ['data_inicio_de', 'data_inicio_de=20200101&data_inicio_de=20210101&data_inicio_ate=20200101'],
    ['capital_social_min', 'capital_social_min=10&capital_social_min=20&capital_social_max=15'],
  ])('a lower end given twice is named alone, not also through the upper end (%s)', async (campo, query) => {
    const problema = esperarProblema(await leads.api.get(`/api/empresas?${query}`, { token: master }), 400);
    expect([...new Set(problema.errors.map((e: { campo: string }) => e.campo))]).toEqual([campo]);
  });

  test('a filter given twice (?uf=SP&uf=RJ) is refused, not silently reduced to one', async () => {
    const res = await leads.api.get('/api/empresas?uf=SP&uf=RJ', { token: master });
    const problema = esperarProblema(res, 400);
    expect([...new Set(problema.errors.map((e: { campo: string }) => e.campo))]).toEqual(['uf']);
  });
});

describe('rule 3: tamanho and pagina are adjusted into range and reported (SPEC 4.2 rule 3, SPEC §8)', () => {
  const pagina = async (query: Consulta) => {
    const res = await leads.listar(master, query);
    expect(res.status).toBe(200);
    return res.body as { itens: { cnpj: string }[]; pagina: number; tamanho: number; total: number; estimado: boolean };
  };
  const ultima = (tamanho: number) => Math.ceil(todos().length / tamanho);

  test('tamanho defaults to 12 and pagina to 1: the first 12 establishments', async () => {
    const p = await pagina({});
    expect({ pagina: p.pagina, tamanho: p.tamanho, cnpjs: p.itens.map((i) => i.cnpj) }).toEqual({
      pagina: 1,
      tamanho: 12,
      cnpjs: todos().slice(0, 12),
    });
  });

  test('tamanho 0 (and negative) becomes 1', async () => {
    for (const tamanho of [0, -7]) {
      const p = await pagina({ tamanho });
      expect({ tamanho: p.tamanho, cnpjs: p.itens.map((i) => i.cnpj) }).toEqual({ tamanho: 1, cnpjs: todos().slice(0, 1) });
    }
  });

  test('tamanho 100 becomes 50; 50 and 1 stay', async () => {
    const p = await pagina({ tamanho: 100 });
    expect({ tamanho: p.tamanho, cnpjs: p.itens.map((i) => i.cnpj) }).toEqual({ tamanho: 50, cnpjs: todos().slice(0, 50) });
    // an integer beyond what a number holds exactly is adjusted too
    expect((await pagina({ tamanho: '99999999999999999999' })).tamanho).toBe(50);
    expect((await pagina({ tamanho: 50 })).tamanho).toBe(50);
    expect((await pagina({ tamanho: 1 })).tamanho).toBe(1);
  });

  test('pagina 0 (and negative) becomes 1', async () => {
    for (const n of [0, -3]) {
      const p = await pagina({ pagina: n, tamanho: 5 });
      expect({ pagina: p.pagina, cnpjs: p.itens.map((i) => i.cnpj) }).toEqual({ pagina: 1, cnpjs: todos().slice(0, 5) });
    }
  });

  test('a middle page lists the establishments after the earlier pages', async () => {
    const p = await pagina({ pagina: 3, tamanho: 7 });
    expect({ pagina: p.pagina, tamanho: p.tamanho, cnpjs: p.itens.map((i) => i.cnpj) }).toEqual({
      pagina: 3,
      tamanho: 7,
      cnpjs: todos().slice(14, 21),
    });
  });

  test('pagina beyond the last becomes the last page, with the remaining establishments', async () => {
    const n = todos().length;
    expect(n % 50).not.toBe(0);
    expect((await pagina({ pagina: '99999999999999999999', tamanho: 50 })).pagina).toBe(ultima(50));
    const p = await pagina({ pagina: 9999, tamanho: 50 });
    expect({ pagina: p.pagina, total: p.total, cnpjs: p.itens.map((i) => i.cnpj) }).toEqual({
      pagina: ultima(50),
      total: n,
      cnpjs: todos().slice((ultima(50) - 1) * 50),
    });
    // the same with a filter: the last page of its own matches
    const sp = esperados(cadastro, ({ e }) => e.uf === 'SP');
    const q = await pagina({ uf: 'SP', pagina: 500, tamanho: 10 });
    expect({ pagina: q.pagina, cnpjs: q.itens.map((i) => i.cnpj) }).toEqual({
      pagina: Math.ceil(sp.length / 10),
      cnpjs: sp.slice((Math.ceil(sp.length / 10) - 1) * 10),
    });
  });

  test('with no match, any pagina becomes 1 and the page is empty', async () => {
    const p = await pagina({ nome: 'inexistentezzz', pagina: 4, tamanho: 3 });
    expect(p).toEqual({ estimado: false, itens: [], pagina: 1, tamanho: 3, total: 0 });
  });

  test('total counts every match, not the page', async () => {
    const p = await pagina({ uf: 'SP', tamanho: 2 });
    expect(p.itens).toHaveLength(2);
    expect(p.total).toBe(esperados(cadastro, ({ e }) => e.uf === 'SP').length);
    expect(p.estimado).toBe(false);
  });

  test.each([
    ['pagina', '1.5'],
    ['pagina', 'um'],
    ['tamanho', 'abc'],
    ['tamanho', '2.5'],
  ])('a non-integer %s (%s) answers 400 naming it (DESIGN §4)', async (campo, valor) => {
    const problema = esperarProblema(await leads.listar(master, { [campo]: valor }), 400);
    expect(problema.errors).toEqual([expect.objectContaining({ campo })]);
  });
});

describe('names listed beforehand from the full-text indexes (api/leads/busca-por-nome.ts)', () => {
  test('a name with few matches becomes the list of its establishments, by either name, each once', async () => {
    const esperado = esperados(cadastro, (v) => casaComNome(v, 'CAFE'));
    expect(esperado.length).toBeGreaterThan(1);
    expect((await cnpjsDoNome('CAFE'))!.sort()).toEqual([...esperado].sort());
    expect(await cnpjsDoNome('inexistentezzz')).toEqual([]);
  });

  test('more matches than the list holds, or only short words (a prefix): no list, the name is matched row by row', async () => {
    const lista = LIMITES_DO_NOME.lista;
    LIMITES_DO_NOME.lista = 1;
    // a list is kept for the data's generation: a new one makes it be asked again
    await novaGeracaoDosDados();
    try {
      expect(await cnpjsDoNome('CAFE')).toBeUndefined();
    } finally {
      LIMITES_DO_NOME.lista = lista;
      await novaGeracaoDosDados();
    }
    expect(await cnpjsDoNome('pa')).toBeUndefined();
  });

  test('spellings the indexes answer alike (case, accents, punctuation, word order, a repeated word) list the same establishments, read once', async () => {
    const grafias = ['Padaria São João', 'padaria sao joao', 'JOÃO, Padaria-SÃO', 'joão padaria são padaria'];
    const esperado = esperados(cadastro, (v) => casaComNome(v, 'padaria são joão')).sort();
    expect(esperado.length).toBeGreaterThan(0);
    // each read from the indexes on its own (a generation of its own shares no list)
    for (const [i, nome] of grafias.entries()) {
      expect({ nome, lista: (await cnpjsDoNome(nome, `grafia-${i}`))!.sort() }).toEqual({ nome, lista: esperado });
    }
    await novaGeracaoDosDados();
    const leitura = jest.spyOn(database, 'lerDemorado');
    try {
      for (const nome of grafias) expect((await cnpjsDoNome(nome))!.sort()).toEqual(esperado);
      // the first spelling's two index reads, and no other
      expect(leitura.mock.calls.filter(([, sql]) => /MATCH/.test(sql))).toHaveLength(2);
    } finally {
      leitura.mockRestore();
    }
  });

  test('the letters the key folds are the same letter to a full-text index of the names\' collation: the folded word finds what the word as written finds', async () => {
    // from A to ſ (Basic Latin, Latin-1 and Latin Extended-A), inside a word the index keeps
    const letras = Array.from({ length: 0x180 - 0x41 }, (_, i) => String.fromCharCode(0x41 + i)).filter((c) => /\p{L}/u.test(c));
    const palavra = (c: string) => `qq${c}qq`;
    const dobradas = letras.flatMap((c) => {
      const [k] = (nomeNaChave(palavra(c)) as { palavras: string[] }).palavras;
      return k === palavra(c) ? [] : [[palavra(c), k]];
    });
    expect(dobradas.length).toBeGreaterThan(100);
    const sequelize = database.banco('leads');
    await sequelize.query(`CREATE TABLE dobras_do_nome (id INT NOT NULL PRIMARY KEY, nome VARCHAR(20) NOT NULL, FULLTEXT KEY dobras_nome (nome)) ${TABELA}`);
    try {
      await sequelize.query(`INSERT INTO dobras_do_nome (id, nome) VALUES ${letras.map(() => '(?, ?)').join(', ')}`, {
        replacements: letras.flatMap((c, i) => [i, palavra(c)]),
      });
      const achados = async (p: string) =>
        (
          await sequelize.query<{ id: number }>('SELECT id FROM dobras_do_nome WHERE MATCH(nome) AGAINST (? IN BOOLEAN MODE) ORDER BY id', {
            replacements: [`+${p}*`],
            type: QueryTypes.SELECT,
          })
        ).map((l) => l.id);
      const diferentes = [];
      for (const [escrita, dobrada] of dobradas) {
        const [a, b] = [await achados(escrita), await achados(dobrada)];
        if (a.join() !== b.join() || !a.length) diferentes.push({ escrita, dobrada, a, b });
      }
      expect(diferentes).toEqual([]);
    } finally {
      await sequelize.query('DROP TABLE dobras_do_nome');
    }
  });
});
