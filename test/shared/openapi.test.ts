import Ajv2020 from 'ajv/dist/2020';
import { Express } from 'express';
import { SERVICOS_DA_SUITE } from '../../api';
import Joi from 'joi';
import { caminhoOpenApi, documentoOpenApi } from '../../api/shared/openapi';
import { Rota } from '../../api/shared/rotas';
import { NomeDoServico } from '../../config/services';
import { cliente } from '../helpers/http';
import { iniciarSuite, SuiteDeTeste } from '../helpers/suite';

/** Routes Express actually serves, read from its router (not from our route list). */
function rotasMontadas(app: Express): string[] {
  const rotas: string[] = [];
  const visitar = (stack: any[]) => {
    for (const camada of stack) {
      if (camada.route) {
        for (const metodo of Object.keys(camada.route.methods)) rotas.push(`${metodo.toUpperCase()} ${caminhoOpenApi(camada.route.path)}`);
      } else if (camada.handle?.stack) visitar(camada.handle.stack);
    }
  };
  visitar((app as any).router.stack);
  return rotas.sort();
}

function rotasDocumentadas(doc: any): string[] {
  const rotas: string[] = [];
  for (const [caminho, operacoes] of Object.entries<any>(doc.paths)) {
    for (const metodo of Object.keys(operacoes)) rotas.push(`${metodo.toUpperCase()} ${caminho}`);
  }
  return rotas.sort();
}

const OPERACOES_DA_SPEC: Record<string, Record<string, string>> = {
  identity: {
    'GET /usuario': 'buscar_paginador_usuario',
    'GET /usuario/autocomplete': 'buscar_auto_complete_usuario',
    'GET /usuario/filtro': 'buscar_pelo_filtro_usuario',
    'GET /usuario/{id}': 'buscar_pelo_id_usuario',
  },
  leads: {
    // `*cnpj` in the route (a mask's slash may come unencoded), one parameter in the document
    'GET /api/cnpj/{cnpj}': 'buscar_pelo_id_cnpj',
    'GET /api/empresas': 'buscar_paginador_cnpj',
  },
  hub: {
    'GET /assinatura': 'buscar_paginador_assinatura',
    'POST /assinatura': 'criar_assinatura',
    'GET /assinatura/autocomplete': 'buscar_auto_complete_assinatura',
    'GET /assinatura/filtro': 'buscar_pelo_filtro_assinatura',
    'GET /assinatura/{id}': 'buscar_pelo_id_assinatura',
    'PATCH /assinatura/{id}': 'atualizar_pelo_id_assinatura',
    'DELETE /assinatura/{id}': 'deletar_pelo_id_assinatura',
    'GET /aplicativo': 'buscar_paginador_aplicativo',
    'GET /aplicativo/autocomplete': 'buscar_auto_complete_aplicativo',
    'GET /aplicativo/filtro': 'buscar_pelo_filtro_aplicativo',
    'GET /aplicativo/{id}': 'buscar_pelo_id_aplicativo',
    'GET /colaborador': 'buscar_paginador_colaborador',
  },
  intranet: {
    'GET /colaborador': 'buscar_paginador_colaborador',
    'GET /colaborador/autocomplete': 'buscar_auto_complete_colaborador',
    'GET /colaborador/filtro': 'buscar_pelo_filtro_colaborador',
    'GET /colaborador/total': 'buscar_total_colaborador',
    'GET /colaborador/{id}': 'buscar_pelo_id_colaborador',
    'PATCH /colaborador/{id}/perfil_acesso': 'vincular_perfil_acesso_colaborador',
  },
  sales: {
    'GET /conversa': 'buscar_paginador_conversa',
    'POST /conversa': 'criar_conversa',
    'GET /conversa/autocomplete': 'buscar_auto_complete_conversa',
    'GET /conversa/filtro': 'buscar_pelo_filtro_conversa',
    'GET /conversa/{id}': 'buscar_pelo_id_conversa',
    'PATCH /conversa/{id}': 'atualizar_pelo_id_conversa',
    'DELETE /conversa/{id}': 'deletar_pelo_id_conversa',
    'GET /conversa/{id}/mensagens': 'buscar_mensagens_conversa',
  },
};

let suite: SuiteDeTeste;
beforeAll(async () => {
  suite = await iniciarSuite(Object.keys(SERVICOS_DA_SUITE) as NomeDoServico[], { workers: false });
});
afterAll(() => suite.encerrar());

describe.each(Object.keys(SERVICOS_DA_SUITE))('GET /openapi.json of %s (DESIGN §4)', (nome) => {
  let doc: any;
  beforeAll(async () => {
    const res = await cliente(suite.url[nome]).get('/openapi.json');
    expect(res.status).toBe(200);
    doc = res.body;
  });

  test('is an OpenAPI 3.1 document', () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info).toEqual(expect.objectContaining({ title: expect.any(String), version: expect.any(String) }));
  });

  test('documents exactly the routes the service mounts', () => {
    const app = SERVICOS_DA_SUITE[nome as keyof typeof SERVICOS_DA_SUITE]!.app();
    const [head, outras] = [rotasDocumentadas(doc).filter((r) => r.startsWith('HEAD ')), rotasDocumentadas(doc).filter((r) => !r.startsWith('HEAD '))];
    expect(outras).toEqual(rotasMontadas(app));
    // Express answers HEAD on every GET route; a document lists it where clients use it
    for (const r of head) expect(rotasMontadas(app)).toContain(r.replace(/^HEAD/, 'GET'));
  });

  test("names each operation with SPEC's operation name, every operationId unique", () => {
    const ids = Object.values<any>(doc.paths).flatMap((ops) => Object.values<any>(ops).map((o) => o.operationId));
    expect(new Set(ids).size).toBe(ids.length);
    for (const [rota, operacao] of Object.entries(OPERACOES_DA_SPEC[nome] ?? {})) {
      const [metodo, caminho] = rota.split(' ');
      expect(doc.paths[caminho]?.[metodo.toLowerCase()]?.operationId).toBe(operacao);
    }
  });

  test('describes query parameters and bodies from the validation schemas', () => {
    for (const ops of Object.values<any>(doc.paths)) {
      for (const [metodo, op] of Object.entries<any>(ops)) {
        for (const p of op.parameters) expect(p.schema).toEqual(expect.any(Object));
        if (metodo === 'post' && op.requestBody?.content['application/json']) {
          expect(op.requestBody.content['application/json'].schema.type).toBe('object');
        }
      }
    }
  });
});

describe('answers beyond the usual ones, and the fields SPEC requires, are in the documents', () => {
  const documento = async (nome: string) => (await cliente(suite.url[nome]).get('/openapi.json')).body;

  test('rate-limited public routes document their 429; the listing its 503; uploads 413/415; the signed download 403', async () => {
    const leads = await documento('leads');
    expect(Object.keys(leads.paths['/api/cnpj/{cnpj}'].get.responses)).toEqual(expect.arrayContaining(['200', '400', '404', '429']));
    // each says when to try again, as every 429 and 503 sends it
    const retryAfter = { 'Retry-After': expect.objectContaining({ required: true, schema: { type: 'integer', minimum: 1 } }) };
    for (const status of ['429', '503']) expect(leads.paths['/api/cnpj/{cnpj}'].get.responses[status].headers).toEqual(retryAfter);
    expect(Object.keys(leads.paths['/api/empresas'].get.responses)).toEqual(expect.arrayContaining(['503']));
    const identity = await documento('identity');
    for (const caminho of ['/auth/login', '/auth/token']) expect(Object.keys(identity.paths[caminho].post.responses)).toContain('429');
    expect(identity.paths['/auth/login'].post.responses['423'].headers).toEqual(retryAfter);
    // a route reading JSON may answer 415; a webhook, whose system is its credential, never 404
    expect(Object.keys(identity.paths['/auth/login'].post.responses)).toContain('415');
    // rules the schema cannot say are said in words: a subscription's address, a CNPJ's check digits
    const hub = await documento('hub');
    // but the publication stored without an id: repeating it would publish another event
    expect(hub.paths['/eventos'].post.responses['503'].headers['Retry-After']).toEqual(expect.objectContaining({ required: false, description: expect.stringContaining('sem id') }));
    expect(hub.paths['/assinatura'].post.requestBody.content['application/json'].schema.properties.url_de_destino.description).toMatch(/^https; http só para localhost/);
    expect(leads.paths['/api/cnpj/{cnpj}'].get.parameters[0].description).toContain('verificadores, que são conferidos');
    const sales = await documento('sales');
    for (const caminho of ['/webhooks/suporte/{config_id}', '/webhooks/gateway/{config_id}']) {
      expect(Object.keys(sales.paths[caminho].post.responses)).toEqual(expect.arrayContaining(['401', '415']));
      expect(Object.keys(sales.paths[caminho].post.responses)).not.toContain('404');
    }
    // the chat platform's signature headers, which the webhook checks itself
    expect(sales.paths['/webhooks/suporte/{config_id}'].post.parameters.filter((p: any) => p.in === 'header').map((p: any) => [p.name, p.required])).toEqual([
      ['X-Chatwoot-Signature', false],
      ['X-Chatwoot-Timestamp', false],
    ]);
    // a listing's `tamanho` is taken and ignored (SPEC 4.6), and said to be
    expect(sales.paths['/conversa'].get.parameters.find((p: any) => p.name === 'tamanho').description).toMatch(/ignorado/);
    // the keys in memory: the JWKS never waits on a dependency
    expect(Object.keys(identity.paths['/.well-known/jwks.json'].get.responses)).not.toContain('503');
    const files = await documento('files');
    expect(Object.keys(files.paths['/arquivo'].post.responses)).toEqual(expect.arrayContaining(['201', '409', '413', '415', '422']));
    // the headers the upload reads itself are parameters too
    expect(files.paths['/arquivo'].post.parameters).toEqual(
      expect.arrayContaining([expect.objectContaining({ name: 'Idempotency-Key', in: 'header', required: false, schema: expect.objectContaining({ maxLength: 255 }) })]),
    );
    // a file name's 255 characters, checked by the service in characters (JSON Schema counts them so too)
    expect(files.paths['/arquivo'].post.parameters).toEqual(
      expect.arrayContaining([expect.objectContaining({ name: 'nome', in: 'query', schema: expect.objectContaining({ maxLength: 255 }) })]),
    );
    // the upload's body and the download's answer are the file's bytes, of any media type
    expect(files.paths['/arquivo'].post.requestBody.content).toEqual({ '*/*': { schema: { type: 'string', format: 'binary' } } });
    expect(files.paths['/arquivo/{id}/conteudo'].get.responses['200'].content).toEqual({ '*/*': { schema: { type: 'string', format: 'binary' } } });
    expect(Object.keys(files.paths['/arquivo/{id}/conteudo'].get.responses)).toContain('403');
    expect(files.paths['/arquivo/{id}/conteudo'].get.responses['403'].content['application/problem+json']).toBeDefined();
    // its HEAD (the size, type and digest before the bytes): the same operation, no body in any answer
    const { get, head } = files.paths['/arquivo/{id}/conteudo'];
    expect(head).toEqual(expect.objectContaining({ operationId: 'baixar_conteudo_arquivo_cabecalhos', parameters: get.parameters }));
    expect(Object.keys(head.responses)).toEqual(Object.keys(get.responses));
    for (const resposta of Object.values<any>(head.responses)) expect(resposta.content).toBeUndefined();
    // and only there: no other route's HEAD is documented
    for (const nome of Object.keys(SERVICOS_DA_SUITE)) {
      const comHead = Object.entries<any>((await documento(nome)).paths).filter(([, ops]) => ops.head).map(([caminho]) => `${nome} ${caminho}`);
      expect(comHead).toEqual(nome === 'files' ? ['files /arquivo/{id}/conteudo'] : []);
    }
  });

  test('each operation says which token it takes and whom its permission lets in, in words and in x-acesso / x-permissao', async () => {
    const identity = await documento('identity');
    const hub = await documento('hub');
    const sales = await documento('sales');
    const leads = await documento('leads');
    const files = await documento('files');
    const permissao = (doc: any, caminho: string, metodo: string) => [doc.paths[caminho][metodo]['x-acesso'], doc.paths[caminho][metodo]['x-permissao']];
    expect(permissao(identity, '/usuario', 'get')).toEqual(['usuario', 'um master']);
    expect(permissao(identity, '/usuario/{id}', 'get')).toEqual(['usuario', 'um master, ou o próprio usuário']);
    expect(permissao(identity, '/aplicativo', 'get')).toEqual(['usuario_ou_aplicativo', 'um master ou um aplicativo']);
    expect(permissao(hub, '/assinatura', 'post')).toEqual(['usuario', 'criar na área assinaturas (ou master, confirmado no identity)']);
    expect(permissao(hub, '/assinatura', 'get')).toEqual(['usuario', 'ler na área assinaturas ou monitoramento (ou master)']);
    expect(permissao(hub, '/eventos', 'post')).toEqual(['aplicativo', 'o aplicativo dono do tipo de evento, ativo']);
    expect(permissao(sales, '/conversa', 'get')).toEqual(['usuario', 'qualquer permissão na área clientes (ou master)']);
    expect(permissao(sales, '/config_system', 'post')).toEqual(['usuario', 'um master, confirmado no identity']);
    expect(permissao(leads, '/api/empresas', 'get')).toEqual(['usuario', 'qualquer permissão na área empresas (ou master)']);
    // a token of the right kind is all an application's file routes ask
    expect(permissao(files, '/arquivo', 'post')).toEqual(['aplicativo', undefined]);
    expect(hub.paths['/assinatura'].post.description).toContain('Acesso: token de usuário; criar na área assinaturas (ou master, confirmado no identity).');
    expect(files.paths['/arquivo'].post.description).toMatch(/Acesso: token de aplicativo\.$/);
    // every operation that asks for a token says which, and a public one says nothing
    for (const nome of Object.keys(SERVICOS_DA_SUITE)) {
      for (const [caminho, operacoes] of Object.entries<any>((await documento(nome)).paths)) {
        for (const [metodo, op] of Object.entries<any>(operacoes)) {
          const bearer = Boolean(op.security?.some((s: Record<string, unknown>) => 'bearer' in s));
          expect([`${nome} ${metodo} ${caminho}`, Boolean(op['x-acesso'])]).toEqual([`${nome} ${metodo} ${caminho}`, bearer]);
        }
      }
    }
  });

  test('every number an answer carries (a count, a page, a size, an id of another platform), and every one a request takes (a version, a link\'s expiry), is documented as an integer', async () => {
    const numeros: string[] = [];
    const visitar = (no: unknown, onde: string): void => {
      if (!no || typeof no !== 'object') return;
      // a number, or null (free JSON, of any type, is not one)
      const tipos = [(no as { type?: unknown }).type].flat().filter((t) => t !== 'null');
      if (tipos.length === 1 && tipos[0] === 'number') numeros.push(onde);
      for (const [chave, valor] of Object.entries(no)) visitar(valor, `${onde}.${chave}`);
    };
    for (const nome of Object.keys(SERVICOS_DA_SUITE)) {
      for (const [caminho, ops] of Object.entries<any>((await documento(nome)).paths)) {
        for (const [metodo, op] of Object.entries<any>(ops)) {
          const onde = `${nome} ${metodo.toUpperCase()} ${caminho}`;
          visitar(op.responses, onde);
          visitar(op.parameters, `${onde} parameters`);
          visitar(op.requestBody, `${onde} requestBody`);
        }
      }
    }
    expect(numeros).toEqual([]);
  });

  test("the access module's conflicts (409) and unknown profile (422) are documented in every service that mounts it (DESIGN §4)", async () => {
    for (const nome of ['intranet', 'hub', 'leads', 'sales', 'files']) {
      const { paths } = await documento(nome);
      const respostas = (caminho: string, metodo: string) => Object.keys(paths[caminho][metodo].responses);
      expect({ nome, vinculo: respostas('/colaborador/{id}/perfil_acesso', 'patch') }).toEqual({ nome, vinculo: expect.arrayContaining(['409', '422']) });
      for (const [caminho, metodo] of [['/perfil_acesso', 'post'], ['/perfil_acesso/{id}', 'patch'], ['/perfil_acesso/{id}', 'delete']]) {
        expect({ nome, caminho, metodo, r: respostas(caminho, metodo) }).toEqual({ nome, caminho, metodo, r: expect.arrayContaining(['409']) });
      }
    }
  });

  test('a string joi trims before its minimum length must hold a non-space character; an inverted pattern is a `not`', async () => {
    const corpo = (doc: any, caminho: string, metodo = 'post') => doc.paths[caminho][metodo].requestBody.content['application/json'].schema.properties;
    const identity = await documento('identity');
    expect(corpo(identity, '/setor').nome).toEqual(expect.objectContaining({ minLength: 1, pattern: '\\S' }));
    expect(corpo(identity, '/usuario/{id}', 'patch').nome.pattern).toBe('\\S');
    for (const nome of ['intranet', 'hub', 'leads', 'sales', 'files']) expect(corpo(await documento(nome), '/perfil_acesso').nome.pattern).toBe('\\S');
    const sales = await documento('sales');
    expect(corpo(sales, '/robo').nome.pattern).toBe('\\S');
    // a string that is not trimmed keeps its length alone
    expect(corpo(identity, '/usuario').senha.pattern).toBeUndefined();
    // joi takes a blank or empty parameter as no value at all: the document allows both
    const rota: Rota = {
      metodo: 'get',
      caminho: '/x',
      operacao: 'x',
      resumo: 'x',
      acesso: 'publico',
      validar: { query: Joi.object({ nome: Joi.string().trim().empty('').min(2) }) },
      tratar: async () => undefined,
    };
    const nome = (documentoOpenApi({ title: 'x', version: '1' }, [rota]) as any).paths['/x'].get.parameters[0];
    expect(nome).toEqual(expect.objectContaining({ allowEmptyValue: true, schema: expect.objectContaining({ pattern: '^\\s*$|\\S[\\s\\S]{0,}\\S' }) }));
    // an event's id: some non-space character and no lone surrogate (joi's inverted pattern, with its `u` flag)
    const hub = await documento('hub');
    expect(corpo(hub, '/eventos').id).toEqual(expect.objectContaining({ pattern: '\\S', not: { pattern: '\\p{Cs}' } }));
  });

  test('a parameter states the canonical form joi checks, and its description what else the service takes', async () => {
    const parametro = (doc: any, caminho: string, nome: string, metodo = 'get') => doc.paths[caminho][metodo].parameters.find((p: any) => p.name === nome);
    const leads = await documento('leads');
    expect(parametro(leads, '/api/empresas', 'uf')).toEqual(
      expect.objectContaining({
        allowEmptyValue: true,
        description: 'UF do estabelecimento (EX: exterior). Também aceita espaços em volta e maiúsculas ou minúsculas.',
        schema: expect.objectContaining({ enum: expect.arrayContaining(['SP', 'EX']) }),
      }),
    );
    expect(parametro(leads, '/api/empresas', 'cnae')).toEqual(
      expect.objectContaining({
        description: 'CNAE fiscal principal. Também aceita espaços e os caracteres de máscara `-`, `.` e `/`.',
        schema: { type: 'string', pattern: '^[0-9]{7,7}$' },
      }),
    );
    expect(parametro(leads, '/api/empresas', 'capital_social_min').description).toBe('capital social mínimo. Também aceita espaços em volta e `,` no lugar de `.`.');
    const hub = await documento('hub');
    expect(parametro(hub, '/aplicativo/{id}', 'id')).toEqual(
      expect.objectContaining({ description: 'Também aceita espaços em volta e maiúsculas ou minúsculas.', schema: { type: 'string', maxLength: 64, pattern: '^[A-Za-z0-9_-]{1,64}$' } }),
    );
    // a text joi checks as sent has nothing more to say
    expect(parametro(hub, '/entrega', 'situacao').description).toBeUndefined();
    // the file name's rule (no control characters) in a pattern validators run in linear time: 8,000 characters at once
    const nome = parametro(await documento('files'), '/arquivo', 'nome', 'post');
    expect(nome.schema).toEqual(expect.objectContaining({ pattern: '\\S', allOf: [{ pattern: '^[^\\u0000-\\u001f\\u007f]+$' }] }));
    const { maxLength: _, ...semLimite } = nome.schema; // which would refuse these values before the patterns
    const validar = new Ajv2020({ strict: false }).compile(semLimite);
    const inicio = performance.now();
    for (const valor of [`${' '.repeat(8000)}\u0001`, `${'a '.repeat(4000)}\t`]) expect(validar(valor)).toBe(false);
    // in linear time: a backtracking pattern takes seconds to minutes on these
    expect(performance.now() - inicio).toBeLessThan(1000);
  });

  test('Cnpj, CnpjResumo and PaginaDeEmpresas list the fields SPEC §2 requires', async () => {
    const leads = await documento('leads');
    const cnpj = leads.paths['/api/cnpj/{cnpj}'].get.responses['200'].content['application/json'].schema;
    expect([...cnpj.required].sort()).toEqual(['cnpj', 'cnpj_basico', 'socios', 'tem_empresa', 'tem_simples']);
    const pagina = leads.paths['/api/empresas'].get.responses['200'].content['application/json'].schema;
    expect([...pagina.required].sort()).toEqual(['estimado', 'itens', 'pagina', 'tamanho', 'total']);
    expect(pagina.properties.itens.items.required).toEqual(['cnpj']);
  });
});

/**
 * SPEC §2, every field each entity names. Hub, identity, intranet and sales always send all of
 * them, the optional ones as null, so each is in `required` (nullable where SPEC says "or null").
 */
const CAMPOS_DA_SPEC = {
  Usuario: `id nome email perfil e_master master_pelo_ambiente email_verificado dois_fatores_ativo tem_senha criado_em
    atualizado_em bloqueado_ate ultimo_login_em cargo cargo_id funcao funcao_id setor setor_id imagem`,
  UsuarioAutocomplete: 'id nome email',
  Assinatura: `id aplicativo_assinante_id aplicativo_assinante_nome tipo_de_evento_id tipo_de_evento_nome versao_do_esquema
    situacao_da_versao url_de_destino maximo_de_tentativas tempo_limite_em_segundos ativa entregas_na_fila_de_erro
    ultima_entrega_em criada_em atualizada_em`,
  AssinaturaAutocomplete: 'aplicativo_assinante_nome ativa id tipo_de_evento_nome versao_do_esquema',
  Aplicativo: `id nome descricao ativo identificador_no_auth quantidade_de_tipos_de_evento quantidade_de_assinaturas criado_em
    atualizado_em`,
  AplicativoAutocomplete: 'id nome ativo',
  Colaborador: 'id auth_id nome email ativo master cargo funcao setor telefone perfil_acesso_id perfil_acesso criado_em atualizado_em',
  ColaboradorAutocomplete: 'id nome email',
  Total: 'total',
  Conversa: `id suporte_conversa_id suporte_contato_id suporte_endereco_conversa config_system_suporte_id
    config_system_mensageiro_id config_system_mensageiro_nome config_system_gateway_id config_system_gateway_nome cliente_id
    cliente_razao_social robo_id robo_nome etapa_id contato_nome contato_telefone status ultima_mensagem ultima_mensagem_em
    ultima_mensagem_do_contato_em ultima_mensagem_do_robo_em transferida_em transferida_motivo quantidade_mensagens criado_em
    atualizado_em`,
  ConversaAutocomplete: 'id suporte_conversa_id contato_nome contato_telefone',
  ConversaMensagem: 'id conversa_id suporte_mensagem_id autor conteudo etapa_id criada_em quantidade_anexos anexos',
  AnexoDaMensagem: 'endereco nome tipo arquivo_id tipo_mime tamanho url tentativas',
  PaginaNumerada: 'itens pagina tamanho total',
  PaginaCursor: 'itens proximo_cursor tamanho',
  // SPEC leaves file storage's fields out: these are the service's own (api/files/arquivos.ts)
  Arquivo: 'id nome tipo_mime tamanho sha256 criado_em url',
};
const campos = (entidade: keyof typeof CAMPOS_DA_SPEC) => CAMPOS_DA_SPEC[entidade].trim().split(/\s+/).sort();

describe('the answers of hub, identity, intranet, sales and files list in `required` every field they always send', () => {
  const documentos: Record<string, any> = {};
  beforeAll(async () => {
    for (const nome of ['hub', 'identity', 'intranet', 'sales', 'files']) {
      documentos[nome] = (await cliente(suite.url[nome]).get('/openapi.json')).body;
    }
  });

  /** The 200 or 201 JSON schema of the operation named `operacao`. */
  function resposta(servico: string, operacao: string): any {
    for (const ops of Object.values<any>(documentos[servico].paths)) {
      for (const op of Object.values<any>(ops)) {
        if (op.operationId !== operacao) continue;
        const sucesso = op.responses['200'] ?? op.responses['201'];
        return sucesso.content['application/json'].schema;
      }
    }
    throw new Error(`${servico} has no operation ${operacao}`);
  }
  const exigidos = (esquema: any) => [...(esquema.required ?? [])].sort();
  const itemDaPagina = (esquema: any) => {
    expect(exigidos(esquema)).toEqual(campos('PaginaNumerada'));
    return esquema.properties.itens.items;
  };

  /** The entity's answer by id, in its pages and filter, and from the writes named (`<operacao>` ids). */
  function conferirEntidade(servico: string, nome: string, entidade: keyof typeof CAMPOS_DA_SPEC, escritas: string[]) {
    for (const op of [`buscar_pelo_id_${nome}`, ...escritas]) expect(exigidos(resposta(servico, op))).toEqual(campos(entidade));
    expect(exigidos(itemDaPagina(resposta(servico, `buscar_paginador_${nome}`)))).toEqual(campos(entidade));
    expect(exigidos(resposta(servico, `buscar_pelo_filtro_${nome}`).items)).toEqual(campos(entidade));
  }

  test('hub: Assinatura and Aplicativo, their pages and autocomplete items', () => {
    conferirEntidade('hub', 'assinatura', 'Assinatura', ['criar_assinatura', 'atualizar_pelo_id_assinatura']);
    expect(exigidos(itemDaPagina(resposta('hub', 'buscar_auto_complete_assinatura')))).toEqual(campos('AssinaturaAutocomplete'));
    const assinatura = resposta('hub', 'buscar_pelo_id_assinatura');
    expect(assinatura.properties.ultima_entrega_em.type).toEqual(['string', 'null']);
    expect(exigidos(resposta('hub', 'buscar_pelo_id_aplicativo'))).toEqual(campos('Aplicativo'));
    expect(exigidos(itemDaPagina(resposta('hub', 'buscar_paginador_aplicativo')))).toEqual(campos('Aplicativo'));
    expect(exigidos(itemDaPagina(resposta('hub', 'buscar_auto_complete_aplicativo')))).toEqual(campos('AplicativoAutocomplete'));
    // the delivery by id adds its event (or null) and attempts to the delivery's fields
    const entrega = resposta('hub', 'buscar_pelo_id_entrega');
    expect(entrega.required).toEqual(expect.arrayContaining(['id', 'situacao', 'evento', 'historico']));
    expect(exigidos(entrega.properties.evento)).toEqual(['criado_em', 'dados', 'id', 'versao']);
  });

  test('identity: Usuario, its page and autocomplete items; login carries the user', () => {
    conferirEntidade('identity', 'usuario', 'Usuario', ['criar_usuario', 'atualizar_pelo_id_usuario']);
    expect(exigidos(itemDaPagina(resposta('identity', 'buscar_auto_complete_usuario')))).toEqual(campos('UsuarioAutocomplete'));
    expect(resposta('identity', 'buscar_pelo_id_usuario').properties.bloqueado_ate.type).toEqual(['string', 'null']);
    const login = resposta('identity', 'login');
    expect(exigidos(login)).toEqual(['access_token', 'expires_in', 'token_type', 'usuario']);
    expect(exigidos(login.properties.usuario)).toEqual(campos('Usuario'));
    // sectors, positions and functions are listed, not answered one at a time
    for (const tipo of ['setor', 'cargo', 'funcao']) {
      const lista = resposta('identity', `buscar_${tipo}`);
      expect(lista.type).toBe('array');
      expect(exigidos(lista.items)).toEqual(['atualizado_em', 'criado_em', 'id', 'nome']);
    }
  });

  test('intranet: Colaborador, its cursor pages and Total', () => {
    for (const op of ['buscar_pelo_id_colaborador', 'vincular_perfil_acesso_colaborador']) {
      expect(exigidos(resposta('intranet', op))).toEqual(campos('Colaborador'));
    }
    const pagina = resposta('intranet', 'buscar_paginador_colaborador');
    expect(exigidos(pagina)).toEqual(campos('PaginaCursor'));
    expect(pagina.properties.proximo_cursor.type).toEqual(['string', 'null']);
    expect(exigidos(pagina.properties.itens.items)).toEqual(campos('Colaborador'));
    expect(exigidos(resposta('intranet', 'buscar_pelo_filtro_colaborador').items)).toEqual(campos('Colaborador'));
    const autocomplete = resposta('intranet', 'buscar_auto_complete_colaborador');
    expect(exigidos(autocomplete)).toEqual(campos('PaginaCursor'));
    expect(exigidos(autocomplete.properties.itens.items)).toEqual(campos('ColaboradorAutocomplete'));
    expect(exigidos(resposta('intranet', 'buscar_total_colaborador'))).toEqual(campos('Total'));
  });

  test("a profile's permissoes are documented as a map of area to actions, in the answer and in the body", () => {
    const permissoes = resposta('intranet', 'buscar_pelo_id_perfil_acesso').properties.permissoes;
    expect(permissoes).toMatchObject({ type: 'object', properties: {}, patternProperties: { '^': { type: 'array', items: { type: 'string' } } } });
    const corpo = documentos.hub.paths['/perfil_acesso'].post.requestBody.content['application/json'].schema.properties.permissoes;
    expect(corpo.properties).toEqual({});
    expect(Object.keys(corpo.patternProperties)).toEqual(['^(assinaturas|monitoramento|aplicativos|contratos|colaboradores)$']);
  });

  test('sales: Conversa, its page and autocomplete items, messages with their attachments', () => {
    conferirEntidade('sales', 'conversa', 'Conversa', ['atualizar_pelo_id_conversa']);
    expect(exigidos(itemDaPagina(resposta('sales', 'buscar_auto_complete_conversa')))).toEqual(campos('ConversaAutocomplete'));
    const conversa = resposta('sales', 'buscar_pelo_id_conversa');
    expect(conversa.properties.cliente_id.type).toEqual(['string', 'null']);
    expect(conversa.properties.ultima_mensagem_em.type).toEqual(['string', 'null']);
    // SPEC §2: the record's own dates are always there
    expect([conversa.properties.criado_em.type, conversa.properties.atualizado_em.type]).toEqual(['string', 'string']);
    const mensagem = resposta('sales', 'buscar_mensagens_conversa').items;
    expect(exigidos(mensagem)).toEqual(campos('ConversaMensagem'));
    expect(exigidos(mensagem.properties.anexos.items)).toEqual(campos('AnexoDaMensagem'));
    // the webhook token comes always with the creation, and with an update only when renewed
    expect(resposta('sales', 'criar_config_system').required).toContain('token');
    expect(resposta('sales', 'atualizar_pelo_id_config_system').required).not.toContain('token');
    expect(resposta('sales', 'criar_config_system').required).toEqual(expect.arrayContaining(['id', 'tipo', 'nome', 'ativo']));
  });

  test('files: Arquivo and its page', () => {
    conferirEntidade('files', 'arquivo', 'Arquivo', ['criar_arquivo']);
  });
});
