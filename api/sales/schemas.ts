import Joi from 'joi';
import { SINTAXE_DO_EMAIL } from '../../config';
import { cnpjNoCorpo } from '../shared/cnpj';
import { paginaNumerada, sempre } from '../shared/openapi';
import { id, inteiroEscrito, pagina, tamanho, texto } from '../shared/paginacao';
import { STATUS } from './suporte';

const status = () => Joi.string().valid(...STATUS);
const idOuNulo = () => id().allow(null);
const nome = (max: number) => Joi.string().trim().min(1).max(max);
/**
 * A system's base address: paths of its API are appended to it, so a query, a fragment or a
 * user:password part (which fetch refuses) would make every call miss.
 */
const ESQUEMAS_DO_ENDERECO = ['http', 'https'];
const urlHttp = () =>
  Joi.string()
    .trim()
    .uri({ scheme: ESQUEMAS_DO_ENDERECO })
    .max(500)
    .custom((v: string, helpers) => {
      // what uri() lets through but no URL is (a port past 65535) fails every call too; said in
      // uri()'s own words, so an address both refuse is one error (validarCom drops repeats)
      if (!URL.canParse(v)) return helpers.error('string.uriCustomScheme', { scheme: ESQUEMAS_DO_ENDERECO.join('|') });
      const u = new URL(v);
      return u.username || u.password || /[?#]/.test(v) ? helpers.error('string.enderecoBase') : v;
    })
    .messages({ 'string.enderecoBase': 'um endereço base, sem usuário, consulta (?) ou fragmento (#)' })
    .description('Endereço base (http ou https), sem usuário, consulta ou fragmento.');
/** in bytes: the encrypted form of 500 bytes fits its column, of 500 characters of any kind not */
const segredo = (min: number) => Joi.string().min(min).max(500, 'utf8');
/**
 * The chat platform's API token travels in a header: a line break, a space or a character past
 * ASCII cannot be sent there (every hand-over and download would fail), so it is refused here.
 */
const tokenDeApi = () =>
  segredo(1)
    .pattern(/^[\x21-\x7e]+$/)
    .messages({ 'string.pattern.base': 'letras, dígitos e símbolos ASCII visíveis, sem espaços (vai num cabeçalho HTTP)' });
/** A phone as people write it (`+55 (11) 98888-7777`): 8 to 20 digits among spaces, dots, dashes and brackets. */
const telefone = () =>
  Joi.string()
    .trim()
    .max(30)
    .pattern(/^\+?[\d\s().-]+$/)
    .custom((v: string, helpers) => {
      const n = v.replace(/\D/g, '').length;
      return n >= 8 && n <= 20 ? v : helpers.error('string.pattern.base');
    })
    .messages({ 'string.pattern.base': 'um número de telefone (8 a 20 dígitos)' });

/** A customer's and a robot's writable fields; creation requires the name. */
const cliente = Joi.object({
  razao_social: nome(255),
  cnpj: cnpjNoCorpo().allow(null),
  telefone: Joi.string().trim().max(40).allow(null),
  email: Joi.string().trim().email(SINTAXE_DO_EMAIL).max(254).allow(null),
});
const robo = Joi.object({
  nome: nome(120),
  descricao: Joi.string().trim().max(500).allow(null, ''),
  suporte_usuario_id: Joi.number().strict().integer().min(0).allow(null),
  suporte_bot_id: Joi.number().strict().integer().min(0).allow(null),
});

export const schemas = {
  paramsId: Joi.object({ id: id().required() }),
  paramsWebhook: Joi.object({ config_id: id().required() }),
  tokenDoWebhook: Joi.object({ token: Joi.string().max(500).empty('').description('O token do sistema configurado; sem ele, ou errado, 401') }),
  /** read by conferirAssinatura, said here for the OpenAPI document */
  cabecalhosDoWebhookDoSuporte: Joi.object({
    'X-Chatwoot-Signature': Joi.string().description('sha256=<hex> de `<X-Chatwoot-Timestamp>.<corpo>` com o segredo_hmac do sistema; exigida quando ele tem um'),
    'X-Chatwoot-Timestamp': Joi.string().description('Segundos desde 1970; até 5 minutos de diferença do relógio do serviço'),
  }),
  webhook: Joi.object({ event: Joi.string().max(100).required() }).unknown(true).required(),
  // tamanho is accepted (an integer) and ignored: pages always hold 50
  listaDeConversas: Joi.object({
    pagina: pagina(),
    tamanho: inteiroEscrito(Joi.number().unsafe()).description('Aceito e ignorado (SPEC 4.6): as páginas têm sempre 50 conversas'),
    status: status().empty(''),
  }),
  autocomplete: Joi.object({ busca: texto(), pagina: pagina(), tamanho: tamanho(10) }),
  filtroDeConversas: Joi.object({
    cliente_id: id().empty(''),
    robo_id: id().empty(''),
    config_system_gateway_id: id().empty(''),
    suporte_conversa_id: inteiroEscrito().min(0).empty(''),
    status: status().empty(''),
    contato: texto(),
    texto: texto(),
  }),
  atualizarConversa: Joi.object({ cliente_id: idOuNulo(), robo_id: idOuNulo(), status: status().allow(null) }).required(),
  listaDeCadastros: Joi.object({ pagina: pagina(), tamanho: tamanho(10, 500), busca: texto() }),
  criarConfigSystem: Joi.object({
    tipo: Joi.string().valid('suporte', 'mensageiro', 'gateway').required(),
    nome: nome(120).required(),
    token: Joi.string()
      .min(32)
      .max(200)
      .pattern(/^[A-Za-z0-9._~-]+$/)
      .messages({ 'string.pattern.base': 'use letras, dígitos, ponto, _, ~ e -' })
      // `token?` (DESIGN §10): absent or null alike (SPEC §2), one is generated
      .allow(null),
    segredo_hmac: segredo(8).allow(null),
    url: urlHttp().allow(null),
    conta_id: Joi.number().strict().integer().min(0).allow(null),
    token_api: tokenDeApi().allow(null),
    numero: telefone().allow(null),
    ativo: Joi.boolean().strict(),
  }).required(),
  atualizarConfigSystem: Joi.object({
    nome: nome(120),
    segredo_hmac: segredo(8).allow(null),
    url: urlHttp().allow(null),
    conta_id: Joi.number().strict().integer().min(0).allow(null),
    token_api: tokenDeApi().allow(null),
    numero: telefone().allow(null),
    ativo: Joi.boolean().strict(),
    renovar_token: Joi.boolean().strict(),
  }).required(),
  listaDeConfigSystems: Joi.object({ pagina: pagina(), tamanho: tamanho(10, 500), tipo: Joi.string().valid('suporte', 'mensageiro', 'gateway').empty('') }),
  criarCliente: cliente.fork(['razao_social'], (c) => c.required()).required(),
  atualizarCliente: cliente.required(),
  criarRobo: robo.fork(['nome'], (c) => c.required()).required(),
  atualizarRobo: robo.required(),
};

const data = () => Joi.string().isoDate();
const dataOuNulo = () => data().allow(null);

const conversa = sempre({
  id: Joi.string(),
  suporte_conversa_id: Joi.number().integer(),
  suporte_contato_id: Joi.number().integer().allow(null),
  suporte_endereco_conversa: Joi.string().allow(null),
  config_system_suporte_id: Joi.string(),
  config_system_mensageiro_id: Joi.string().allow(null),
  config_system_mensageiro_nome: Joi.string().allow(null),
  config_system_gateway_id: Joi.string().allow(null),
  config_system_gateway_nome: Joi.string().allow(null),
  cliente_id: Joi.string().allow(null),
  cliente_razao_social: Joi.string().allow(null),
  robo_id: Joi.string().allow(null),
  robo_nome: Joi.string().allow(null),
  etapa_id: Joi.string().allow(null),
  contato_nome: Joi.string(),
  contato_telefone: Joi.string(),
  status: status(),
  ultima_mensagem: Joi.string(),
  ultima_mensagem_em: dataOuNulo(),
  ultima_mensagem_do_contato_em: dataOuNulo(),
  ultima_mensagem_do_robo_em: dataOuNulo(),
  transferida_em: dataOuNulo(),
  transferida_motivo: Joi.string().allow(null),
  quantidade_mensagens: Joi.number().integer(),
  criado_em: data(),
  atualizado_em: data(),
}).label('Conversa');

const anexo = sempre({
  endereco: Joi.string(),
  nome: Joi.string(),
  tipo: Joi.string(),
  arquivo_id: Joi.string().allow(null),
  tipo_mime: Joi.string().allow(null),
  tamanho: Joi.number().integer().allow(null),
  url: Joi.string().allow(null).description('Download assinado, válido por 15 minutos'),
  tentativas: Joi.number().integer(),
}).label('AnexoDaMensagem');

const mensagem = sempre({
  id: Joi.string(),
  conversa_id: Joi.string(),
  suporte_mensagem_id: Joi.number().integer(),
  autor: Joi.string().valid('contato', 'atendente', 'robo'),
  conteudo: Joi.string(),
  etapa_id: Joi.string().allow(null),
  criada_em: data(),
  quantidade_anexos: Joi.number().integer(),
  anexos: Joi.array().items(anexo),
}).label('ConversaMensagem');

const configSystem = sempre({
  id: Joi.string(),
  tipo: Joi.string(),
  nome: Joi.string(),
  url: Joi.string().allow(null),
  conta_id: Joi.number().integer().allow(null),
  numero: Joi.string().allow(null),
  ativo: Joi.boolean(),
  tem_segredo_hmac: Joi.boolean(),
  tem_token_api: Joi.boolean(),
  criado_em: data(),
  atualizado_em: data(),
  token: Joi.string().optional().description('Só na resposta que o criou ou renovou'),
}).label('ConfigSystem');

/** the answer that created a system: its webhook token, always (shown this once) */
const configSystemCriado = configSystem.keys({ token: Joi.string().required().description('O token do webhook: só nesta resposta e na que o renovar') }).label('ConfigSystemCriado');

const clienteJson = sempre({
  id: Joi.string(),
  razao_social: Joi.string(),
  cnpj: Joi.string().allow(null),
  telefone: Joi.string().allow(null),
  email: Joi.string().allow(null),
  criado_em: data(),
  atualizado_em: data(),
}).label('Cliente');

const roboJson = sempre({
  id: Joi.string(),
  nome: Joi.string(),
  descricao: Joi.string().allow(null),
  suporte_usuario_id: Joi.number().integer().allow(null).description('Usuário da plataforma de atendimento com que o robô responde'),
  suporte_bot_id: Joi.number().integer().allow(null).description('Agent bot da plataforma de atendimento com que o robô responde'),
  criado_em: data(),
  atualizado_em: data(),
}).label('Robo');

export const respostas = {
  conversa,
  paginaDeConversas: paginaNumerada(conversa),
  autocomplete: paginaNumerada(
    sempre({ id: Joi.string(), suporte_conversa_id: Joi.number().integer(), contato_nome: Joi.string(), contato_telefone: Joi.string() }),
  ),
  conversas: Joi.array().items(conversa),
  mensagens: Joi.array().items(mensagem),
  configSystem,
  configSystemCriado,
  paginaDeConfigSystems: paginaNumerada(configSystem),
  cliente: clienteJson,
  paginaDeClientes: paginaNumerada(clienteJson),
  robo: roboJson,
  paginaDeRobos: paginaNumerada(roboJson),
  webhookDoSuporte: sempre({ conversa_id: Joi.string().allow(null), mensagens_novas: Joi.number().integer(), ignorado: Joi.string().optional() }),
  webhookDoGateway: sempre({ conversas_vinculadas: Joi.number().integer(), ignorado: Joi.string().optional() }),
};
