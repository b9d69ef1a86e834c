import { Aplicativo } from './aplicativo';
import { Assinatura } from './assinatura';
import { ChaveDoHub } from './chave-do-hub';
import { Colaborador } from './colaborador';
import { Entrega, TentativaDeEntrega } from './entrega';
import { Evento } from './evento';
import { PerfilAcesso } from './perfil-acesso';
import { Segredo } from './segredo';
import { TipoDeEvento, VersaoDeEvento } from './tipo-de-evento';

export { Aplicativo, Assinatura, ChaveDoHub, Colaborador, Entrega, Evento, PerfilAcesso, Segredo, TentativaDeEntrega, TipoDeEvento, VersaoDeEvento };
export { MIGRACOES_HUB } from './migracoes';
export const MODELOS_HUB = [
  PerfilAcesso,
  Colaborador,
  Aplicativo,
  TipoDeEvento,
  VersaoDeEvento,
  Assinatura,
  Evento,
  Entrega,
  TentativaDeEntrega,
  ChaveDoHub,
  Segredo,
];
