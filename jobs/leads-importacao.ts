import { Job } from 'bullmq';
import { importarCnpj } from '../api/leads/importacao';
import { progressoNoPainel } from '../queues/fila';
import { DadosDaImportacao } from '../queues/leads-importacao';

/**
 * Adapter: imports the directory named by the job, reporting progress to the dashboard; the
 * worker's abort signal (shutdown) stops it. A job runs once (no retries, none after a stall), and
 * only the job `suite import-cnpj` enqueued: one started before was retried by hand on the
 * dashboard, and one whose `pedido` is not its id is a copy made there; either's month may be
 * older than one imported since, which it would replace.
 */
export async function processarLeadsImportacao(job: Job<DadosDaImportacao>, _token?: string, sinal?: AbortSignal) {
  if (job.attemptsStarted > 1) {
    throw new Error(`este job de importação já rodou (repetido pelo painel?): para importar ${job.data.diretorio} de novo, rode suite import-cnpj`);
  }
  if (job.data.pedido !== job.id) {
    throw new Error(`este job de importação não foi criado por suite import-cnpj (copiado pelo painel?): para importar ${job.data.diretorio}, rode suite import-cnpj`);
  }
  return importarCnpj(job.data.diretorio, progressoNoPainel(job), sinal);
}
