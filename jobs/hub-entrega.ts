import { Job, Worker } from 'bullmq';
import { entregarLote, tentarEntrega } from '../api/hub/entregas';
import { devolverAFila, progressoEspacado } from '../queues/fila';

/**
 * Adapter: `entregar-lote`, the first attempts of a published batch (its progress on the dashboard
 * once it lasts); `entregar`, one attempt of one delivery (a thrown FalhaDeTentativa makes BullMQ
 * retry it on the schedule). Shutdown stops both before an attempt starts, and the job goes back to
 * the queue; so does a job run before its delivery's next attempt is due, until then.
 */
export async function processarHubEntrega(job: Job, token?: string, sinal?: AbortSignal) {
  switch (job.name) {
    case 'entregar-lote': {
      // most batches end within a second: only one held up by slow subscribers writes its progress
      const r = await entregarLote(job.data.entregas, sinal, progressoEspacado(job), (entregas) => job.updateData({ ...job.data, entregas }));
      return r.adiadas ? devolverAFila(job, token) : r;
    }
    case 'entregar': {
      const r = await tentarEntrega(job.data.id, sinal);
      if (r === null) return devolverAFila(job, token);
      // run before the delivery's next attempt is due: back to the queue until then
      if (typeof r === 'object') return devolverAFila(job, token, r.ate);
      return r;
    }
    default:
      throw new Error(`unknown job ${job.name}`);
  }
}

/**
 * Set up as each delivery worker starts: a job whose lock it could not renew (its event loop held
 * up, Redis out of its reach) may already be running on another worker, so it starts no more
 * attempts of it, as at shutdown; only those already in flight can go out twice.
 */
export function prepararWorkerDeEntregas(worker: Worker): void {
  worker.on('lockRenewalFailed', (ids) => ids.forEach((id) => worker.cancelJob(id, 'trava do job perdida')));
}
