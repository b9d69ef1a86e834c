import Joi from 'joi';
import { SINTAXE_DO_EMAIL } from '../../config';
import { paginaNumerada, sempre } from '../shared/openapi';
import { id, pagina, tamanho, texto } from '../shared/paginacao';

/**
 * An address in one form (RFC 6532 §3.1: NFC), so `é` typed as one character or as `e` and a
 * combining accent is one address, and without invisible or control characters (`admin\u200b@...`
 * would look like another user's address everywhere it is shown).
 */
export const email = () =>
  Joi.string()
    .trim()
    .normalize('NFC')
    .lowercase()
    .max(254)
    .email(SINTAXE_DO_EMAIL)
    .pattern(/[\p{Cc}\p{Cf}]/u, { invert: true, name: 'sem caracteres invisíveis ou de controle' });
const perfil = () => Joi.string().valid('colaborador', 'cliente');
const senha = () => Joi.string().min(8).max(200);
const refOpcional = () => id().allow(null);

export const filtrosDeUsuario = { busca: texto(), perfil: perfil().empty('') };

/** a picture's address: http or https only (the document's `format: uri` alone would allow any scheme) */
const imagem = () => Joi.string().uri({ scheme: ['http', 'https'] }).max(1000).allow(null).description('Endereço http ou https da imagem');

export const schemas = {
  paramsId: Joi.object({ id: id().required() }),
  login: Joi.object({ email: email().required(), senha: Joi.string().max(200).required() }).required(),
  token: Joi.object({ client_id: Joi.string().max(64).required(), client_secret: Joi.string().max(200).required() }).required(),
  listaDeUsuarios: Joi.object({ pagina: pagina(), tamanho: tamanho(10, 500), ...filtrosDeUsuario }),
  autocompleteDeUsuarios: Joi.object({ pagina: pagina(), tamanho: tamanho(10), ...filtrosDeUsuario }),
  filtroDeUsuarios: Joi.object(filtrosDeUsuario),
  criarUsuario: Joi.object({
    nome: Joi.string().trim().min(1).max(200).required(),
    email: email().required(),
    perfil: perfil().required(),
    // `senha?` (DESIGN §10): absent or null alike (SPEC §2), a user without a password
    senha: senha().allow(null),
    e_master: Joi.boolean().strict(),
    setor_id: refOpcional(),
    cargo_id: refOpcional(),
    funcao_id: refOpcional(),
    imagem: imagem(),
  }).required(),
  atualizarUsuario: Joi.object({
    nome: Joi.string().trim().min(1).max(200),
    email: email(),
    perfil: perfil(),
    senha: senha(),
    e_master: Joi.boolean().strict(),
    setor_id: refOpcional(),
    cargo_id: refOpcional(),
    funcao_id: refOpcional(),
    imagem: imagem(),
  }).required(),
  listaDeAplicativos: Joi.object({ pagina: pagina(), tamanho: tamanho(10, 500) }),
  criarAplicativo: Joi.object({
    nome: Joi.string().trim().min(1).max(200).required(),
    descricao: Joi.string().trim().max(1000).allow(null, ''),
  }).required(),
  atualizarAplicativo: Joi.object({
    nome: Joi.string().trim().min(1).max(200),
    descricao: Joi.string().trim().max(1000).allow(null, ''),
    ativo: Joi.boolean().strict(),
  }).required(),
  criarCadastro: Joi.object({ nome: Joi.string().trim().min(1).max(200).required() }).required(),
};

const s = Joi.string();
const sn = Joi.string().allow(null);
/** RFC 3339 UTC (DESIGN §4) */
const d = Joi.string().isoDate();
const dn = d.allow(null);

export const respostas = {
  usuario: sempre({
    id: s,
    nome: s,
    email: s,
    perfil: s,
    e_master: Joi.boolean(),
    master_pelo_ambiente: Joi.boolean(),
    email_verificado: Joi.boolean(),
    dois_fatores_ativo: Joi.boolean(),
    tem_senha: Joi.boolean(),
    criado_em: d,
    atualizado_em: d,
    bloqueado_ate: dn,
    ultimo_login_em: dn,
    cargo: sn,
    cargo_id: sn,
    funcao: sn,
    funcao_id: sn,
    setor: sn,
    setor_id: sn,
    imagem: sn,
  }).label('Usuario'),
  autocomplete: sempre({ id: s, nome: s, email: s }),
  /** login adds `usuario` with `.keys()`: required as well */
  token: sempre({ access_token: s, token_type: s, expires_in: Joi.number().integer() }),
  /** creation and a new secret add `client_secret` with `.keys()`: required as well */
  aplicativo: sempre({ id: s, client_id: s, nome: s, descricao: sn, ativo: Joi.boolean(), criado_em: d, atualizado_em: d }),
  cadastro: sempre({ id: s, nome: s, criado_em: d, atualizado_em: d }),
  pagina: paginaNumerada,
};
