import { Job } from 'bullmq';
import { compactarContagem } from '../api/sales/contagem';
import { progressoNoPainel } from '../queues/fila';

/**
 * Adapter: folds the conversation count deltas into the base counts, the count so far on the
 * dashboard; a shutdown stops it between two transactions.
 */
export async function processarSalesContagem(job: Job, _token?: string, sinal?: AbortSignal) {
  return { consolidados: await compactarContagem(undefined, progressoNoPainel(job), sinal) };
}
