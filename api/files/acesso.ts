import { Colaborador, PerfilAcesso } from '../../models/files';
import { filaFilesColaboradorSync } from '../../queues/files-colaborador-sync';
import { criarModuloDeAcesso } from '../shared/acesso';

/**
 * Areas of file storage: the collaborators alone. Its files belong to applications (their tokens
 * only), so no profile opens them to a person; the module is mounted as DESIGN §3 has every
 * service with protected routes mount it.
 */
export const acessoFiles = criarModuloDeAcesso({
  areas: ['colaboradores'],
  lidasPorQualquerAcao: [],
  Colaborador,
  PerfilAcesso,
  filaDeSync: filaFilesColaboradorSync,
});
