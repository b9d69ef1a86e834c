import { Job } from 'bullmq';
import { entregarLote, tentarEntrega } from '../api/hub/entregas';
import { JobDeEntrega } from '../queues/hub-entrega';

/**
 * Adapter: the first attempts of a published batch, or one attempt of one delivery (a thrown
 * FalhaDeTentativa makes BullMQ retry it on the schedule).
 */
export function processarHubEntrega(job: Job<JobDeEntrega>) {
  return 'entregas' in job.data ? entregarLote(job.data.entregas) : tentarEntrega(job.data.id);
}
