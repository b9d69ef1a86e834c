import { Colaborador, PerfilAcesso } from '../../models/hub';
import { filaHubColaboradorSync } from '../../queues/hub-colaborador-sync';
import { criarModuloDeAcesso } from '../shared/acesso';

/** Areas of the hub (SPEC 5.2): subscriptions, monitoring, applications, contracts (event types), collaborators. */
export const acessoHub = criarModuloDeAcesso({
  areas: ['assinaturas', 'monitoramento', 'aplicativos', 'contratos', 'colaboradores'],
  Colaborador,
  PerfilAcesso,
  filaDeSync: filaHubColaboradorSync,
});
