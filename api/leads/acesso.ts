import { Colaborador, PerfilAcesso } from '../../models/leads';
import { filaLeadsColaboradorSync } from '../../queues/leads-colaborador-sync';
import { criarModuloDeAcesso } from '../shared/acesso';

/** Areas of leads (SPEC 4.2): the establishment listing (`empresas`) and the collaborators. */
export const acessoLeads = criarModuloDeAcesso({
  areas: ['empresas', 'colaboradores'],
  lidasPorQualquerAcao: ['empresas'],
  Colaborador,
  PerfilAcesso,
  filaDeSync: filaLeadsColaboradorSync,
});
