import { RequestHandler } from 'express';
import Joi from 'joi';
import { TipoDeSistema } from '../../models/sales';
import { rotasDeAcesso } from '../shared/acesso/rotas';
import { proibido } from '../shared/errors';
import { Rota, semCache, somenteMaster } from '../shared/rotas';
import { acessoSales } from './acesso';
import { criarCadastro } from './cadastros';
import { clientes } from './clientes';
import {
  atualizarConfigSystem,
  autenticarWebhook,
  conferirAssinaturaDoWebhook,
  configSystemPorId,
  criarConfigSystem,
  deletarConfigSystem,
  listarConfigSystems,
} from './config-system';
import { atualizarConversa, autocompletarConversas, conversaPorId, deletarConversa, filtrarConversas, listarConversas, PRAZO_DO_FILTRO_S } from './conversas';
import { registrarEventoDoGateway } from './gateway';
import { mensagensDaConversa } from './mensagens';
import { robos } from './robos';
import { respostas, schemas } from './schemas';
import { entregaAssinada, receberEventoDoSuporte } from './webhook-suporte';

/** The OpenAPI meaning of a config_system's 409. */
const NUMERO_EM_USO = 'Outro sistema mensageiro vivo já tem este número';

const AREA = 'clientes';
const { controle } = acessoSales;
const ler = controle.lerEmQualquer(AREA);

const DESCRICAO_DO_WEBHOOK_DO_SUPORTE = `Eventos da plataforma de atendimento (formato Chatwoot): message_created, message_updated, \
conversation_created, conversation_status_changed e conversation_updated; os demais respondem 200 com \`ignorado\`. \
Autenticação: \`?token=\` do sistema configurado (tipo suporte) e, quando ele tem segredo_hmac, \
\`X-Chatwoot-Signature: sha256=<hex>\` de \`<X-Chatwoot-Timestamp>.<corpo>\`, com até 5 minutos de diferença; \
a mesma assinatura de novo nesse prazo responde 200 com \`ignorado\` e não muda nada depois de gravada a primeira, \
e 503 com Retry-After enquanto a primeira ainda está sendo gravada (se ela falhar, a cópia seguinte é gravada).`;

const DESCRICAO_DO_WEBHOOK_DO_GATEWAY = `Eventos do gateway de mensagens (formato Evolution API): messages.upsert liga as \
conversas em andamento do telefone ao gateway e ao número do mensageiro; os demais respondem 200 com \`ignorado\`. \
Autenticação: \`?token=\` do sistema configurado (tipo gateway).`;

/**
 * The token stands for a login, so it is checked first, as authentication is on every other route
 * (DESIGN §10: 401 before 400), and before the body is read: an unauthenticated caller does not
 * get a body of megabytes parsed. The system found is left in `res.locals.sistema`.
 */
function autenticarSistema(tipo: TipoDeSistema): RequestHandler {
  return async (req, res, next) => {
    try {
      let token = typeof req.query.token === 'string' ? req.query.token : undefined;
      // the gateway's "Webhook by Events" appends `/<event>` to the address, after its query
      // (`?token=<token>/messages-upsert`): a token has no `/`, so it ends at the first one
      if (tipo === 'gateway') token = token?.split('/')[0];
      res.locals.sistema = await autenticarWebhook(String(req.params.config_id), tipo, token);
      next();
    } catch (err) {
      next(err);
    }
  };
}

/** Once the body is read: the signature, which covers its bytes as received (a system with an HMAC secret). */
const conferirAssinatura: RequestHandler = (req, res, next) => {
  try {
    const chamada = { corpoBruto: req.corpoBruto, assinatura: req.get('x-chatwoot-signature'), carimbo: req.get('x-chatwoot-timestamp') };
    conferirAssinaturaDoWebhook(res.locals.sistema, chamada);
    res.locals.entrega = entregaAssinada(res.locals.sistema, chamada);
    next();
  } catch (err) {
    next(err);
  }
};

/** Routes of the chat platform's and the messaging gateway's webhooks (DESIGN §7). */
function rotasDeWebhooks(): Rota[] {
  return [
    {
      metodo: 'post',
      caminho: '/webhooks/suporte/:config_id',
      operacao: 'receber_webhook_suporte',
      outrasRespostas: {
        '401': 'Token do webhook ausente ou inválido (ou sistema inexistente ou inativo), ou X-Chatwoot-Signature ausente, vencida ou inválida',
        '503':
          'Banco de dados ou Redis sem resposta, ou a mesma entrega assinada ainda sendo gravada (Retry-After diz em quantos segundos tentar de novo)',
      },
      resumo: 'Webhook da plataforma de atendimento: cria e atualiza conversas e mensagens',
      descricao: DESCRICAO_DO_WEBHOOK_DO_SUPORTE,
      acesso: 'publico',
      tokenNaQuery: 'token',
      sem404: true,
      validar: { params: schemas.paramsWebhook, query: schemas.tokenDoWebhook, body: schemas.webhook },
      cabecalhos: schemas.cabecalhosDoWebhookDoSuporte,
      antes: [autenticarSistema('suporte')],
      aposOCorpo: [conferirAssinatura],
      // a message event carries its text twice (the message, and the conversation's last one),
      // JSON-escaped by the platform: up to 6 bytes a character of a 150,000-character message
      limiteDoCorpo: 4 * 1024 * 1024,
      resposta: respostas.webhookDoSuporte,
      tratar: (req, res) => receberEventoDoSuporte(res.locals.sistema, res.locals.entrega, req.body),
    },
    {
      metodo: 'post',
      caminho: '/webhooks/gateway/:config_id',
      operacao: 'receber_webhook_gateway',
      outrasRespostas: { '401': 'Token do webhook ausente ou inválido (ou sistema inexistente ou inativo)' },
      resumo: 'Webhook do gateway de mensagens: liga conversas ao gateway e ao número',
      descricao: DESCRICAO_DO_WEBHOOK_DO_GATEWAY,
      acesso: 'publico',
      tokenNaQuery: 'token',
      sem404: true,
      validar: { params: schemas.paramsWebhook, query: schemas.tokenDoWebhook, body: schemas.webhook },
      antes: [autenticarSistema('gateway')],
      resposta: respostas.webhookDoGateway,
      tratar: (req, res) => registrarEventoDoGateway(res.locals.sistema, req.body),
    },
  ];
}

/** SPEC 4.6: the eight conversation routes, area `clientes`. */
function rotasDeConversas(): Rota[] {
  const paramsId = { params: schemas.paramsId };
  return [
    {
      metodo: 'get',
      caminho: '/conversa',
      operacao: 'buscar_paginador_conversa',
      resumo: 'Conversas em páginas de 50, da última mensagem mais recente à mais antiga',
      acesso: 'usuario',
      permissao: ler,
      validar: { query: schemas.listaDeConversas },
      resposta: respostas.paginaDeConversas,
      tratar: (req) => listarConversas(req.entrada.query.pagina, req.entrada.query.status),
    },
    {
      metodo: 'post',
      caminho: '/conversa',
      operacao: 'criar_conversa',
      outrasRespostas: { '403': 'Sempre, com um token válido: conversas só nascem dos webhooks' },
      resumo: 'Sempre 403: conversas só nascem dos webhooks',
      acesso: 'usuario',
      permissao: controle.pode('criar', AREA),
      // 403 whatever the body: malformed or oversized, it is never read
      semCorpo: true,
      semSucesso: true,
      tratar: () => {
        throw proibido('Conversas são registradas pelos webhooks da plataforma de atendimento e do gateway.');
      },
    },
    {
      metodo: 'get',
      caminho: '/conversa/autocomplete',
      operacao: 'buscar_auto_complete_conversa',
      resumo: 'Autocomplete por nome do contato ou telefone, em ordem alfabética',
      acesso: 'usuario',
      permissao: ler,
      validar: { query: schemas.autocomplete },
      resposta: respostas.autocomplete,
      tratar: (req) => autocompletarConversas(req.entrada.query.busca, req.entrada.query.pagina, req.entrada.query.tamanho),
    },
    {
      metodo: 'get',
      caminho: '/conversa/filtro',
      operacao: 'buscar_pelo_filtro_conversa',
      resumo: 'Até 500 conversas, da última mensagem mais recente à mais antiga',
      acesso: 'usuario',
      permissao: ler,
      validar: { query: schemas.filtroDeConversas },
      resposta: respostas.conversas,
      outrasRespostas: {
        '503': `A busca passou de ${PRAZO_DO_FILTRO_S} segundos no banco de dados (um texto raro em anos de mensagens): combine mais filtros; ou uma dependência indisponível`,
      },
      tratar: (req) => filtrarConversas(req.entrada.query),
    },
    {
      metodo: 'get',
      caminho: '/conversa/:id',
      operacao: 'buscar_pelo_id_conversa',
      resumo: 'Conversa do histórico interno',
      acesso: 'usuario',
      permissao: ler,
      validar: paramsId,
      resposta: respostas.conversa,
      tratar: (req) => conversaPorId(req.entrada.params.id),
    },
    {
      metodo: 'patch',
      caminho: '/conversa/:id',
      operacao: 'atualizar_pelo_id_conversa',
      outrasRespostas: { '422': 'cliente_id ou robo_id não nomeia um registro existente (o que a conversa já tem é sempre aceito)' },
      resumo: 'Liga cliente e robô, corrige o status guardado (nada muda na plataforma de atendimento)',
      acesso: 'usuario',
      permissao: controle.pode('editar', AREA),
      validar: { ...paramsId, body: schemas.atualizarConversa },
      resposta: respostas.conversa,
      tratar: (req) => atualizarConversa(req.entrada.params.id, req.entrada.body),
    },
    {
      metodo: 'delete',
      caminho: '/conversa/:id',
      operacao: 'deletar_pelo_id_conversa',
      resumo: 'Apaga a conversa e suas mensagens, sem volta',
      acesso: 'usuario',
      permissao: controle.pode('deletar', AREA),
      validar: paramsId,
      tratar: async (req) => {
        await deletarConversa(req.entrada.params.id);
      },
    },
    {
      metodo: 'get',
      caminho: '/conversa/:id/mensagens',
      operacao: 'buscar_mensagens_conversa',
      resumo: 'Mensagens em ordem de envio, com anexos e links de download válidos por 15 minutos',
      acesso: 'usuario',
      permissao: ler,
      validar: paramsId,
      resposta: respostas.mensagens,
      tratar: (req) => mensagensDaConversa(req.entrada.params.id),
    },
  ];
}

/**
 * The systems that call the webhooks: administered by a master (DESIGN §10). A change writes
 * credentials that outlive the request (the webhook's token, the platform's secrets): identity
 * confirms the master first, so one demoted since their token was issued cannot give themselves a
 * webhook token for good.
 */
function rotasDeConfigSystem(): Rota[] {
  const paramsId = { params: schemas.paramsId };
  const base = { acesso: 'usuario' as const, permissao: somenteMaster };
  const escrita = { ...base, permissao: controle.masterConfirmado };
  return [
    {
      ...escrita,
      metodo: 'post',
      caminho: '/config_system',
      operacao: 'criar_config_system',
      resumo: 'Cadastra um sistema (suporte, mensageiro ou gateway); o token do webhook aparece só nesta resposta',
      validar: { body: schemas.criarConfigSystem },
      status: 201,
      resposta: respostas.configSystemCriado,
      outrasRespostas: { '409': NUMERO_EM_USO },
      // the webhook's token, shown this once
      tratar: (req, res) => semCache(res, criarConfigSystem(req.entrada.body)),
    },
    {
      ...base,
      metodo: 'get',
      caminho: '/config_system',
      operacao: 'buscar_paginador_config_system',
      resumo: 'Sistemas configurados, por tipo e nome',
      validar: { query: schemas.listaDeConfigSystems },
      resposta: respostas.paginaDeConfigSystems,
      tratar: (req) => listarConfigSystems(req.entrada.query.pagina, req.entrada.query.tamanho, req.entrada.query.tipo),
    },
    {
      ...base,
      metodo: 'get',
      caminho: '/config_system/:id',
      operacao: 'buscar_pelo_id_config_system',
      resumo: 'Um sistema configurado (sem os segredos)',
      validar: paramsId,
      resposta: respostas.configSystem,
      tratar: (req) => configSystemPorId(req.entrada.params.id),
    },
    {
      ...escrita,
      metodo: 'patch',
      caminho: '/config_system/:id',
      operacao: 'atualizar_pelo_id_config_system',
      resumo: 'Altera um sistema; renovar_token emite um novo token do webhook',
      validar: { ...paramsId, body: schemas.atualizarConfigSystem },
      resposta: respostas.configSystem,
      outrasRespostas: { '409': NUMERO_EM_USO },
      // with renovar_token, the new token
      tratar: (req, res) => semCache(res, atualizarConfigSystem(req.entrada.params.id, req.entrada.body)),
    },
    {
      ...escrita,
      metodo: 'delete',
      caminho: '/config_system/:id',
      operacao: 'deletar_pelo_id_config_system',
      resumo: 'Remove um sistema: seus webhooks deixam de ser aceitos',
      validar: paramsId,
      tratar: async (req) => {
        await deletarConfigSystem(req.entrada.params.id);
      },
    },
  ];
}

/**
 * Page, by id, create, update and delete of a small record of area `clientes` (customers, robots).
 * `conflito` describes the 409 of a create or change, for a record with a value of its own.
 */
function rotasDeCadastro(
  recurso: string,
  cadastro: ReturnType<typeof criarCadastro>,
  esquemas: { criar: Joi.Schema; atualizar: Joi.Schema },
  resposta: { item: Joi.Schema; pagina: Joi.Schema },
  conflito?: string,
): Rota[] {
  const caminho = `/${recurso}`;
  const outrasRespostas = conflito ? { '409': conflito } : undefined;
  const paramsId = { params: schemas.paramsId };
  const usuario = 'usuario' as const;
  return [
    {
      metodo: 'get',
      caminho,
      operacao: `buscar_paginador_${recurso}`,
      resumo: `Página de ${recurso} em ordem alfabética, com busca`,
      acesso: usuario,
      permissao: ler,
      validar: { query: schemas.listaDeCadastros },
      resposta: resposta.pagina,
      tratar: (req) => cadastro.listar(req.entrada.query.pagina, req.entrada.query.tamanho, req.entrada.query.busca),
    },
    {
      metodo: 'get',
      caminho: `${caminho}/:id`,
      operacao: `buscar_pelo_id_${recurso}`,
      resumo: `Um ${recurso} pelo id`,
      acesso: usuario,
      permissao: ler,
      validar: paramsId,
      resposta: resposta.item,
      tratar: (req) => cadastro.porId(req.entrada.params.id),
    },
    {
      metodo: 'post',
      caminho,
      operacao: `criar_${recurso}`,
      resumo: `Cadastra um ${recurso}`,
      acesso: usuario,
      permissao: controle.pode('criar', AREA),
      validar: { body: esquemas.criar },
      status: 201,
      resposta: resposta.item,
      outrasRespostas,
      tratar: (req) => cadastro.criar(req.entrada.body),
    },
    {
      metodo: 'patch',
      caminho: `${caminho}/:id`,
      operacao: `atualizar_pelo_id_${recurso}`,
      resumo: `Altera um ${recurso} (só os campos enviados)`,
      acesso: usuario,
      permissao: controle.pode('editar', AREA),
      validar: { ...paramsId, body: esquemas.atualizar },
      resposta: resposta.item,
      outrasRespostas,
      tratar: (req) => cadastro.atualizar(req.entrada.params.id, req.entrada.body),
    },
    {
      metodo: 'delete',
      caminho: `${caminho}/:id`,
      operacao: `deletar_pelo_id_${recurso}`,
      resumo: `Remove um ${recurso}`,
      acesso: usuario,
      permissao: controle.pode('deletar', AREA),
      validar: paramsId,
      tratar: async (req) => {
        await cadastro.deletar(req.entrada.params.id);
      },
    },
  ];
}

/** Sales routes: SPEC 4.6, the webhooks and administration of DESIGN §7 and §10, the access module. */
export function rotasDeSales(): Rota[] {
  return [
    ...rotasDeConversas(),
    ...rotasDeWebhooks(),
    ...rotasDeConfigSystem(),
    ...rotasDeCadastro('cliente', clientes, { criar: schemas.criarCliente, atualizar: schemas.atualizarCliente }, {
      item: respostas.cliente,
      pagina: respostas.paginaDeClientes,
    }),
    ...rotasDeCadastro(
      'robo',
      robos,
      { criar: schemas.criarRobo, atualizar: schemas.atualizarRobo },
      { item: respostas.robo, pagina: respostas.paginaDeRobos },
      'suporte_usuario_id ou suporte_bot_id já é de outro robô não removido',
    ),
    ...rotasDeAcesso(acessoSales),
  ];
}
