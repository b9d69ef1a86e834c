import { AnexoDaMensagem } from './anexo-da-mensagem';
import { Cliente } from './cliente';
import { Colaborador } from './colaborador';
import { ConfigSystem } from './config-system';
import { ContatoGateway } from './contato-gateway';
import { Conversa } from './conversa';
import { ConversaMensagem } from './conversa-mensagem';
import { PerfilAcesso } from './perfil-acesso';
import { Robo } from './robo';
import { Segredo } from './segredo';

export { AnexoDaMensagem, Cliente, Colaborador, ConfigSystem, ContatoGateway, Conversa, ConversaMensagem, PerfilAcesso, Robo, Segredo };
export type { TipoDeSistema } from './config-system';
export type { StatusDaConversa } from './conversa';
export type { AutorDaMensagem } from './conversa-mensagem';
export { MIGRACOES_SALES } from './migracoes';
export const MODELOS_SALES = [
  PerfilAcesso,
  Colaborador,
  Segredo,
  ConfigSystem,
  Cliente,
  Robo,
  Conversa,
  ConversaMensagem,
  AnexoDaMensagem,
  ContatoGateway,
];
