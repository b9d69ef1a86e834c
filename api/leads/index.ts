import { MIGRACOES_LEADS, MODELOS_LEADS } from '../../models/leads';
import { eventosDaFila } from '../../queues/fila';
import { filaLeadsContagem } from '../../queues/leads-contagem';
import { criarApp } from '../shared/app';
import { autenticadorRemoto } from '../shared/auth';
import { prontidao, Servico } from '../shared/servico';
import { acessoLeads } from './acesso';
import { rotasDeLeads } from './routes';

export const leads: Servico = {
  nome: 'leads',
  modelos: MODELOS_LEADS,
  migracoes: MIGRACOES_LEADS,
  preparar: async () => {
    await acessoLeads.preparar();
    await eventosDaFila(filaLeadsContagem).waitUntilReady();
  },
  app: () =>
    criarApp({
      nome: 'leads',
      info: { title: 'Leads', version: '0.1.0', description: 'Cadastro CNPJ da Receita Federal: consulta e busca.' },
      rotas: rotasDeLeads(),
      autenticar: autenticadorRemoto(),
      pronto: () => prontidao('leads'),
    }),
};
