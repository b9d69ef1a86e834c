import { Colaborador, PerfilAcesso } from '../../models/hub';
import { filaHubColaboradorSync } from '../../queues/hub-colaborador-sync';
import { criarModuloDeAcesso } from '../shared/acesso';

/**
 * Areas of the hub (SPEC 5.2): subscriptions, monitoring, applications, contracts (event types),
 * collaborators. Reading subscriptions, deliveries, applications and contracts needs `ler` itself
 * (SPEC 4.3, 4.4): another action there does not read, nor lets one grant `ler`.
 */
export const acessoHub = criarModuloDeAcesso({
  areas: ['assinaturas', 'monitoramento', 'aplicativos', 'contratos', 'colaboradores'],
  lidasPorQualquerAcao: [],
  Colaborador,
  PerfilAcesso,
  filaDeSync: filaHubColaboradorSync,
});
