import { Job } from 'bullmq';
import { varrerBytesAApagar } from '../api/files/arquivos';
import { progressoNoPainel } from '../queues/fila';

/**
 * Adapter: removes the owed bytes that are due (a deletion's, an upload's that never got its row),
 * the count so far on the dashboard; a shutdown stops it between two removals.
 */
export async function processarFilesLimpeza(job: Job, _token?: string, sinal?: AbortSignal) {
  return { removidos: await varrerBytesAApagar(undefined, progressoNoPainel(job), sinal) };
}
