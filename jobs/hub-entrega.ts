import { Job } from 'bullmq';
import { entregarLote, tentarEntrega } from '../api/hub/entregas';
import { JobDeEntrega } from '../queues/hub-entrega';

/**
 * Adapter: the first attempts of a published batch (shutdown stops it between attempts), or one
 * attempt of one delivery (a thrown FalhaDeTentativa makes BullMQ retry it on the schedule).
 */
export function processarHubEntrega(job: Job<JobDeEntrega>, _token?: string, sinal?: AbortSignal) {
  return 'entregas' in job.data ? entregarLote(job.data.entregas, sinal) : tentarEntrega(job.data.id);
}
