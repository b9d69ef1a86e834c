import { Job } from 'bullmq';
import { enfileirarEntregas } from '../api/hub/entregas';

/** Adapter: the delivery jobs of one published batch. */
export function processarHubDistribuicao(job: Job<{ entregas: string[] }>) {
  return enfileirarEntregas(job.data.entregas);
}
