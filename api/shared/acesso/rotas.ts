import Joi from 'joi';
import { paginaNumerada, sempre } from '../openapi';
import { booleano, id, pagina, tamanho, texto } from '../paginacao';
import { Rota } from '../rotas';
import { AREA_DO_MODULO, ModuloDeAcesso } from '.';
import { ACOES } from './permissoes';


const colaboradorSchema = sempre({
  id: Joi.string(),
  auth_id: Joi.string(),
  nome: Joi.string(),
  email: Joi.string(),
  ativo: Joi.boolean(),
  master: Joi.boolean(),
  cargo: Joi.string().allow(null),
  funcao: Joi.string().allow(null),
  setor: Joi.string().allow(null),
  telefone: Joi.string().allow(null),
  perfil_acesso_id: Joi.string().allow(null),
  perfil_acesso: Joi.string().allow(null),
  criado_em: Joi.string().isoDate(),
  atualizado_em: Joi.string().isoDate(),
}).label('Colaborador');

const autocompleteSchema = sempre({ id: Joi.string(), nome: Joi.string(), email: Joi.string() });

const perfilSchema = sempre({
  id: Joi.string(),
  nome: Joi.string(),
  descricao: Joi.string().allow(null),
  // keys as an expression (any area): joi-to-json documents only those as patternProperties
  permissoes: Joi.object().pattern(/^/, Joi.array().items(Joi.string())),
  sistema: Joi.boolean(),
  criado_em: Joi.string().isoDate(),
  atualizado_em: Joi.string().isoDate(),
}).label('PerfilAcesso');

/** SPEC §2 cursor page: `proximo_cursor` is always sent, null on the last page. */
const paginaCursor = (item: Joi.Schema) =>
  sempre({ itens: Joi.array().items(item), proximo_cursor: Joi.string().allow(null), tamanho: Joi.number().integer() });

/** Any text is a cursor: one that names no collaborator (however long) answers an empty page (SPEC 4.5 rule 1). */
const CURSOR = texto(2000);
const filtrosDaLista = { nome: texto(), setor: texto(), cargo: texto(), ativo: booleano() };
const paramsId = Joi.object({ id: id().required() });

/** Routes of the access module (SPEC 4.5 and DESIGN §3), the same in every service that mounts it. */
export function rotasDeAcesso(acesso: ModuloDeAcesso): Rota[] {
  const { colaboradores, perfis, controle } = acesso;
  const ler = controle.lerEmQualquer(AREA_DO_MODULO);
  const permissoesSchema = Joi.object()
    .pattern(
      new RegExp(`^(${acesso.areas.map((a) => a.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|')})$`),
      Joi.array()
        .items(Joi.string().valid(...ACOES))
        .max(ACOES.length),
    )
    .messages({ 'object.unknown': `área desconhecida; áreas deste serviço: ${acesso.areas.join(', ')}` });

  return [
    {
      metodo: 'get',
      caminho: '/colaborador',
      operacao: 'buscar_paginador_colaborador',
      resumo: 'Colaboradores em páginas de 50, por nome e id (cursor)',
      acesso: 'usuario',
      permissao: ler,
      validar: { query: Joi.object({ cursor: CURSOR, ...filtrosDaLista }) },
      resposta: paginaCursor(colaboradorSchema),
      tratar: async (req) => {
        const { cursor, ...filtros } = req.entrada.query;
        await acesso.sincronizarAntesDeListar(req.principal!, cursor);
        return colaboradores.listar(filtros, cursor);
      },
    },
    {
      metodo: 'get',
      caminho: '/colaborador/autocomplete',
      operacao: 'buscar_auto_complete_colaborador',
      resumo: 'Autocomplete por nome ou e-mail (cursor)',
      acesso: 'usuario',
      permissao: ler,
      validar: { query: Joi.object({ busca: texto(), tamanho: tamanho(10, 100), cursor: CURSOR }) },
      resposta: paginaCursor(autocompleteSchema),
      // no sync: a screen asks on every keystroke, and each sync reads every collaborator of
      // identity; the people it would register come with the list, the total or the filter
      tratar: (req) => colaboradores.autocompletar(req.entrada.query.busca, req.entrada.query.tamanho, req.entrada.query.cursor),
    },
    {
      metodo: 'get',
      caminho: '/colaborador/filtro',
      operacao: 'buscar_pelo_filtro_colaborador',
      resumo: 'Colaboradores filtrados, em ordem alfabética, sem paginação',
      acesso: 'usuario',
      permissao: ler,
      validar: {
        query: Joi.object({ busca: texto(), email: texto(254), perfil_acesso_id: id().empty(''), ...filtrosDaLista }),
      },
      resposta: Joi.array().items(colaboradorSchema),
      tratar: async (req) => {
        await acesso.sincronizarAntesDeListar(req.principal!);
        return colaboradores.filtrar(req.entrada.query);
      },
    },
    {
      metodo: 'get',
      caminho: '/colaborador/total',
      operacao: 'buscar_total_colaborador',
      resumo: 'Total com os filtros da lista',
      acesso: 'usuario',
      permissao: ler,
      validar: { query: Joi.object(filtrosDaLista) },
      resposta: sempre({ total: Joi.number().integer() }),
      // asked in parallel with the first page (SPEC 4.5 rule 4): it syncs as that page does,
      // sharing its job, so both count the same people
      tratar: async (req) => {
        await acesso.sincronizarAntesDeListar(req.principal!);
        return colaboradores.total(req.entrada.query);
      },
    },
    {
      metodo: 'get',
      caminho: '/colaborador/:id',
      operacao: 'buscar_pelo_id_colaborador',
      resumo: 'Colaborador pelo id',
      acesso: 'usuario',
      permissao: ler,
      validar: { params: paramsId },
      resposta: colaboradorSchema,
      tratar: (req) => colaboradores.porId(req.entrada.params.id),
    },
    {
      metodo: 'patch',
      caminho: '/colaborador/:id/perfil_acesso',
      operacao: 'vincular_perfil_acesso_colaborador',
      resumo: 'Define ou remove (null) o perfil de acesso',
      acesso: 'usuario',
      permissao: controle.pode('editar', AREA_DO_MODULO),
      validar: { params: paramsId, body: Joi.object({ perfil_acesso_id: id().allow(null) }).required() },
      resposta: colaboradorSchema,
      outrasRespostas: { '409': 'O colaborador é master no identity e não aceita perfil', '422': 'perfil_acesso_id não nomeia um perfil existente' },
      tratar: (req) => acesso.vincularPerfil(req.principal!, req.entrada.params.id, req.entrada.body.perfil_acesso_id),
    },
    {
      metodo: 'get',
      caminho: '/perfil_acesso',
      operacao: 'buscar_paginador_perfil_acesso',
      resumo: 'Perfis de acesso em páginas, por nome',
      acesso: 'usuario',
      permissao: ler,
      validar: { query: Joi.object({ pagina: pagina(), tamanho: tamanho(10, 500) }) },
      resposta: paginaNumerada(perfilSchema),
      tratar: (req) => perfis.listar(req.entrada.query.pagina, req.entrada.query.tamanho),
    },
    {
      metodo: 'get',
      caminho: '/perfil_acesso/filtro',
      operacao: 'buscar_pelo_filtro_perfil_acesso',
      resumo: 'Perfis de acesso por nome, sem paginação',
      acesso: 'usuario',
      permissao: ler,
      validar: { query: Joi.object({ nome: texto() }) },
      resposta: Joi.array().items(perfilSchema),
      tratar: (req) => perfis.filtrar(req.entrada.query.nome),
    },
    {
      metodo: 'get',
      caminho: '/perfil_acesso/:id',
      operacao: 'buscar_pelo_id_perfil_acesso',
      resumo: 'Perfil de acesso pelo id',
      acesso: 'usuario',
      permissao: ler,
      validar: { params: paramsId },
      resposta: perfilSchema,
      tratar: (req) => perfis.porId(req.entrada.params.id),
    },
    {
      metodo: 'post',
      caminho: '/perfil_acesso',
      operacao: 'criar_perfil_acesso',
      resumo: 'Cria um perfil de acesso',
      acesso: 'usuario',
      permissao: controle.pode('criar', AREA_DO_MODULO),
      validar: {
        body: Joi.object({
          nome: Joi.string().trim().min(1).max(120).required(),
          descricao: Joi.string().trim().max(500).allow(null, ''),
          permissoes: permissoesSchema.required(),
        }).required(),
      },
      status: 201,
      resposta: perfilSchema,
      outrasRespostas: { '409': 'Já existe um perfil com esse nome' },
      tratar: async (req) => perfis.criar(req.entrada.body, await controle.alcanceParaConceder(req.principal!, 'criar', AREA_DO_MODULO)),
    },
    {
      metodo: 'patch',
      caminho: '/perfil_acesso/:id',
      operacao: 'atualizar_pelo_id_perfil_acesso',
      resumo: 'Altera nome, descrição ou permissões',
      acesso: 'usuario',
      permissao: controle.pode('editar', AREA_DO_MODULO),
      validar: {
        params: paramsId,
        body: Joi.object({
          nome: Joi.string().trim().min(1).max(120),
          descricao: Joi.string().trim().max(500).allow(null, ''),
          permissoes: permissoesSchema,
        }).required(),
      },
      resposta: perfilSchema,
      outrasRespostas: { '409': 'Perfil do sistema, ou nome já usado por outro perfil' },
      tratar: async (req) => perfis.atualizar(req.entrada.params.id, req.entrada.body, await controle.alcanceParaConceder(req.principal!, 'editar', AREA_DO_MODULO)),
    },
    {
      metodo: 'delete',
      caminho: '/perfil_acesso/:id',
      operacao: 'deletar_pelo_id_perfil_acesso',
      resumo: 'Remove um perfil que nenhum colaborador usa',
      acesso: 'usuario',
      permissao: controle.pode('deletar', AREA_DO_MODULO),
      validar: { params: paramsId },
      outrasRespostas: { '409': 'Perfil do sistema, ou ligado a colaboradores' },
      tratar: async (req) => {
        await perfis.deletar(req.entrada.params.id, await controle.alcanceParaConceder(req.principal!, 'deletar', AREA_DO_MODULO));
        return undefined;
      },
    },
  ];
}

