import { Job, UnrecoverableError } from 'bullmq';
import type { ModuloDeAcesso } from '../api/shared/acesso';
import { devolverAFila, progressoEspacado } from '../queues/fila';

/**
 * Adapter of every `<service>-colaborador-sync` queue: mirrors identity's collaborators with the
 * token of the master whose listing asked for it (kept apart from the job, queues/fila.ts), or of
 * an earlier one when identity refuses it.
 */
export function processadorDeColaboradorSync(acesso: ModuloDeAcesso) {
  return async (job: Job, token?: string, sinal?: AbortSignal) => {
    const feito = await acesso.sincronizarComTokenDoSync(progressoEspacado(job), sinal);
    // lapsed (the job waited over two minutes for a worker) or refused: the next master listing asks again
    if (!feito) throw new UnrecoverableError('no master token identity takes: lapsed or refused');
    // a shutdown ended its wait for another run: back to the queue, for another worker
    if (feito.resultado === null) return devolverAFila(job, token);
    return feito.resultado;
  };
}
