import { DelayedError, Job } from 'bullmq';
import { entregarLote, tentarEntrega } from '../api/hub/entregas';
import { JobDeEntrega } from '../queues/hub-entrega';

/**
 * Adapter: the first attempts of a published batch, or one attempt of one delivery (a thrown
 * FalhaDeTentativa makes BullMQ retry it on the schedule). Shutdown stops both before an attempt
 * starts: the job goes back to the queue for a second later, without counting as a failure.
 */
export async function processarHubEntrega(job: Job<JobDeEntrega>, token?: string, sinal?: AbortSignal) {
  const r = 'entregas' in job.data ? await entregarLote(job.data.entregas, sinal) : await tentarEntrega(job.data.id, sinal);
  if (r === null || (typeof r === 'object' && r.adiadas > 0)) {
    await job.moveToDelayed(Date.now() + 1000, token);
    throw new DelayedError();
  }
  return r;
}
