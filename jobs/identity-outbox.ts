import { Job } from 'bullmq';
import { enviar, varrer } from '../api/identity/outbox';

/** Adapter: `enviar` publishes one stored event at the hub; `varrer` re-enqueues forgotten ones. */
export async function processarIdentityOutbox(job: Job<{ id?: string }>) {
  switch (job.name) {
    case 'enviar':
      return enviar(job.data.id!);
    case 'varrer':
      return { reenfileirados: await varrer() };
    default:
      throw new Error(`unknown job ${job.name}`);
  }
}
