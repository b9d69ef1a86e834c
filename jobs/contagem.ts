import { Job } from 'bullmq';
import { progressoNoPainel } from '../queues/fila';

type Compactar = (porVez?: number, aoProgredir?: (p: { consolidados: number }) => void, sinal?: AbortSignal) => Promise<number>;

/**
 * Adapter of every `<service>-contagem` queue: folds the service's count deltas into the base counts,
 * the count so far on the dashboard; a shutdown stops it between two transactions.
 */
export function processadorDeContagem(compactar: Compactar) {
  return async (job: Job, _token?: string, sinal?: AbortSignal) => ({ consolidados: await compactar(undefined, progressoNoPainel(job), sinal) });
}
