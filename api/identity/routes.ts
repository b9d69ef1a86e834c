import Joi from 'joi';
import { config } from '../../config';
import { Principal } from '../shared/principal';
import { LIMITE_EXCEDIDO, limitePorEndereco } from '../shared/limite';
import { esquemaJwks } from '../shared/openapi';
import { proibido } from '../shared/errors';
import { comoId } from '../shared/paginacao';
import { descrita, Rota, semCache, somenteMaster } from '../shared/rotas';
import { aplicativoPorId, atualizarAplicativo, criarAplicativo, deletarAplicativo, listarAplicativos, renovarSegredo } from './aplicativos';
import { criarCadastro, listarCadastros, TipoDeCadastro } from './cadastros';
import { jwks } from './chaves';
import { entrar, tokenDeAplicativo } from './login';
import { respostas, schemas } from './schemas';
import {
  atualizarUsuario,
  autocompletarUsuarios,
  criarUsuario,
  deletarUsuario,
  filtrarUsuarios,
  listarUsuarios,
  usuarioPorId,
} from './usuarios';

/** A password hashed by the request waits its turn (senhas.ts): too many waiting, it is refused. */
const SENHAS_DEMAIS = 'Senhas demais sendo verificadas agora; Retry-After diz em quantos segundos';

/** A user who is not a master reads only their own record (checked before the id's form, DESIGN §10). */
const masterOuOProprio = descrita('um master, ou o próprio usuário', (p: Principal, req) => {
  // before validation: the id as the route will take it
  if (!p.master && p.sub !== comoId(String(req.params.id))) throw proibido('Um usuário que não é master só lê o próprio registro.');
});
/** Applications read the application list (the hub syncs from it); users must be masters. */
const masterOuAplicativo = descrita('um master ou um aplicativo', (p: Principal) => {
  if (p.tipo === 'usuario' && !p.master) throw proibido('Somente um usuário master ou um aplicativo.');
});

function rotasDeCadastro(tipo: TipoDeCadastro, plural: string): Rota[] {
  return [
    {
      metodo: 'get',
      caminho: `/${tipo}`,
      operacao: `buscar_${tipo}`,
      resumo: `Lista ${plural} em ordem alfabética`,
      acesso: 'usuario',
      resposta: Joi.array().items(respostas.cadastro),
      tratar: () => listarCadastros(tipo),
    },
    {
      metodo: 'post',
      caminho: `/${tipo}`,
      operacao: `criar_${tipo}`,
      outrasRespostas: { '409': 'Já existe um registro com este nome' },
      resumo: `Cria um registro de ${plural}`,
      acesso: 'usuario',
      permissao: somenteMaster,
      validar: { body: schemas.criarCadastro },
      status: 201,
      resposta: respostas.cadastro,
      tratar: (req) => criarCadastro(tipo, req.entrada.body.nome),
    },
  ];
}

/** Identity routes: SPEC 4.1 plus DESIGN §3 (login, tokens, keys, administration). */
export function rotasDoIdentity(): Rota[] {
  // one budget per route: a burst of wrong passwords from an address must not stop the services
  // behind it from getting their application tokens, nor the other way round
  const porMinuto = config().identity.loginLimitePorMinuto;
  const limiteDeLogin = limitePorEndereco('login', porMinuto);
  const limiteDeToken = limitePorEndereco('token', porMinuto);
  return [
    {
      metodo: 'post',
      caminho: '/auth/login',
      operacao: 'login',
      resumo: 'Login de usuário por e-mail e senha',
      acesso: 'publico',
      antes: [limiteDeLogin],
      outrasRespostas: {
        '429': `${LIMITE_EXCEDIDO}; ou senhas demais sendo verificadas agora`,
        '401': 'E-mail ou senha inválidos (a tentativa que chega ao limite bloqueia o login)',
        '423': 'Login bloqueado até bloqueado_ate; Retry-After diz em quantos segundos',
      },
      validar: { body: schemas.login },
      resposta: respostas.token.keys({ usuario: respostas.usuario }),
      tratar: (req, res) => semCache(res, entrar(req.entrada.body.email, req.entrada.body.senha)),
    },
    {
      metodo: 'post',
      caminho: '/auth/token',
      operacao: 'token_de_aplicativo',
      resumo: 'Token de aplicativo (client credentials)',
      acesso: 'publico',
      antes: [limiteDeToken],
      outrasRespostas: { '429': LIMITE_EXCEDIDO, '401': 'client_id ou client_secret inválidos' },
      validar: { body: schemas.token },
      resposta: respostas.token,
      tratar: (req, res) => semCache(res, tokenDeAplicativo(req.entrada.body.client_id, req.entrada.body.client_secret)),
    },
    {
      metodo: 'get',
      caminho: '/.well-known/jwks.json',
      operacao: 'jwks',
      resumo: 'Chaves públicas que verificam os tokens',
      acesso: 'publico',
      // the keys in memory (a rotation reloads them): no database nor Redis on the way
      semDependencias: true,
      resposta: esquemaJwks,
      tratar: (_req, res) => {
        res.setHeader('Cache-Control', 'public, max-age=300');
        return jwks();
      },
    },
    {
      metodo: 'get',
      caminho: '/usuario',
      operacao: 'buscar_paginador_usuario',
      resumo: 'Usuários, mais recentes primeiro',
      acesso: 'usuario',
      permissao: somenteMaster,
      validar: { query: schemas.listaDeUsuarios },
      resposta: respostas.pagina(respostas.usuario),
      tratar: (req) => {
        const { pagina, tamanho, ...filtros } = req.entrada.query;
        return listarUsuarios(filtros, pagina, tamanho);
      },
    },
    {
      metodo: 'get',
      caminho: '/usuario/autocomplete',
      operacao: 'buscar_auto_complete_usuario',
      resumo: 'Autocomplete de usuários, alfabético',
      acesso: 'usuario',
      permissao: somenteMaster,
      validar: { query: schemas.autocompleteDeUsuarios },
      resposta: respostas.pagina(respostas.autocomplete),
      tratar: (req) => {
        const { pagina, tamanho, ...filtros } = req.entrada.query;
        return autocompletarUsuarios(filtros, pagina, tamanho);
      },
    },
    {
      metodo: 'get',
      caminho: '/usuario/filtro',
      operacao: 'buscar_pelo_filtro_usuario',
      resumo: 'Usuários filtrados, alfabético, sem paginação',
      acesso: 'usuario',
      permissao: somenteMaster,
      validar: { query: schemas.filtroDeUsuarios },
      resposta: Joi.array().items(respostas.usuario),
      tratar: (req) => filtrarUsuarios(req.entrada.query),
    },
    {
      metodo: 'get',
      caminho: '/usuario/:id',
      operacao: 'buscar_pelo_id_usuario',
      resumo: 'Usuário pelo id (quem não é master, só o próprio)',
      acesso: 'usuario',
      permissao: masterOuOProprio,
      validar: { params: schemas.paramsId },
      resposta: respostas.usuario,
      tratar: (req) => usuarioPorId(req.entrada.params.id),
    },
    {
      metodo: 'post',
      caminho: '/usuario',
      operacao: 'criar_usuario',
      outrasRespostas: {
        '409': 'Já existe um usuário com este e-mail',
        '422': 'setor_id, cargo_id ou funcao_id não nomeia um registro existente',
        '429': SENHAS_DEMAIS,
      },
      resumo: 'Cria um usuário',
      acesso: 'usuario',
      permissao: somenteMaster,
      validar: { body: schemas.criarUsuario },
      status: 201,
      resposta: respostas.usuario,
      tratar: (req) => criarUsuario(req.entrada.body, req.principal!),
    },
    {
      metodo: 'patch',
      caminho: '/usuario/:id',
      operacao: 'atualizar_pelo_id_usuario',
      outrasRespostas: {
        '409': 'E-mail de outro usuário, ou um master tirando de si o master',
        '422': 'setor_id, cargo_id ou funcao_id não nomeia um registro existente',
        '429': SENHAS_DEMAIS,
      },
      resumo: 'Altera um usuário (só os campos enviados)',
      acesso: 'usuario',
      permissao: somenteMaster,
      validar: { params: schemas.paramsId, body: schemas.atualizarUsuario },
      resposta: respostas.usuario,
      tratar: (req) => atualizarUsuario(req.entrada.params.id, req.entrada.body, req.principal!),
    },
    {
      metodo: 'delete',
      caminho: '/usuario/:id',
      operacao: 'deletar_pelo_id_usuario',
      outrasRespostas: { '409': 'Um usuário não pode remover a si mesmo' },
      resumo: 'Remove um usuário (logicamente)',
      acesso: 'usuario',
      permissao: somenteMaster,
      validar: { params: schemas.paramsId },
      tratar: async (req) => {
        await deletarUsuario(req.entrada.params.id, req.principal!);
        return undefined;
      },
    },
    {
      metodo: 'get',
      caminho: '/aplicativo',
      operacao: 'buscar_paginador_aplicativo',
      resumo: 'Aplicativos, em ordem alfabética',
      acesso: 'usuario_ou_aplicativo',
      permissao: masterOuAplicativo,
      validar: { query: schemas.listaDeAplicativos },
      resposta: respostas.pagina(respostas.aplicativo),
      tratar: (req) => listarAplicativos(req.entrada.query.pagina, req.entrada.query.tamanho),
    },
    {
      metodo: 'get',
      caminho: '/aplicativo/:id',
      operacao: 'buscar_pelo_id_aplicativo',
      resumo: 'Aplicativo pelo id',
      acesso: 'usuario_ou_aplicativo',
      permissao: masterOuAplicativo,
      validar: { params: schemas.paramsId },
      resposta: respostas.aplicativo,
      tratar: (req) => aplicativoPorId(req.entrada.params.id),
    },
    {
      metodo: 'post',
      caminho: '/aplicativo',
      operacao: 'criar_aplicativo',
      resumo: 'Cria um aplicativo; client_secret aparece só nesta resposta',
      acesso: 'usuario',
      permissao: somenteMaster,
      validar: { body: schemas.criarAplicativo },
      status: 201,
      resposta: respostas.aplicativo.keys({ client_secret: Joi.string() }),
      tratar: (req, res) => semCache(res, criarAplicativo(req.entrada.body)),
    },
    {
      metodo: 'post',
      caminho: '/aplicativo/:id/segredo',
      operacao: 'renovar_segredo_aplicativo',
      resumo: 'Gera um novo client_secret (o anterior deixa de valer)',
      acesso: 'usuario',
      permissao: somenteMaster,
      validar: { params: schemas.paramsId },
      resposta: respostas.aplicativo.keys({ client_secret: Joi.string() }),
      tratar: (req, res) => semCache(res, renovarSegredo(req.entrada.params.id)),
    },
    {
      metodo: 'patch',
      caminho: '/aplicativo/:id',
      operacao: 'atualizar_pelo_id_aplicativo',
      outrasRespostas: { '409': 'Um aplicativo da própria suíte não pode ser desativado' },
      resumo: 'Altera nome, descrição ou situação',
      acesso: 'usuario',
      permissao: somenteMaster,
      validar: { params: schemas.paramsId, body: schemas.atualizarAplicativo },
      resposta: respostas.aplicativo,
      tratar: (req) => atualizarAplicativo(req.entrada.params.id, req.entrada.body),
    },
    {
      metodo: 'delete',
      caminho: '/aplicativo/:id',
      operacao: 'deletar_pelo_id_aplicativo',
      outrasRespostas: { '409': 'Um aplicativo da própria suíte não pode ser removido' },
      resumo: 'Remove um aplicativo (logicamente)',
      acesso: 'usuario',
      permissao: somenteMaster,
      validar: { params: schemas.paramsId },
      tratar: async (req) => {
        await deletarAplicativo(req.entrada.params.id);
        return undefined;
      },
    },
    ...rotasDeCadastro('setor', 'setores'),
    ...rotasDeCadastro('cargo', 'cargos'),
    ...rotasDeCadastro('funcao', 'funções'),
  ];
}
