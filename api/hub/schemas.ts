import Joi from 'joi';
import { SITUACOES_DA_ENTREGA } from '../../models/hub/entrega';
import { paginaNumerada, sempre, WebhookDocumentado } from '../shared/openapi';
import { booleano, id, inteiroEscrito, pagina, tamanho, texto } from '../shared/paginacao';

const nomeDeTipo = () =>
  Joi.string()
    .trim()
    .max(150)
    .pattern(/^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/)
    .messages({ 'string.pattern.base': 'use letras, dígitos, _ e - em partes separadas por ponto (ex.: colaborador.criado)' });
const imutavel = (campo: string) =>
  Joi.any().forbidden().messages({ 'any.unknown': `${campo} não muda: crie outra assinatura` });
const situacaoDaVersao = () => Joi.string().valid('ativa', 'depreciada', 'desligada');

/** SPEC 4.3 rule 7, checked by assinaturas.ts (conferirUrl); said here for the OpenAPI document. */
const urlDeDestino = () =>
  Joi.string().trim().max(500).description('https; http só para localhost, 127.0.0.1 e [::1]; sem usuário ou senha na URL');

export const schemas = {
  paramsId: Joi.object({ id: id().required() }),
  paramsVersao: Joi.object({ id: id().required(), versao: inteiroEscrito().min(1).required() }),
  paginaSemMaximo: Joi.object({ pagina: pagina(), tamanho: tamanho(10) }),
  autocomplete: Joi.object({ busca: texto(), pagina: pagina(), tamanho: tamanho(10) }),
  filtroDeAplicativos: Joi.object({ nome: texto(), ativo: booleano() }),
  filtroDeAssinaturas: Joi.object({ aplicativo_assinante_id: id().empty(''), tipo_de_evento_id: id().empty(''), ativa: booleano() }),
  criarAssinatura: Joi.object({
    aplicativo_assinante_id: id().required(),
    tipo_de_evento_id: id().required(),
    url_de_destino: urlDeDestino().required(),
    versao_do_esquema: Joi.number().strict().integer().min(1).required(),
    ativa: Joi.boolean().strict().allow(null),
    maximo_de_tentativas: Joi.number().strict().integer().min(1).max(20).allow(null),
    tempo_limite_em_segundos: Joi.number().strict().integer().min(1).max(30).allow(null),
  }).required(),
  atualizarAssinatura: Joi.object({
    aplicativo_assinante_id: imutavel('aplicativo_assinante_id'),
    tipo_de_evento_id: imutavel('tipo_de_evento_id'),
    url_de_destino: urlDeDestino().allow(null),
    versao_do_esquema: Joi.number().strict().integer().min(1).allow(null),
    ativa: Joi.boolean().strict().allow(null),
    maximo_de_tentativas: Joi.number().strict().integer().min(1).max(20).allow(null),
    tempo_limite_em_segundos: Joi.number().strict().integer().min(1).max(30).allow(null),
  }).required(),
  criarTipo: Joi.object({
    nome: nomeDeTipo().required(),
    descricao: Joi.string().trim().max(1000).allow(null, ''),
    aplicativo_id: id().required(),
  }).required(),
  atualizarTipo: Joi.object({ nome: nomeDeTipo(), descricao: Joi.string().trim().max(1000).allow(null, '') }).required(),
  criarVersao: Joi.object({ esquema: Joi.object().unknown(true).required() }).required(),
  mudarVersao: Joi.object({ situacao: situacaoDaVersao().required() }).required(),
  publicar: Joi.object({
    tipo: nomeDeTipo().required(),
    versao: Joi.number().strict().integer().min(1).required(),
    dados: Joi.any().required(),
    // a lone surrogate is stored as U+FFFD: two different ids would compare equal
    // `id?` (DESIGN §5): absent or null alike (SPEC §2), no idempotency then
    id: Joi.string().trim().min(1).max(100).pattern(/\p{Cs}/u, { invert: true, name: 'texto Unicode bem formado' }).allow(null),
  }).required(),
  filtroDeEntregas: Joi.object({
    pagina: pagina(),
    tamanho: tamanho(10, 500),
    assinatura_id: id().empty(''),
    situacao: Joi.string().valid(...SITUACOES_DA_ENTREGA).empty(''),
  }),
};

const s = Joi.string();
const sn = Joi.string().allow(null);
const n = Joi.number().integer();
const b = Joi.boolean();
/** RFC 3339 UTC (DESIGN §4) */
const d = Joi.string().isoDate();
const dn = d.allow(null);

export const respostas = {
  aplicativo: sempre({
    id: s,
    nome: s,
    descricao: sn,
    ativo: b,
    identificador_no_auth: s,
    quantidade_de_tipos_de_evento: n,
    quantidade_de_assinaturas: n,
    criado_em: d,
    atualizado_em: d,
  }).label('Aplicativo'),
  aplicativoAutocomplete: sempre({ id: s, nome: s, ativo: b }),
  assinatura: sempre({
    id: s,
    aplicativo_assinante_id: s,
    aplicativo_assinante_nome: s,
    tipo_de_evento_id: s,
    tipo_de_evento_nome: s,
    versao_do_esquema: n,
    situacao_da_versao: s,
    url_de_destino: s,
    maximo_de_tentativas: n,
    tempo_limite_em_segundos: n,
    ativa: b,
    entregas_na_fila_de_erro: n,
    ultima_entrega_em: dn,
    criada_em: d,
    atualizada_em: d,
  }).label('Assinatura'),
  assinaturaAutocomplete: sempre({ id: s, aplicativo_assinante_nome: s, tipo_de_evento_nome: s, versao_do_esquema: n, ativa: b }),
  tipo: sempre({
    id: s,
    nome: s,
    descricao: sn,
    aplicativo_id: s,
    aplicativo_nome: sn,
    versoes: Joi.array().items(sempre({ versao: n, situacao: s, criada_em: d })),
    criado_em: d,
    atualizado_em: d,
  }).label('TipoDeEvento'),
  versao: sempre({ versao: n, situacao: s, esquema: Joi.object().unknown(true), criada_em: d }),
  publicacao: sempre({ id: s, entregas: n }),
  /** the delivery by id adds `evento` and `historico` with `.keys()`: required as well */
  entrega: sempre({
    id: s,
    evento_id: s,
    assinatura_id: s,
    situacao: s,
    tentativas: n,
    proxima_tentativa_em: dn,
    entregue_em: dn,
    ultimo_erro: sn,
    criada_em: d,
    atualizada_em: d,
  }).label('Entrega'),
  historico: Joi.array().items(
    sempre({ numero: n, iniciada_em: d, duracao_ms: n, status_http: n.allow(null), erro: sn, resposta: sn }),
  ),
  pagina: paginaNumerada,
  /** GET /entrega: `total` stops at 10,000, and `estimado` says when it did */
  paginaDeEntregas: (item: Joi.Schema) => paginaNumerada(item).keys({ estimado: Joi.boolean().required() }),
};

/**
 * What a subscriber receives (DESIGN §5, api/hub/entregas.ts enviarAssinada), for the `webhooks`
 * of the hub's OpenAPI document: a subscriber reads there what to expect and how to verify it.
 */
export const webhooksDoHub: Record<string, WebhookDocumentado> = {
  entrega: {
    resumo: 'Uma entrega de evento a uma assinatura: POST à url dela, assinado',
    descricao:
      'Verifique uma das duas assinaturas: `webhook-signature` (Standard Webhooks v1a, Ed25519) ou `webhook-token` (JWS ' +
      '`typ: webhook+jwt`, `iss` o endereço do hub, `aud` o seu id de aplicativo no identity, `body_sha256` o SHA-256 ' +
      'base64url do corpo recebido), com as chaves de `GET /.well-known/jwks.json` do hub. A entrega é pelo menos uma vez: ' +
      'guarde `webhook-id` e ignore repetições. Responda dentro de `tempo_limite_em_segundos` da assinatura; redirecionamentos ' +
      'não são seguidos.',
    corpo: sempre({
      id: Joi.string().description('O id do evento no hub'),
      tipo: Joi.string().description('O nome do tipo de evento'),
      versao: Joi.number().integer().min(1),
      aplicativo_origem_id: Joi.string().description('O aplicativo que publicou (id no identity)'),
      aplicativo_assinante_id: Joi.string().description('O aplicativo assinante, você (id no identity)'),
      criado_em: Joi.string().isoDate().description('Quando o hub recebeu o evento'),
      dados: Joi.any().description('O que o publicador enviou, válido pelo esquema da versão'),
    }).label('EntregaDoHub'),
    cabecalhos: Joi.object({
      'webhook-id': Joi.string().required().description('O id da entrega: o mesmo em cada tentativa'),
      'webhook-timestamp': Joi.string().pattern(/^\d+$/).required().description('Segundos desde 1970, de quando esta tentativa foi assinada'),
      'webhook-signature': Joi.string()
        .required()
        .description('`v1a,<base64 da assinatura Ed25519 de "{webhook-id}.{webhook-timestamp}.{corpo}">`, uma por chave em serviço, separadas por espaço'),
      'webhook-token': Joi.string().required().description('JWS EdDSA (`typ: webhook+jwt`, `kid` do JWKS do hub), válido por 5 minutos, `jti` igual a webhook-id'),
    }),
    respostas: {
      '2XX': 'Recebida: a entrega termina',
      default: 'Outra resposta, um tempo esgotado ou uma conexão recusada: falha da tentativa, repetida conforme o calendário de retentativas até o máximo da assinatura, depois na fila de erro',
    },
  },
};
