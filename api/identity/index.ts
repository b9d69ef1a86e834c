import { MIGRACOES_IDENTITY, MODELOS_IDENTITY } from '../../models/identity';
import { criarApp } from '../shared/app';
import { autenticadorLocal } from '../shared/auth';
import { prontidao, Servico } from '../shared/servico';
import { jwks } from './chaves';
import { prepararIdentity } from './preparar';
import { rotasDoIdentity } from './routes';

export const identity: Servico = {
  nome: 'identity',
  modelos: MODELOS_IDENTITY,
  migracoes: MIGRACOES_IDENTITY,
  preparar: prepararIdentity,
  app: () =>
    criarApp({
      nome: 'identity',
      info: { title: 'Identity', version: '0.1.0', description: 'Login central, usuários, aplicativos e tokens.' },
      rotas: rotasDoIdentity(),
      autenticar: autenticadorLocal(jwks),
      pronto: () => prontidao('identity'),
    }),
};
