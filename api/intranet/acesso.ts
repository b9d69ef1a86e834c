import { Colaborador, PerfilAcesso } from '../../models/intranet';
import { filaIntranetColaboradorSync } from '../../queues/intranet-colaborador-sync';
import { criarModuloDeAcesso } from '../shared/acesso';

/** The intranet's collaborators and access profiles (SPEC 4.5), on its own tables. */
export const acessoIntranet = criarModuloDeAcesso({
  areas: ['colaboradores'],
  lidasPorQualquerAcao: [],
  Colaborador,
  PerfilAcesso,
  filaDeSync: filaIntranetColaboradorSync,
});
