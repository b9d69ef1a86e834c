import { Job } from 'bullmq';
import { importarCnpj } from '../api/leads/importacao';
import { progressoNoPainel } from '../queues/fila';

/**
 * Adapter: imports the directory named by the job, reporting progress to the dashboard; the
 * worker's abort signal (shutdown) stops it.
 */
export function processarLeadsImportacao(job: Job<{ diretorio: string }>, _token?: string, sinal?: AbortSignal) {
  return importarCnpj(job.data.diretorio, progressoNoPainel(job), sinal);
}
