import { UnrecoverableError } from 'bullmq';
import type { ModuloDeAcesso } from '../api/shared/acesso';

/**
 * Adapter of every `<service>-colaborador-sync` queue: mirrors identity's collaborators with the
 * token of the master whose listing asked for it (kept apart from the job, api/shared/acesso).
 */
export function processadorDeColaboradorSync(acesso: ModuloDeAcesso) {
  return async () => {
    const token = await acesso.tokenDoSync();
    // lapsed (the job waited over two minutes for a worker): the next master listing asks again
    if (!token) throw new UnrecoverableError('no master token: the sync waited too long to start');
    return acesso.sincronizar(token);
  };
}
