import { Colaborador, PerfilAcesso } from '../../models/sales';
import { filaSalesColaboradorSync } from '../../queues/sales-colaborador-sync';
import { criarModuloDeAcesso } from '../shared/acesso';

/** Areas of sales (SPEC 4.6): conversations, customers and robots (`clientes`) and the collaborators. */
export const acessoSales = criarModuloDeAcesso({
  areas: ['clientes', 'colaboradores'],
  lidasPorQualquerAcao: ['clientes'],
  Colaborador,
  PerfilAcesso,
  filaDeSync: filaSalesColaboradorSync,
});
