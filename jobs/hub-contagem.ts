import { Job } from 'bullmq';
import { compactarFilaDeErro } from '../api/hub/contagem';
import { progressoNoPainel } from '../queues/fila';

/** Adapter: folds the error-queue count deltas, the count so far on the dashboard; a shutdown stops it between two transactions. */
export async function processarHubContagem(job: Job, _token?: string, sinal?: AbortSignal) {
  return { consolidados: await compactarFilaDeErro(undefined, progressoNoPainel(job), sinal) };
}
