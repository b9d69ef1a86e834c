import { Job } from 'bullmq';
import { compactarContagemDeArquivos } from '../api/files/contagem';
import { progressoNoPainel } from '../queues/fila';

/** Adapter: folds the file count deltas, the count so far on the dashboard; a shutdown stops it between two transactions. */
export async function processarFilesContagem(job: Job, _token?: string, sinal?: AbortSignal) {
  return { consolidados: await compactarContagemDeArquivos(undefined, progressoNoPainel(job), sinal) };
}
