import { Job } from 'bullmq';
import { tentarEntrega } from '../api/hub/entregas';

/** Adapter: one attempt of the delivery; a thrown FalhaDeTentativa makes BullMQ retry on the schedule. */
export function processarHubEntrega(job: Job<{ id: string }>) {
  return tentarEntrega(job.data.id);
}
