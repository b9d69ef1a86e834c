import { Job } from 'bullmq';
import { apagarCopiasPendentes, copiarAnexo, varrerAnexos } from '../api/sales/anexos';
import { devolverAFila, progressoNoPainel } from '../queues/fila';

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
      return r === 'interrompido' ? devolverAFila(job, token) : r;
    }
    case 'apagar':
      return { apagados: await apagarCopiasPendentes(aoProgredir) };
    case 'varrer':
      return { reenfileirados: await varrerAnexos(), apagados: await apagarCopiasPendentes(aoProgredir) };
    default:
      throw new Error(`unknown job ${job.name}`);
  }
}
