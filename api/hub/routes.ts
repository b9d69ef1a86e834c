import Joi from 'joi';
import { rotasDeAcesso } from '../shared/acesso/rotas';
import { esquemaJwks } from '../shared/openapi';
import { descrita, Rota } from '../shared/rotas';
import { acessoHub } from './acesso';
import {
  aplicativoPorId,
  autocompletarAplicativos,
  filtrarAplicativos,
  listarAplicativos,
} from './aplicativos';
import { jwksDoHub } from './assinador';
import {
  assinaturaPorId,
  atualizarAssinatura,
  autocompletarAssinaturas,
  criarAssinatura,
  deletarAssinatura,
  filtrarAssinaturas,
  listarAssinaturas,
} from './assinaturas';
import { entregaPorId, listarEntregas, reenviarEntrega, reenviarFalhas } from './entregas';
import { publicadorAtivo, publicarEvento } from './eventos';
import { respostas, schemas } from './schemas';
import { esperarSincronizacao } from './sincronizacao';
import {
  atualizarTipo,
  criarTipo,
  criarVersao,
  deletarTipo,
  listarTipos,
  mudarSituacaoDaVersao,
  tipoPorId,
  versaoPorNumero,
} from './tipos';

const { controle } = acessoHub;
/** SPEC 4.4: `ler` in aplicativos, contratos, assinaturas or monitoramento. */
const lerAplicativos = controle.podeEmAlguma('ler', 'aplicativos', 'contratos', 'assinaturas', 'monitoramento');
/** SPEC 4.3: `ler` in assinaturas or monitoramento. */
const lerAssinaturas = controle.podeEmAlguma('ler', 'assinaturas', 'monitoramento');
const lerContratos = controle.podeEmAlguma('ler', 'contratos', 'assinaturas');
const lerMonitoramento = controle.pode('ler', 'monitoramento');

const semCorpo = <T>(f: () => Promise<T>) => f().then(() => undefined);

function rotasDeAplicativos(): Rota[] {
  return [
    {
      metodo: 'get',
      caminho: '/aplicativo',
      operacao: 'buscar_paginador_aplicativo',
      resumo: 'Aplicativos em ordem alfabética, após sincronizar com o identity',
      acesso: 'usuario',
      permissao: lerAplicativos,
      validar: { query: schemas.paginaSemMaximo },
      resposta: respostas.pagina(respostas.aplicativo),
      tratar: async (req) => {
        await esperarSincronizacao(req.principal!.master ? req.principal!.token : undefined);
        return listarAplicativos(req.entrada.query.pagina, req.entrada.query.tamanho);
      },
    },
    {
      metodo: 'get',
      caminho: '/aplicativo/autocomplete',
      operacao: 'buscar_auto_complete_aplicativo',
      resumo: 'Autocomplete de aplicativos pelo nome',
      acesso: 'usuario',
      permissao: lerAplicativos,
      validar: { query: schemas.autocomplete },
      resposta: respostas.pagina(respostas.aplicativoAutocomplete),
      tratar: (req) => autocompletarAplicativos(req.entrada.query.busca, req.entrada.query.pagina, req.entrada.query.tamanho),
    },
    {
      metodo: 'get',
      caminho: '/aplicativo/filtro',
      operacao: 'buscar_pelo_filtro_aplicativo',
      resumo: 'Aplicativos por nome/descrição e situação',
      acesso: 'usuario',
      permissao: lerAplicativos,
      validar: { query: schemas.filtroDeAplicativos },
      resposta: Joi.array().items(respostas.aplicativo),
      tratar: (req) => filtrarAplicativos(req.entrada.query),
    },
    {
      metodo: 'get',
      caminho: '/aplicativo/:id',
      operacao: 'buscar_pelo_id_aplicativo',
      resumo: 'Aplicativo pelo id',
      acesso: 'usuario',
      permissao: lerAplicativos,
      validar: { params: schemas.paramsId },
      resposta: respostas.aplicativo,
      tratar: (req) => aplicativoPorId(req.entrada.params.id),
    },
  ];
}

function rotasDeAssinaturas(): Rota[] {
  return [
    {
      metodo: 'get',
      caminho: '/assinatura',
      operacao: 'buscar_paginador_assinatura',
      resumo: 'Assinaturas por aplicativo assinante e tipo de evento',
      acesso: 'usuario',
      permissao: lerAssinaturas,
      validar: { query: schemas.paginaSemMaximo },
      resposta: respostas.pagina(respostas.assinatura),
      tratar: (req) => listarAssinaturas(req.entrada.query.pagina, req.entrada.query.tamanho),
    },
    {
      metodo: 'post',
      caminho: '/assinatura',
      operacao: 'criar_assinatura',
      outrasRespostas: {
        '409': 'O aplicativo já assina este tipo de evento (para mudar a versão, altere a assinatura)',
        '422': 'Aplicativo assinante inexistente ou inativo, tipo de evento inexistente, ou versão inexistente ou desligada',
      },
      resumo: 'Cria uma assinatura',
      acesso: 'usuario',
      permissao: controle.podeComMasterConfirmado('criar', 'assinaturas'),
      validar: { body: schemas.criarAssinatura },
      status: 201,
      resposta: respostas.assinatura,
      tratar: (req) => criarAssinatura(req.entrada.body),
    },
    {
      metodo: 'get',
      caminho: '/assinatura/autocomplete',
      operacao: 'buscar_auto_complete_assinatura',
      resumo: 'Autocomplete por nome do assinante ou do tipo',
      acesso: 'usuario',
      permissao: lerAssinaturas,
      validar: { query: schemas.autocomplete },
      resposta: respostas.pagina(respostas.assinaturaAutocomplete),
      tratar: (req) => autocompletarAssinaturas(req.entrada.query.busca, req.entrada.query.pagina, req.entrada.query.tamanho),
    },
    {
      metodo: 'get',
      caminho: '/assinatura/filtro',
      operacao: 'buscar_pelo_filtro_assinatura',
      resumo: 'Assinaturas por valores exatos',
      acesso: 'usuario',
      permissao: lerAssinaturas,
      validar: { query: schemas.filtroDeAssinaturas },
      resposta: Joi.array().items(respostas.assinatura),
      tratar: (req) => filtrarAssinaturas(req.entrada.query),
    },
    {
      metodo: 'get',
      caminho: '/assinatura/:id',
      operacao: 'buscar_pelo_id_assinatura',
      resumo: 'Assinatura pelo id',
      acesso: 'usuario',
      permissao: lerAssinaturas,
      validar: { params: schemas.paramsId },
      resposta: respostas.assinatura,
      tratar: (req) => assinaturaPorId(req.entrada.params.id),
    },
    {
      metodo: 'patch',
      caminho: '/assinatura/:id',
      operacao: 'atualizar_pelo_id_assinatura',
      outrasRespostas: { '422': 'versao_do_esquema inexistente ou desligada' },
      resumo: 'Altera a assinatura (só os campos enviados)',
      acesso: 'usuario',
      permissao: controle.podeComMasterConfirmado('editar', 'assinaturas'),
      validar: { params: schemas.paramsId, body: schemas.atualizarAssinatura },
      resposta: respostas.assinatura,
      tratar: (req) => atualizarAssinatura(req.entrada.params.id, req.entrada.body),
    },
    {
      metodo: 'delete',
      caminho: '/assinatura/:id',
      operacao: 'deletar_pelo_id_assinatura',
      resumo: 'Remove a assinatura e cancela suas entregas pendentes',
      acesso: 'usuario',
      permissao: controle.pode('deletar', 'assinaturas'),
      validar: { params: schemas.paramsId },
      tratar: (req) => semCorpo(() => deletarAssinatura(req.entrada.params.id)),
    },
    {
      metodo: 'post',
      caminho: '/assinatura/:id/reenviar_falhas',
      operacao: 'reenviar_falhas_assinatura',
      outrasRespostas: { '409': 'A assinatura está inativa (reative-a antes de reenviar), ou o aplicativo assinante está inativo (saiu do identity)' },
      resumo: 'Reenvia as entregas da fila de erro da assinatura',
      acesso: 'usuario',
      permissao: controle.pode('editar', 'monitoramento'),
      validar: { params: schemas.paramsId },
      status: 202,
      resposta: Joi.object({ reenviadas: Joi.number().integer().required() }),
      tratar: (req) => reenviarFalhas(req.entrada.params.id),
    },
  ];
}

function rotasDeTipos(): Rota[] {
  return [
    {
      metodo: 'get',
      caminho: '/tipo_de_evento',
      operacao: 'buscar_paginador_tipo_de_evento',
      resumo: 'Tipos de evento por nome',
      acesso: 'usuario',
      permissao: lerContratos,
      validar: { query: schemas.paginaSemMaximo },
      resposta: respostas.pagina(respostas.tipo),
      tratar: (req) => listarTipos(req.entrada.query.pagina, req.entrada.query.tamanho),
    },
    {
      metodo: 'post',
      caminho: '/tipo_de_evento',
      operacao: 'criar_tipo_de_evento',
      outrasRespostas: {
        '409': 'Nome já usado por outro tipo, ou reservado aos eventos do identity',
        '422': 'aplicativo_id não nomeia um aplicativo ativo',
      },
      resumo: 'Cria um tipo de evento de um aplicativo',
      acesso: 'usuario',
      permissao: controle.pode('criar', 'contratos'),
      validar: { body: schemas.criarTipo },
      status: 201,
      resposta: respostas.tipo,
      tratar: (req) => criarTipo(req.entrada.body),
    },
    {
      metodo: 'get',
      caminho: '/tipo_de_evento/:id',
      operacao: 'buscar_pelo_id_tipo_de_evento',
      resumo: 'Tipo de evento pelo id, com suas versões',
      acesso: 'usuario',
      permissao: lerContratos,
      validar: { params: schemas.paramsId },
      resposta: respostas.tipo,
      tratar: (req) => tipoPorId(req.entrada.params.id),
    },
    {
      metodo: 'patch',
      caminho: '/tipo_de_evento/:id',
      operacao: 'atualizar_pelo_id_tipo_de_evento',
      outrasRespostas: { '409': 'Nome já usado por outro tipo, ou tipo do identity, que não é renomeado' },
      resumo: 'Altera nome ou descrição',
      acesso: 'usuario',
      permissao: controle.pode('editar', 'contratos'),
      validar: { params: schemas.paramsId, body: schemas.atualizarTipo },
      resposta: respostas.tipo,
      tratar: (req) => atualizarTipo(req.entrada.params.id, req.entrada.body),
    },
    {
      metodo: 'delete',
      caminho: '/tipo_de_evento/:id',
      operacao: 'deletar_pelo_id_tipo_de_evento',
      outrasRespostas: { '409': 'O tipo tem assinaturas, ou é do identity' },
      resumo: 'Remove um tipo sem assinaturas',
      acesso: 'usuario',
      permissao: controle.pode('deletar', 'contratos'),
      validar: { params: schemas.paramsId },
      tratar: (req) => semCorpo(() => deletarTipo(req.entrada.params.id)),
    },
    {
      metodo: 'post',
      caminho: '/tipo_de_evento/:id/versao',
      operacao: 'criar_versao_tipo_de_evento',
      resumo: 'Nova versão (JSON Schema de dados)',
      acesso: 'usuario',
      permissao: controle.pode('criar', 'contratos'),
      validar: { params: schemas.paramsId, body: schemas.criarVersao },
      status: 201,
      resposta: respostas.versao,
      tratar: (req) => criarVersao(req.entrada.params.id, req.entrada.body.esquema),
    },
    {
      metodo: 'get',
      caminho: '/tipo_de_evento/:id/versao/:versao',
      operacao: 'buscar_versao_tipo_de_evento',
      resumo: 'Uma versão com seu esquema',
      acesso: 'usuario',
      permissao: lerContratos,
      validar: { params: schemas.paramsVersao },
      resposta: respostas.versao,
      tratar: (req) => versaoPorNumero(req.entrada.params.id, req.entrada.params.versao),
    },
    {
      metodo: 'patch',
      caminho: '/tipo_de_evento/:id/versao/:versao',
      operacao: 'mudar_situacao_versao_tipo_de_evento',
      outrasRespostas: { '409': 'A versão 1 de um tipo publicado pelo identity (colaborador.*) não pode ser desligada' },
      resumo: 'Ativa, deprecia ou desliga uma versão',
      acesso: 'usuario',
      permissao: controle.pode('editar', 'contratos'),
      validar: { params: schemas.paramsVersao, body: schemas.mudarVersao },
      resposta: respostas.versao,
      tratar: (req) => mudarSituacaoDaVersao(req.entrada.params.id, req.entrada.params.versao, req.entrada.body.situacao),
    },
  ];
}

function rotasDeEntregas(): Rota[] {
  return [
    {
      metodo: 'post',
      caminho: '/eventos',
      operacao: 'publicar_evento',
      outrasRespostas: {
        '403': 'Token de usuário, aplicativo não registrado no hub ou inativo (saiu do identity), ou que não é dono do tipo',
        '422': 'Tipo de evento ou versão inexistente, ou versão desligada',
        '503': 'A fila de entregas está indisponível: o evento foi guardado; repita com o mesmo id para ter a resposta (sem id, não repita)',
      },
      semRetryAfterQuando: 'quando o evento foi guardado sem id: repeti-lo seria publicar outro',
      resumo: 'Publica um evento (token de aplicativo dono do tipo)',
      acesso: 'aplicativo',
      permissao: descrita('o aplicativo dono do tipo de evento, ativo', async (quem) => void (await publicadorAtivo(quem))),
      validar: { body: schemas.publicar },
      status: 202,
      resposta: respostas.publicacao,
      tratar: (req) => publicarEvento(req.principal!, req.entrada.body),
    },
    {
      metodo: 'get',
      caminho: '/.well-known/jwks.json',
      operacao: 'jwks',
      resumo: 'Chaves públicas Ed25519 que verificam as entregas',
      acesso: 'publico',
      resposta: esquemaJwks,
      tratar: async (_req, res) => {
        res.setHeader('Cache-Control', 'public, max-age=300');
        return jwksDoHub();
      },
    },
    {
      metodo: 'get',
      caminho: '/entrega',
      operacao: 'buscar_paginador_entrega',
      resumo: 'Entregas, mais recentes primeiro',
      acesso: 'usuario',
      permissao: lerMonitoramento,
      validar: { query: schemas.filtroDeEntregas },
      resposta: respostas.paginaDeEntregas(respostas.entrega),
      tratar: (req) => {
        const { pagina, tamanho, ...filtros } = req.entrada.query;
        return listarEntregas(filtros, pagina, tamanho);
      },
    },
    {
      metodo: 'get',
      caminho: '/entrega/:id',
      operacao: 'buscar_pelo_id_entrega',
      resumo: 'Entrega com seu evento e suas tentativas',
      acesso: 'usuario',
      permissao: lerMonitoramento,
      validar: { params: schemas.paramsId },
      resposta: respostas.entrega.keys({
        evento: Joi.object({ id: Joi.string(), versao: Joi.number().integer(), dados: Joi.any(), criado_em: Joi.string().isoDate() }).allow(null),
        historico: respostas.historico,
      }),
      tratar: (req) => entregaPorId(req.entrada.params.id),
    },
    {
      metodo: 'post',
      caminho: '/entrega/:id/reenviar',
      operacao: 'reenviar_entrega',
      outrasRespostas: { '409': 'A entrega está pendente ou foi cancelada, ou sua assinatura ou o aplicativo assinante está inativo' },
      resumo: 'Nova rodada de tentativas de uma entrega na fila de erro ou já entregue',
      acesso: 'usuario',
      permissao: controle.pode('editar', 'monitoramento'),
      validar: { params: schemas.paramsId },
      status: 202,
      resposta: respostas.entrega,
      tratar: (req) => reenviarEntrega(req.entrada.params.id),
    },
  ];
}

export function rotasDoHub(): Rota[] {
  return [...rotasDeAplicativos(), ...rotasDeAssinaturas(), ...rotasDeTipos(), ...rotasDeEntregas(), ...rotasDeAcesso(acessoHub)];
}
