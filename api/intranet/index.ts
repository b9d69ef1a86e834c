import { MIGRACOES_INTRANET, MODELOS_INTRANET } from '../../models/intranet';
import { rotasDeAcesso } from '../shared/acesso/rotas';
import { criarApp } from '../shared/app';
import { autenticadorRemoto } from '../shared/auth';
import { prontidao, Servico } from '../shared/servico';
import { acessoIntranet } from './acesso';

export const intranet: Servico = {
  nome: 'intranet',
  modelos: MODELOS_INTRANET,
  migracoes: MIGRACOES_INTRANET,
  preparar: () => acessoIntranet.preparar(),
  app: () =>
    criarApp({
      nome: 'intranet',
      info: { title: 'Intranet', version: '0.1.0', description: 'Colaboradores e seus perfis de acesso.' },
      rotas: rotasDeAcesso(acessoIntranet),
      autenticar: autenticadorRemoto(),
      pronto: () => prontidao('intranet'),
    }),
};
