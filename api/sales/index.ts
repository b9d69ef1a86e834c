import { MIGRACOES_SALES, MODELOS_SALES } from '../../models/sales';
import { criarApp } from '../shared/app';
import { autenticadorRemoto } from '../shared/auth';
import { prontidao, Servico } from '../shared/servico';
import { acessoSales } from './acesso';
import { prepararBuscaDeTexto } from './busca-de-texto';
import { carregarChaveDeCifra } from './cifra';
import { rotasDeSales } from './routes';

export const sales: Servico = {
  nome: 'sales',
  modelos: MODELOS_SALES,
  migracoes: MIGRACOES_SALES,
  preparar: async () => {
    await carregarChaveDeCifra();
    await acessoSales.preparar();
    await prepararBuscaDeTexto();
  },
  app: () =>
    criarApp({
      nome: 'sales',
      info: {
        title: 'Sales',
        version: '0.1.0',
        description: 'Conversas da plataforma de atendimento e do gateway de mensagens, com anexos copiados para o armazenamento.',
      },
      rotas: rotasDeSales(),
      autenticar: autenticadorRemoto(),
      pronto: () => prontidao('sales'),
      // the chat platform's HMAC covers the body's exact bytes
      guardarCorpoBruto: true,
    }),
};
