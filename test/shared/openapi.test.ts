import { Express } from 'express';
import { SERVICOS_DA_SUITE } from '../../api';
import { caminhoOpenApi } from '../../api/shared/openapi';
import { NomeDoServico } from '../../config/services';
import { cliente } from '../helpers/http';
import { iniciarSuite, SuiteDeTeste } from '../helpers/suite';

/** Routes Express actually serves, read from its router (not from our route list). */
function rotasMontadas(app: Express): string[] {
  const rotas: string[] = [];
  const visitar = (stack: any[]) => {
    for (const camada of stack) {
      if (camada.route) {
        for (const metodo of Object.keys(camada.route.methods)) {
          // OPTIONS answers every route's path with its methods (api/shared/app.ts): not an operation
          if (metodo !== 'options') rotas.push(`${metodo.toUpperCase()} ${caminhoOpenApi(camada.route.path)}`);
        }
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
    expect(rotasDocumentadas(doc)).toEqual(rotasMontadas(app));
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
        if (metodo === 'post' && op.requestBody) {
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
    expect(Object.keys(leads.paths['/api/empresas'].get.responses)).toEqual(expect.arrayContaining(['503']));
    const identity = await documento('identity');
    for (const caminho of ['/auth/login', '/auth/token']) expect(Object.keys(identity.paths[caminho].post.responses)).toContain('429');
    const files = await documento('files');
    expect(Object.keys(files.paths['/arquivo'].post.responses)).toEqual(expect.arrayContaining(['201', '413', '415']));
    expect(Object.keys(files.paths['/arquivo/{id}/conteudo'].get.responses)).toContain('403');
    expect(files.paths['/arquivo/{id}/conteudo'].get.responses['403'].content['application/problem+json']).toBeDefined();
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
