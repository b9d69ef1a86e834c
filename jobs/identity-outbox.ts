import { Job } from 'bullmq';
import { enviar, purgarEventosEnviados, varrer } from '../api/identity/outbox';
import { config } from '../config';
import { progressoNoPainel } from '../queues/fila';

/**
 * Adapter: `enviar` publishes one stored event at the hub; `varrer` re-enqueues forgotten ones;
 * `purgar` deletes the events sent before the retention period (its count as progress; shutdown
 * stops it between batches).
 */
export async function processarIdentityOutbox(job: Job<{ id?: string }>, _token?: string, sinal?: AbortSignal) {
  switch (job.name) {
    case 'enviar':
      return enviar(job.data.id!);
    case 'varrer':
      return { reenfileirados: await varrer() };
    case 'purgar':
      return purgarEventosEnviados(config().identity.outboxRetencaoDias, { aoProgredir: progressoNoPainel(job), sinal });
    default:
      throw new Error(`unknown job ${job.name}`);
  }
}
