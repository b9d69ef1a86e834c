import { DelayedError, Job } from 'bullmq';
import { apagarCopiasPendentes, copiarAnexo, varrerAnexos } from '../api/sales/anexos';
import { progressoNoPainel } from '../queues/fila';

/** A copy stopped by shutdown is taken up again this soon (by another worker, as a rule). */
const RETOMADA_MS = 1000;

/**
 * Adapter: `copiar` copies one attachment to file storage; `apagar` removes copies of deleted ones;
 * `varrer` catches up on both. Progress (bytes copied, copies removed) shows in the dashboard.
 * Shutdown (the worker's abort signal) stops a copy under way, and its job goes back to the queue
 * without spending one of its attempts.
 */
export async function processarSalesAnexo(job: Job<{ anexo_id?: string }>, token?: string, sinal?: AbortSignal) {
  const aoProgredir = progressoNoPainel(job);
  switch (job.name) {
    case 'copiar': {
      const r = await copiarAnexo(job.data.anexo_id!, aoProgredir, sinal);
      return r === 'interrompido' ? devolver(job, token) : r;
    }
    case 'apagar':
      return { apagados: await apagarCopiasPendentes(aoProgredir) };
    case 'varrer':
      return { reenfileirados: await varrerAnexos(), apagados: await apagarCopiasPendentes(aoProgredir) };
    default:
      throw new Error(`unknown job ${job.name}`);
  }
}

/** Back to the queue without counting as a failed attempt (BullMQ's manual delay). */
async function devolver(job: Job, token?: string): Promise<never> {
  await job.moveToDelayed(Date.now() + RETOMADA_MS, token);
  throw new DelayedError();
}
