import { Job, UnrecoverableError } from 'bullmq';
import type { ModuloDeAcesso } from '../api/shared/acesso';
import type { ProgressoDoEspelho } from '../api/shared/acesso/colaboradores';
import { progressoEspacado, progressoNoPainel } from '../queues/fila';

/**
 * Adapter of every `<service>-colaborador-sync` queue: mirrors identity's collaborators with the
 * token of the master whose listing asked for it (kept apart from the job, queues/fila.ts), or of
 * an earlier one when identity refuses it.
 */
export function processadorDeColaboradorSync(acesso: ModuloDeAcesso) {
  return async (job: Job) => {
    const feito = await acesso.sincronizarComTokenDoSync(progressoDoEspelho(job));
    // lapsed (the job waited over two minutes for a worker) or refused: the next master listing asks again
    if (!feito) throw new UnrecoverableError('no master token identity takes: lapsed or refused');
    return feito.resultado;
  };
}

/**
 * A sync's reports on its job: the last one (everyone looked at) always, so a finished job shows
 * its counts; those before it once a second at most (a short sync writes only its last).
 */
export function progressoDoEspelho(job: Job): (p: ProgressoDoEspelho) => void {
  const espacado = progressoEspacado(job);
  const sempre = progressoNoPainel(job);
  return (p) => (p.vistas === p.de ? sempre(p) : espacado(p));
}
