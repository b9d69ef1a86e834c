import { randomBytes } from 'node:crypto';
import { importarCnpj } from '../../api/leads/importacao';
import { banco } from '../../lib/database';
import { iniciarWorkers } from '../../lib/runner';
import { FILAS } from '../../queues';
import { acessoDe } from '../helpers/acesso';
import { chamar } from '../helpers/http';
import { identityDe } from '../helpers/identity';
import { Conformidade, conformidadeDe } from '../helpers/openapi';
import { iniciarSuite, SuiteDeTeste } from '../helpers/suite';
import { diretorios, escreverMes, linhaDeEmpresa, linhaDeEstabelecimento, linhaDeSocio, linhaDoSimples, novoCnpj } from '../leads/apoio';
import { eventoDeMensagem, eventoDoGateway, idDoSuporte, novoContato } from '../sales/apoio';

/**
 * What an outside client generating code from each service's OpenAPI document is told, against
 * what the service answers: one representative request per operation (and the usual refusals),
 * each answer's status documented for its operation and its body valid against the documented
 * schema, each request the service takes allowed by the document and each it refuses as malformed
 * refused by it too (test/helpers/openapi.ts). Every documented operation must be exercised with a
 * success. A document states each parameter's canonical form; some requests are also written as
 * people write them (masks, spaces around a value, a decimal comma, lower case: `tolerada`), which
 * the service must take and the document need only describe, and with empty values, which the
 * services take as absent.
 */

let suite: SuiteDeTeste;
const dirs = diretorios();
const unico = (rotulo: string) => `${rotulo}${randomBytes(4).toString('hex')}`;

beforeAll(async () => {
  suite = await iniciarSuite(['identity', 'leads', 'intranet', 'hub', 'sales', 'files'], {
    workers: false,
    env: { LEADS_CNPJ_LIMITE_POR_MINUTO: '100000' },
  });
  // the syncs a master's listing waits for, and the counts of the pages; deliveries and copies stay queued
  await iniciarWorkers(FILAS.filter((f) => /-sync$|-contagem$/.test(f.nome)).map((f) => f.nome));
});
afterAll(async () => {
  await suite.encerrar();
  dirs.apagar();
});

async function documentoDe(nome: string): Promise<Conformidade> {
  const res = await chamar(suite.url[nome], 'GET', '/openapi.json');
  expect(res.status).toBe(200);
  return conformidadeDe(suite.url[nome], res.body);
}

/** Dummy path values: only authentication is looked at before them. */
const PARAMETROS_QUAISQUER = { id: 'x', versao: '1', config_id: 'x', cnpj: '00000000000191' };

/**
 * The operations an outside client may call without a bearer token (public, or with a credential of
 * their own) are exactly `publicas`; every other answers 401 (documented, with the problem shape)
 * when the token is missing or invalid.
 */
async function conferirSeguranca(c: Conformidade, publicas: string[]) {
  const semToken = c.operacoes().filter((op) => !c.operacao(op).security?.some((s: Record<string, unknown>) => 'bearer' in s));
  expect(semToken.sort()).toEqual([...publicas].sort());
  expect(c.doc.components.securitySchemes.bearer).toEqual(expect.objectContaining({ type: 'http', scheme: 'bearer' }));
  for (const op of c.operacoes().filter((o) => !publicas.includes(o))) {
    expect(c.operacao(op).security).toEqual([{ bearer: [] }]);
    // the answers' WWW-Authenticate is checked against the documented one (test/helpers/openapi.ts)
    expect(c.operacao(op).responses['401'].headers['WWW-Authenticate'].schema.enum).toEqual(['Bearer', 'Bearer error="invalid_token"']);
    await c.chamarOp(op, PARAMETROS_QUAISQUER, { status: 401 });
    await c.chamarOp(op, PARAMETROS_QUAISQUER, { status: 401, token: 'nao.e.um.token' });
  }
  expect(c.falhas).toEqual([]);
}

/** The routes every service serves (DESIGN §4). */
async function conferirRotasDeServico(c: Conformidade) {
  await c.chamarOp('GET /saude', {}, { status: 200 });
  await c.chamarOp('GET /pronto', {}, { status: 200 });
  await c.chamarOp('GET /openapi.json', {}, { status: 200 });
}

function conferirCobertura(c: Conformidade, semSucesso: string[] = []) {
  expect(c.falhas).toEqual([]);
  const faltam = c.operacoes().filter((op) => !c.cobertas.has(op) && !semSucesso.includes(op));
  expect(faltam).toEqual([]);
}

/** The access module (SPEC 4.5, DESIGN §3), as mounted by intranet, hub, leads, sales and files. */
async function conferirModuloDeAcesso(c: Conformidade, servico: string) {
  const acesso = acessoDe(suite.url.identity, suite.url[servico]);
  const token = await acesso.admin();
  const { usuario } = await acesso.identity.criarUsuarioLogado();
  await c.chamarOp('GET /colaborador', {}, { token, status: 200 });
  await c.chamarOp('GET /colaborador/autocomplete', {}, { token, status: 200, query: { busca: usuario.nome } });
  const filtro = await c.chamarOp('GET /colaborador/filtro', {}, { token, status: 200 });
  const colaborador = filtro.body.find((x: any) => x.auth_id === usuario.id);
  const master = filtro.body.find((x: any) => x.master);
  await c.chamarOp('GET /colaborador/total', {}, { token, status: 200 });
  await c.chamarOp('GET /colaborador/total', {}, { token, status: 200, query: { nome: '  ', setor: '', ativo: '' } });
  const filtrado = await c.chamarOp('GET /colaborador/filtro', {}, { token, status: 200, query: { email: ` ${usuario.email} `, perfil_acesso_id: '', ativo: 'true' } });
  expect(filtrado.body.map((x: any) => x.auth_id)).toEqual([usuario.id]);
  await c.chamarOp('GET /colaborador/filtro', {}, { token, status: 400, query: { ativo: 'talvez' } });
  await c.chamarOp('GET /colaborador/{id}', { id: ` ${colaborador.id.toUpperCase()} ` }, { token, status: 200, tolerada: true });
  await c.chamarOp('GET /colaborador/{id}', { id: colaborador.id }, { token, status: 200 });
  await c.chamarOp('GET /colaborador/{id}', { id: 'nao-existe' }, { token, status: 404 });

  const permissoes = { colaboradores: ['ler'] };
  const perfil = (await c.chamarOp('POST /perfil_acesso', {}, { token, status: 201, body: { nome: unico('Perfil '), permissoes } })).body;
  await c.chamarOp('POST /perfil_acesso', {}, { token, status: 409, body: { nome: perfil.nome, permissoes } });
  await c.chamarOp('POST /perfil_acesso', {}, { token, status: 400, body: { nome: unico('Perfil '), permissoes: { nao_e_area: ['ler'] } } });
  // a blank name is refused once trimmed, and the document says so
  await c.chamarOp('POST /perfil_acesso', {}, { token, status: 400, body: { nome: ' \t ', permissoes } });
  await c.chamarOp('GET /perfil_acesso', {}, { token, status: 200 });
  await c.chamarOp('GET /perfil_acesso/filtro', {}, { token, status: 200 });
  await c.chamarOp('GET /perfil_acesso/{id}', { id: perfil.id }, { token, status: 200 });
  await c.chamarOp('PATCH /perfil_acesso/{id}', { id: perfil.id }, { token, status: 200, body: { descricao: null } });
  await c.chamarOp('PATCH /colaborador/{id}/perfil_acesso', { id: colaborador.id }, { token, status: 200, body: { perfil_acesso_id: perfil.id } });
  await c.chamarOp('DELETE /perfil_acesso/{id}', { id: perfil.id }, { token, status: 409 });
  await c.chamarOp('PATCH /colaborador/{id}/perfil_acesso', { id: colaborador.id }, { token, status: 422, body: { perfil_acesso_id: 'nao-existe' } });
  await c.chamarOp('PATCH /colaborador/{id}/perfil_acesso', { id: master.id }, { token, status: 409, body: { perfil_acesso_id: perfil.id } });
  await c.chamarOp('PATCH /colaborador/{id}/perfil_acesso', { id: colaborador.id }, { token, status: 200, body: { perfil_acesso_id: null } });
  await c.chamarOp('DELETE /perfil_acesso/{id}', { id: perfil.id }, { token, status: 204 });
  await c.chamarOp('GET /perfil_acesso/{id}', { id: perfil.id }, { token, status: 404 });
  // a collaborator without a profile is refused every read of the module
  const semPerfil = await acesso.pessoa({ permissoes: null });
  await c.chamarOp('GET /colaborador', {}, { token: semPerfil.token, status: 403 });
}

describe('identity', () => {
  let c: Conformidade;
  const identity = () => identityDe(suite.url.identity);
  beforeAll(async () => {
    c = await documentoDe('identity');
  });

  test('public and protected operations are marked as such', async () => {
    await conferirSeguranca(c, ['GET /saude', 'GET /pronto', 'GET /openapi.json', 'POST /auth/login', 'POST /auth/token', 'GET /.well-known/jwks.json']);
  });

  test('answers conform to the document', async () => {
    const id = identity();
    const token = await id.admin();
    await conferirRotasDeServico(c);
    await c.chamarOp('GET /.well-known/jwks.json', {}, { status: 200 });
    await c.chamarOp('POST /auth/login', {}, { status: 200, body: { email: 'admin@suite.test', senha: 'Admin-Senha-Forte-1' } });
    await c.chamarOp('POST /auth/login', {}, { status: 401, body: { email: 'admin@suite.test', senha: 'errada' } });
    await c.chamarOp('POST /auth/login', {}, { status: 400, body: { email: 'nao-e-email' } });

    // sectors, positions and functions
    const cadastros: Record<string, string> = {};
    for (const tipo of ['setor', 'cargo', 'funcao']) {
      const nome = unico(`${tipo} `);
      cadastros[tipo] = (await c.chamarOp(`POST /${tipo}`, {}, { token, status: 201, body: { nome } })).body.id;
      await c.chamarOp(`POST /${tipo}`, {}, { token, status: 409, body: { nome } });
      await c.chamarOp(`POST /${tipo}`, {}, { token, status: 400, body: { nome: '   ' } });
      await c.chamarOp(`GET /${tipo}`, {}, { token, status: 200 });
    }

    // users: one with every reference and one with none (its nullable fields null)
    const email = `${unico('p')}@suite.test`;
    const completo = await c.chamarOp('POST /usuario', {}, {
      token,
      status: 201,
      body: { nome: unico('Pessoa '), email, perfil: 'colaborador', senha: 'Senha-Forte-123', setor_id: cadastros.setor, cargo_id: cadastros.cargo, funcao_id: cadastros.funcao, imagem: 'https://img.test/a.png' },
    });
    const vazio = await c.chamarOp('POST /usuario', {}, { token, status: 201, body: { nome: unico('Pessoa '), email: `${unico('q')}@suite.test`, perfil: 'cliente' } });
    expect(vazio.body.setor).toBeNull();
    await c.chamarOp('POST /usuario', {}, { token, status: 409, body: { nome: 'Outra', email, perfil: 'cliente' } });
    await c.chamarOp('POST /usuario', {}, { token, status: 422, body: { nome: 'Outra', email: `${unico('r')}@suite.test`, perfil: 'cliente', setor_id: 'nao-existe' } });
    await c.chamarOp('POST /usuario', {}, { token, status: 400, body: { nome: 'Outra', email: `${unico('r')}@suite.test`, perfil: 'outro' } });
    await c.chamarOp('GET /usuario', {}, { token, status: 200 });
    await c.chamarOp('GET /usuario', {}, { token, status: 200, query: { busca: ` ${email} `, perfil: '' } });
    await c.chamarOp('GET /usuario', {}, { token, status: 400, query: { perfil: 'outro' } });
    await c.chamarOp('GET /usuario/autocomplete', {}, { token, status: 200 });
    await c.chamarOp('GET /usuario/filtro', {}, { token, status: 200, query: { perfil: 'cliente' } });
    await c.chamarOp('GET /usuario/{id}', { id: completo.body.id }, { token, status: 200 });
    await c.chamarOp('GET /usuario/{id}', { id: 'nao-existe' }, { token, status: 404 });
    await c.chamarOp('PATCH /usuario/{id}', { id: completo.body.id }, { token, status: 200, body: { setor_id: null } });
    await c.chamarOp('PATCH /usuario/{id}', { id: completo.body.id }, { token, status: 409, body: { email: 'admin@suite.test' } });
    const proprio = await id.login(email, 'Senha-Forte-123');
    await c.chamarOp('GET /usuario/{id}', { id: completo.body.id }, { token: proprio, status: 200 });
    await c.chamarOp('GET /usuario/{id}', { id: vazio.body.id }, { token: proprio, status: 403 });
    await c.chamarOp('GET /usuario', {}, { token: proprio, status: 403 });
    await c.chamarOp('DELETE /usuario/{id}', { id: vazio.body.id }, { token, status: 204 });
    await c.chamarOp('DELETE /usuario/{id}', { id: vazio.body.id }, { token, status: 404 });

    // applications
    const app = await c.chamarOp('POST /aplicativo', {}, { token, status: 201, body: { nome: unico('App ') } });
    const tokenDoApp = await c.chamarOp('POST /auth/token', {}, { status: 200, body: { client_id: app.body.client_id, client_secret: app.body.client_secret } });
    await c.chamarOp('POST /auth/token', {}, { status: 401, body: { client_id: app.body.client_id, client_secret: 'errado' } });
    await c.chamarOp('GET /aplicativo', {}, { token: tokenDoApp.body.access_token, status: 200 });
    await c.chamarOp('GET /aplicativo/{id}', { id: app.body.id }, { token, status: 200 });
    await c.chamarOp('PATCH /aplicativo/{id}', { id: app.body.id }, { token, status: 200, body: { descricao: null } });
    await c.chamarOp('POST /aplicativo/{id}/segredo', { id: app.body.id }, { token, status: 200 });
    await c.chamarOp('DELETE /aplicativo/{id}', { id: app.body.id }, { token, status: 204 });
    await c.chamarOp('GET /aplicativo/{id}', { id: app.body.id }, { token, status: 404 });
    conferirCobertura(c);
  });
});

describe('intranet', () => {
  let c: Conformidade;
  beforeAll(async () => {
    c = await documentoDe('intranet');
  });

  test('public and protected operations are marked as such', async () => {
    await conferirSeguranca(c, ['GET /saude', 'GET /pronto', 'GET /openapi.json']);
  });

  test('answers conform to the document', async () => {
    await conferirRotasDeServico(c);
    await conferirModuloDeAcesso(c, 'intranet');
    conferirCobertura(c);
  });
});

describe('leads', () => {
  let c: Conformidade;
  const COMPLETO = novoCnpj('0001');
  const ESPARSO = novoCnpj('0002');
  beforeAll(async () => {
    c = await documentoDe('leads');
    const b = (cnpj: string) => cnpj.slice(0, 8);
    await importarCnpj(
      await escreverMes(dirs.novo(), {
        estabelecimentos: [
          linhaDeEstabelecimento({
            cnpj: COMPLETO,
            nome_fantasia: 'COMPLETA',
            situacao_cadastral: '02',
            data_situacao_cadastral: '20230301',
            data_inicio_atividade: '20100115',
            cnae_fiscal_principal: '6204000',
            cep: '01310100',
            uf: 'SP',
            municipio: '7107',
            ddd_1: '11',
            telefone_1: '30000001',
            correio_eletronico: 'contato@completa.test',
          }),
          linhaDeEstabelecimento({ cnpj: ESPARSO }),
        ],
        empresas: [linhaDeEmpresa({ cnpj_basico: b(COMPLETO), razao_social: 'COMPLETA S.A.', natureza_juridica: '2062', capital_social: '1500,50', porte_empresa: '03' })],
        socios: [linhaDeSocio({ cnpj_basico: b(COMPLETO), nome_socio_razao_social: 'ANA SOCIA', qualificacao_socio: '49', data_entrada_sociedade: '20150505' })],
        simples: [linhaDoSimples({ cnpj_basico: b(COMPLETO), data_opcao_simples: '20140101' })],
      }),
    );
  });

  test('public and protected operations are marked as such', async () => {
    await conferirSeguranca(c, ['GET /saude', 'GET /pronto', 'GET /openapi.json', 'GET /api/cnpj/{cnpj}']);
  });

  test('answers conform to the document', async () => {
    await conferirRotasDeServico(c);
    const completo = await c.chamarOp('GET /api/cnpj/{cnpj}', { cnpj: COMPLETO }, { status: 200 });
    expect(completo.body.socios).toHaveLength(1);
    const esparso = await c.chamarOp('GET /api/cnpj/{cnpj}', { cnpj: ESPARSO }, { status: 200 });
    expect(Object.values(esparso.body)).toContain(null);
    await c.chamarOp('GET /api/cnpj/{cnpj}', { cnpj: `${COMPLETO.slice(0, 2)}.${COMPLETO.slice(2, 5)}.${COMPLETO.slice(5, 8)}/${COMPLETO.slice(8, 12)}-${COMPLETO.slice(12)}` }, { status: 200 });
    // the check digits are the service's own rule
    await c.chamarOp('GET /api/cnpj/{cnpj}', { cnpj: '123' }, { status: 400, alemDoDocumento: true });
    await c.chamarOp('GET /api/cnpj/{cnpj}', { cnpj: novoCnpj() }, { status: 404 });
    const token = await identityDe(suite.url.identity).admin();
    const pagina = await c.chamarOp('GET /api/empresas', {}, { token, status: 200, query: { uf: 'SP' } });
    expect(pagina.body.itens.length).toBeGreaterThan(0);
    await c.chamarOp('GET /api/empresas', {}, { token, status: 200 });
    await c.chamarOp('GET /api/empresas', {}, { token, status: 400, query: { pagina: 'um' } });

    // every filter of the establishment above, in the form its document states and as people write them
    const canonicos = {
      uf: 'SP',
      municipio: '7107',
      cnae: '6204000',
      situacao_cadastral: '02',
      natureza_juridica: '2062',
      porte: '03',
      matriz_filial: '1',
      opcao_simples: 'S',
      data_inicio_de: '20100101',
      data_inicio_ate: '20101231',
      capital_social_min: '1000.50',
      capital_social_max: '1500.5',
      ddd: '11',
      tem_email: 'true',
      cep: '01310100',
      nome: 'completa',
    };
    const comoEscritos = {
      uf: ' sp ',
      municipio: '7107 ',
      cnae: '6204-0/00',
      situacao_cadastral: '2',
      natureza_juridica: '206-2',
      porte: '3',
      matriz_filial: ' 1',
      opcao_simples: 's',
      data_inicio_de: ' 20100101 ',
      data_inicio_ate: '20101231',
      capital_social_min: '1000,50',
      capital_social_max: ' 1500,5 ',
      ddd: ' 11 ',
      tem_email: 'true',
      cep: '01.310-100',
      nome: 'completa',
    };
    for (const [query, tolerada] of [[canonicos, false], [comoEscritos, true]] as const) {
      const filtrada = await c.chamarOp('GET /api/empresas', {}, { token, status: 200, query, tolerada });
      expect(filtrada.body.itens.map((e: any) => e.cnpj)).toEqual([COMPLETO]);
    }
    // empty values are taken as absent, and blank ones (a blank boolean too, which its documented type cannot say)
    for (const [vazio, tolerada] of [['', false], ['  ', true]] as const) {
      const query = Object.fromEntries(Object.keys(canonicos).map((nome) => [nome, nome.startsWith('tem_') ? '' : vazio]));
      await c.chamarOp('GET /api/empresas', {}, { token, status: 200, query, tolerada });
    }
    for (const query of [{ ddd: '1' }, { uf: 'XX' }, { capital_social_min: '1.000,50' }, { data_inicio_de: '20101301' }, { cnae: '620' }, { opcao_mei: 'talvez' }]) {
      await c.chamarOp('GET /api/empresas', {}, { token, status: 400, query });
    }
    // a code the Receita does not use, and a range whose end comes before its start: rules of the service's own
    await c.chamarOp('GET /api/empresas', {}, { token, status: 400, query: { situacao_cadastral: '05' }, alemDoDocumento: true });
    await c.chamarOp('GET /api/empresas', {}, { token, status: 400, query: { data_inicio_de: '20200101', data_inicio_ate: '20100101' }, alemDoDocumento: true });
    await conferirModuloDeAcesso(c, 'leads');
    conferirCobertura(c);
  });
});

describe('hub', () => {
  let c: Conformidade;
  beforeAll(async () => {
    c = await documentoDe('hub');
  });

  test('public and protected operations are marked as such', async () => {
    await conferirSeguranca(c, ['GET /saude', 'GET /pronto', 'GET /openapi.json', 'GET /.well-known/jwks.json']);
  });

  test('answers conform to the document', async () => {
    const identity = identityDe(suite.url.identity);
    const token = await identity.admin();
    await conferirRotasDeServico(c);
    await c.chamarOp('GET /.well-known/jwks.json', {}, { status: 200 });

    // applications: made in identity, synced by a master's listing
    const publicador = await identity.criarAplicativo(unico('Publicador '));
    const assinante = await identity.criarAplicativo(unico('Assinante '));
    await c.chamarOp('GET /aplicativo', {}, { token, status: 200, query: { tamanho: 1000 } });
    const apps = (await c.chamarOp('GET /aplicativo/filtro', {}, { token, status: 200 })).body as any[];
    const doHub = (idNoIdentity: string) => apps.find((a) => a.identificador_no_auth === idNoIdentity);
    await c.chamarOp('GET /aplicativo/autocomplete', {}, { token, status: 200 });
    await c.chamarOp('GET /aplicativo/{id}', { id: doHub(publicador.id).id }, { token, status: 200 });
    await c.chamarOp('GET /aplicativo/{id}', { id: 'nao-existe' }, { token, status: 404 });

    // event types and versions
    const tipo = (await c.chamarOp('POST /tipo_de_evento', {}, { token, status: 201, body: { nome: `${unico('t')}.criado`, aplicativo_id: doHub(publicador.id).id } })).body;
    await c.chamarOp('POST /tipo_de_evento', {}, { token, status: 409, body: { nome: tipo.nome, aplicativo_id: doHub(publicador.id).id } });
    await c.chamarOp('POST /tipo_de_evento', {}, { token, status: 422, body: { nome: `${unico('t')}.criado`, aplicativo_id: 'nao-existe' } });
    const esquema = { type: 'object', properties: { numero: { type: 'integer' } } };
    await c.chamarOp('POST /tipo_de_evento/{id}/versao', { id: tipo.id }, { token, status: 201, body: { esquema } });
    await c.chamarOp('POST /tipo_de_evento/{id}/versao', { id: tipo.id }, { token, status: 201, body: { esquema } });
    await c.chamarOp('GET /tipo_de_evento', {}, { token, status: 200 });
    await c.chamarOp('GET /tipo_de_evento/{id}', { id: tipo.id }, { token, status: 200 });
    await c.chamarOp('PATCH /tipo_de_evento/{id}', { id: tipo.id }, { token, status: 200, body: { descricao: 'um tipo' } });
    await c.chamarOp('GET /tipo_de_evento/{id}/versao/{versao}', { id: tipo.id, versao: '1' }, { token, status: 200 });
    await c.chamarOp('GET /tipo_de_evento/{id}/versao/{versao}', { id: tipo.id, versao: '9' }, { token, status: 404 });
    await c.chamarOp('PATCH /tipo_de_evento/{id}/versao/{versao}', { id: tipo.id, versao: '2' }, { token, status: 200, body: { situacao: 'desligada' } });

    // subscriptions
    const corpo = { aplicativo_assinante_id: doHub(assinante.id).id, tipo_de_evento_id: tipo.id, url_de_destino: 'http://localhost:9/webhook', versao_do_esquema: 1 };
    await c.chamarOp('POST /assinatura', {}, { token, status: 422, body: { ...corpo, versao_do_esquema: 2 } });
    const assinatura = (await c.chamarOp('POST /assinatura', {}, { token, status: 201, body: corpo })).body;
    expect(assinatura.ultima_entrega_em).toBeNull();
    await c.chamarOp('POST /assinatura', {}, { token, status: 409, body: corpo });
    await c.chamarOp('POST /assinatura', {}, { token, status: 400, body: { ...corpo, maximo_de_tentativas: 21 } });
    await c.chamarOp('GET /assinatura', {}, { token, status: 200 });
    await c.chamarOp('GET /assinatura/autocomplete', {}, { token, status: 200 });
    await c.chamarOp('GET /assinatura/filtro', {}, { token, status: 200, query: { ativa: true } });
    const porAssinante = await c.chamarOp('GET /assinatura/filtro', {}, { token, status: 200, query: { aplicativo_assinante_id: ` ${corpo.aplicativo_assinante_id.toUpperCase()} `, tipo_de_evento_id: '', ativa: '' }, tolerada: true });
    expect(porAssinante.body.map((a: any) => a.id)).toEqual([assinatura.id]);
    await c.chamarOp('GET /assinatura/{id}', { id: assinatura.id }, { token, status: 200 });
    await c.chamarOp('PATCH /assinatura/{id}', { id: assinatura.id }, { token, status: 200, body: { maximo_de_tentativas: 3 } });
    await c.chamarOp('PATCH /assinatura/{id}', { id: assinatura.id }, { token, status: 422, body: { versao_do_esquema: 2 } });
    await c.chamarOp('DELETE /tipo_de_evento/{id}', { id: tipo.id }, { token, status: 409 });

    // events and deliveries
    await c.chamarOp('POST /eventos', {}, { token: publicador.token, status: 202, body: { tipo: tipo.nome, versao: 1, dados: { numero: 1 } } });
    await c.chamarOp('POST /eventos', {}, { token: publicador.token, status: 202, body: { tipo: tipo.nome, versao: 1, dados: { numero: 2 }, id: unico('evento-') } });
    await c.chamarOp('POST /eventos', {}, { token: publicador.token, status: 400, body: { tipo: tipo.nome, versao: 1, dados: { numero: 3 }, id: '  ' } });
    await c.chamarOp('POST /eventos', {}, { token: publicador.token, status: 422, body: { tipo: tipo.nome, versao: 9, dados: { numero: 1 } } });
    await c.chamarOp('POST /eventos', {}, { token: publicador.token, status: 400, body: { tipo: tipo.nome, versao: 1, dados: { numero: 'um' } }, alemDoDocumento: true });
    await c.chamarOp('POST /eventos', {}, { token: assinante.token, status: 403, body: { tipo: tipo.nome, versao: 1, dados: { numero: 1 } } });
    await c.chamarOp('POST /eventos', {}, { token, status: 403, body: { tipo: tipo.nome, versao: 1, dados: { numero: 1 } } });
    const entregas = await c.chamarOp('GET /entrega', {}, { token, status: 200, query: { assinatura_id: assinatura.id } });
    const entrega = entregas.body.itens[0];
    await c.chamarOp('GET /entrega', {}, { token, status: 200, query: { assinatura_id: ` ${assinatura.id} `, situacao: '' }, tolerada: true });
    await c.chamarOp('GET /entrega', {}, { token, status: 400, query: { situacao: 'perdida' } });
    await c.chamarOp('GET /entrega/{id}', { id: entrega.id }, { token, status: 200 });
    await c.chamarOp('POST /entrega/{id}/reenviar', { id: entrega.id }, { token, status: 409 });
    await banco('hub').query(`UPDATE entrega SET situacao = 'fila_de_erro', tentativas = 3 WHERE id = ?`, { replacements: [entrega.id] });
    await c.chamarOp('POST /entrega/{id}/reenviar', { id: entrega.id }, { token, status: 202 });
    await banco('hub').query(`UPDATE entrega SET situacao = 'fila_de_erro', tentativas = 3 WHERE id = ?`, { replacements: [entrega.id] });
    await c.chamarOp('POST /assinatura/{id}/reenviar_falhas', { id: assinatura.id }, { token, status: 202 });
    await c.chamarOp('PATCH /assinatura/{id}', { id: assinatura.id }, { token, status: 200, body: { ativa: false } });
    await c.chamarOp('POST /assinatura/{id}/reenviar_falhas', { id: assinatura.id }, { token, status: 409 });

    await c.chamarOp('DELETE /assinatura/{id}', { id: assinatura.id }, { token, status: 204 });
    await c.chamarOp('GET /assinatura/{id}', { id: assinatura.id }, { token, status: 404 });
    await c.chamarOp('DELETE /tipo_de_evento/{id}', { id: tipo.id }, { token, status: 204 });

    await conferirModuloDeAcesso(c, 'hub');
    conferirCobertura(c);
  });
});

describe('sales', () => {
  let c: Conformidade;
  beforeAll(async () => {
    c = await documentoDe('sales');
  });

  test('public and protected operations are marked as such', async () => {
    await conferirSeguranca(c, ['GET /saude', 'GET /pronto', 'GET /openapi.json', 'POST /webhooks/suporte/{config_id}', 'POST /webhooks/gateway/{config_id}']);
    // the webhooks take their system's token in the query string, and their 401 asks for that one
    // (its header is checked against every 401 they answer below)
    for (const op of ['POST /webhooks/suporte/{config_id}', 'POST /webhooks/gateway/{config_id}']) {
      expect(c.operacao(op).parameters).toEqual(expect.arrayContaining([expect.objectContaining({ name: 'token', in: 'query' })]));
      expect(c.operacao(op).responses['401'].headers['WWW-Authenticate'].schema.const).toBe('Query-Token name="token"');
      // and say so as their security requirement: an API key in that parameter
      expect(c.operacao(op).security).toEqual([{ token_na_query: [] }]);
    }
    expect(c.doc.components.securitySchemes.token_na_query).toEqual({ type: 'apiKey', in: 'query', name: 'token' });
    // the public routes without any credential say none
    for (const op of ['GET /saude', 'GET /pronto', 'GET /openapi.json']) expect(c.operacao(op).security).toBeUndefined();
  });

  test('answers conform to the document', async () => {
    const token = await identityDe(suite.url.identity).admin();
    await conferirRotasDeServico(c);

    // configured systems
    const suporte = (await c.chamarOp('POST /config_system', {}, { token, status: 201, body: { tipo: 'suporte', nome: unico('Suporte ') } })).body;
    const gateway = (await c.chamarOp('POST /config_system', {}, { token, status: 201, body: { tipo: 'gateway', nome: unico('Gateway ') } })).body;
    const mensageiro = (await c.chamarOp('POST /config_system', {}, { token, status: 201, body: { tipo: 'mensageiro', nome: unico('Numero '), numero: '+55 11 3000-0000' } })).body;
    await c.chamarOp('GET /config_system', {}, { token, status: 200, query: { tipo: '' } });
    await c.chamarOp('GET /config_system/{id}', { id: suporte.id }, { token, status: 200 });
    await c.chamarOp('PATCH /config_system/{id}', { id: suporte.id }, { token, status: 200, body: { url: null } });

    // the webhooks
    const contato = novoContato();
    const conversaNoSuporte = idDoSuporte();
    const webhook = (sistema: any, op: string, body: unknown, o: { token?: string; status: number }) =>
      c.chamarOp(op, { config_id: sistema.id }, { status: o.status, query: { token: o.token ?? sistema.token }, body });
    await webhook(suporte, 'POST /webhooks/suporte/{config_id}', eventoDeMensagem({ conversa: conversaNoSuporte, contato }), { status: 200 });
    await webhook(suporte, 'POST /webhooks/suporte/{config_id}', { event: 'outro' }, { status: 200 });
    await webhook(suporte, 'POST /webhooks/suporte/{config_id}', { event: 'outro' }, { token: 'errado', status: 401 });
    await webhook(suporte, 'POST /webhooks/suporte/{config_id}', {}, { status: 400 });
    // an unknown system is one no token authenticates
    await c.chamarOp('POST /webhooks/suporte/{config_id}', { config_id: 'nao-existe' }, { status: 401, query: { token: 'x' }, body: { event: 'outro' } });
    await webhook(gateway, 'POST /webhooks/gateway/{config_id}', eventoDoGateway(contato.telefone!, mensageiro.numero), { status: 200 });
    await webhook(gateway, 'POST /webhooks/gateway/{config_id}', { event: 'outro' }, { token: 'errado', status: 401 });

    // conversations
    await c.chamarOp('GET /conversa', {}, { token, status: 200 });
    await c.chamarOp('GET /conversa/autocomplete', {}, { token, status: 200 });
    const conversas = await c.chamarOp('GET /conversa/filtro', {}, { token, status: 200, query: { suporte_conversa_id: conversaNoSuporte } });
    const conversa = conversas.body[0];
    const [ddi, ddd, numero] = [contato.telefone!.slice(1, 3), contato.telefone!.slice(3, 5), contato.telefone!.slice(5)];
    const porTelefone = await c.chamarOp('GET /conversa/filtro', {}, {
      token,
      status: 200,
      query: { contato: ` +${ddi} (${ddd}) ${numero.slice(0, 5)}-${numero.slice(5)} `, suporte_conversa_id: '', status: '', cliente_id: '' },
    });
    expect(porTelefone.body.map((x: any) => x.id)).toEqual([conversa.id]);
    await c.chamarOp('GET /conversa', {}, { token, status: 200, query: { status: '' } });
    await c.chamarOp('GET /conversa/filtro', {}, { token, status: 400, query: { suporte_conversa_id: '-1' } });
    await c.chamarOp('GET /conversa/filtro', {}, { token, status: 400, query: { status: 'OPEN' } });
    await c.chamarOp('GET /conversa/{id}', { id: conversa.id }, { token, status: 200 });
    await c.chamarOp('GET /conversa/{id}/mensagens', { id: conversa.id }, { token, status: 200 });
    await c.chamarOp('POST /conversa', {}, { token, status: 403 });

    // customers and robots
    const cliente = (await c.chamarOp('POST /cliente', {}, { token, status: 201, body: { razao_social: unico('Cliente '), cnpj: '33683111000280' } })).body;
    await c.chamarOp('GET /cliente', {}, { token, status: 200 });
    await c.chamarOp('GET /cliente/{id}', { id: cliente.id }, { token, status: 200 });
    await c.chamarOp('PATCH /cliente/{id}', { id: cliente.id }, { token, status: 200, body: { telefone: null } });
    const robo = (await c.chamarOp('POST /robo', {}, { token, status: 201, body: { nome: unico('Robo '), suporte_usuario_id: 7 } })).body;
    await c.chamarOp('GET /robo', {}, { token, status: 200 });
    await c.chamarOp('GET /robo/{id}', { id: robo.id }, { token, status: 200 });
    await c.chamarOp('PATCH /robo/{id}', { id: robo.id }, { token, status: 200, body: { descricao: null } });
    await c.chamarOp('POST /robo', {}, { token, status: 409, body: { nome: unico('Robo '), suporte_usuario_id: 7 } });
    await c.chamarOp('PATCH /conversa/{id}', { id: conversa.id }, { token, status: 200, body: { cliente_id: cliente.id, robo_id: robo.id, status: 'open' } });
    await c.chamarOp('PATCH /conversa/{id}', { id: conversa.id }, { token, status: 422, body: { cliente_id: 'nao-existe' } });
    await c.chamarOp('DELETE /conversa/{id}', { id: conversa.id }, { token, status: 204 });
    await c.chamarOp('GET /conversa/{id}', { id: conversa.id }, { token, status: 404 });
    await c.chamarOp('DELETE /cliente/{id}', { id: cliente.id }, { token, status: 204 });
    await c.chamarOp('DELETE /robo/{id}', { id: robo.id }, { token, status: 204 });
    await c.chamarOp('DELETE /config_system/{id}', { id: mensageiro.id }, { token, status: 204 });

    await conferirModuloDeAcesso(c, 'sales');
    conferirCobertura(c, ['POST /conversa']);
  });
});

describe('files', () => {
  let c: Conformidade;
  beforeAll(async () => {
    c = await documentoDe('files');
  });

  test('public and protected operations are marked as such', async () => {
    await conferirSeguranca(c, ['GET /saude', 'GET /pronto', 'GET /openapi.json', 'GET /arquivo/{id}/conteudo', 'HEAD /arquivo/{id}/conteudo']);
  });

  test('answers conform to the document', async () => {
    await conferirRotasDeServico(c);
    const app = await identityDe(suite.url.identity).criarAplicativo();
    const token = app.token;
    const envio = await c.chamarOp('POST /arquivo', {}, { token, status: 201, query: { nome: 'a.txt' }, raw: 'conteúdo', headers: { 'content-type': 'text/plain' } });
    await c.chamarOp('POST /arquivo', {}, { token, status: 400, raw: 'x', headers: { 'content-type': 'text/plain' } });
    await c.chamarOp('GET /arquivo', {}, { token, status: 200 });
    await c.chamarOp('GET /arquivo/filtro', {}, { token, status: 200, query: { ids: envio.body.id } });
    const comEspacos = await c.chamarOp('POST /arquivo', {}, { token, status: 201, query: { nome: ' b.txt\t' }, raw: 'b', headers: { 'content-type': 'text/plain' }, tolerada: true });
    expect(comEspacos.body.nome).toBe('b.txt');
    await c.chamarOp('GET /arquivo/filtro', {}, { token, status: 200, query: { ids: ` ${envio.body.id.toUpperCase()} , ${comEspacos.body.id} ,` } });
    const comChave = await c.chamarOp('POST /arquivo', {}, { token, status: 201, query: { nome: 'c.txt' }, raw: 'c', headers: { 'content-type': 'text/plain', 'idempotency-key': 'chave-c' } });
    const pelaChave = await c.chamarOp('GET /arquivo/filtro', {}, { token, status: 200, query: { chave: 'chave-c' } });
    expect(pelaChave.body.map((a: { id: string }) => a.id)).toEqual([comChave.body.id]);
    await c.chamarOp('GET /arquivo/{id}', { id: envio.body.id }, { token, status: 200 });
    const url = new URL(envio.body.url);
    await c.chamarOp('GET /arquivo/{id}/conteudo', { id: envio.body.id }, { status: 200, query: Object.fromEntries(url.searchParams) });
    await c.chamarOp('GET /arquivo/{id}/conteudo', { id: envio.body.id }, { status: 403, query: { ...Object.fromEntries(url.searchParams), assinatura: 'errada' } });
    const head = await c.chamarOp('HEAD /arquivo/{id}/conteudo', { id: envio.body.id }, { status: 200, query: Object.fromEntries(url.searchParams) });
    expect(head.headers.get('content-length')).toBe(String(envio.body.tamanho));
    await c.chamarOp('HEAD /arquivo/{id}/conteudo', { id: envio.body.id }, { status: 403, query: { ...Object.fromEntries(url.searchParams), assinatura: 'errada' } });
    const admin = await identityDe(suite.url.identity).admin();
    await c.chamarOp('GET /arquivo', {}, { token: admin, status: 403 });
    await c.chamarOp('DELETE /arquivo/{id}', { id: envio.body.id }, { token, status: 204 });
    await c.chamarOp('GET /arquivo/{id}', { id: envio.body.id }, { token, status: 404 });
    // the access module, as every service with protected routes mounts it (DESIGN §3)
    await conferirModuloDeAcesso(c, 'files');
    conferirCobertura(c);
  });
});
