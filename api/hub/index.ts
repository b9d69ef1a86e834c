import { MIGRACOES_HUB, MODELOS_HUB } from '../../models/hub';
import { eventosDaFila } from '../../queues/fila';
import { filaHubAplicativoSync } from '../../queues/hub-aplicativo-sync';
import { criarApp } from '../shared/app';
import { autenticadorRemoto } from '../shared/auth';
import { prontidao, Servico } from '../shared/servico';
import { acessoHub } from './acesso';
import { carregarChavesDoHub } from './assinador';
import { rotasDoHub } from './routes';
import { webhooksDoHub } from './schemas';

export const hub: Servico = {
  nome: 'hub',
  modelos: MODELOS_HUB,
  migracoes: MIGRACOES_HUB,
  preparar: async () => {
    await carregarChavesDoHub();
    await acessoHub.preparar();
    await eventosDaFila(filaHubAplicativoSync).waitUntilReady();
  },
  app: () =>
    criarApp({
      nome: 'hub',
      info: { title: 'Webhook hub', version: '0.1.0', description: 'Eventos publicados e entregues às assinaturas, assinados.' },
      rotas: rotasDoHub(),
      webhooks: webhooksDoHub,
      autenticar: autenticadorRemoto(),
      pronto: () => prontidao('hub'),
    }),
};
