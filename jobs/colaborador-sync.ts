import { Job, UnrecoverableError } from 'bullmq';
import type { ModuloDeAcesso } from '../api/shared/acesso';

/** Adapter of every `<service>-colaborador-sync` queue: mirrors identity's collaborators with the master's token. */
export function processadorDeColaboradorSync(acesso: ModuloDeAcesso) {
  return async (job: Job<{ token?: string }>) => {
    if (!job.data.token) throw new UnrecoverableError('job without a token');
    return acesso.sincronizar(job.data.token);
  };
}
