import { MIGRACOES_IDENTITY, MODELOS_IDENTITY } from '../../models/identity';
import { criarApp } from '../shared/app';
import { prontidao, Servico } from '../shared/servico';
import { autenticadorDoIdentity } from './login';
import { prepararIdentity, publicarMastersAoServir } from './preparar';
import { rotasDoIdentity } from './routes';

export const identity: Servico = {
  nome: 'identity',
  modelos: MODELOS_IDENTITY,
  migracoes: MIGRACOES_IDENTITY,
  preparar: prepararIdentity,
  aoServir: publicarMastersAoServir,
  app: () =>
    criarApp({
      nome: 'identity',
      info: { title: 'Identity', version: '0.1.0', description: 'Login central, usuários, aplicativos e tokens.' },
      rotas: rotasDoIdentity(),
      autenticar: autenticadorDoIdentity(),
      pronto: () => prontidao('identity'),
    }),
};
