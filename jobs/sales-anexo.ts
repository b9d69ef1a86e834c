import { Job } from 'bullmq';
import { apagarCopiasPendentes, copiarAnexo, varrerAnexos } from '../api/sales/anexos';
import { progressoNoPainel } from '../queues/fila';

/**
 * Adapter: `copiar` copies one attachment to file storage; `apagar` removes copies of deleted ones;
 * `varrer` catches up on both. Progress (bytes copied, copies removed) shows in the dashboard.
 */
export async function processarSalesAnexo(job: Job<{ anexo_id?: string }>) {
  const aoProgredir = progressoNoPainel(job);
  switch (job.name) {
    case 'copiar':
      return copiarAnexo(job.data.anexo_id!, aoProgredir);
    case 'apagar':
      return { apagados: await apagarCopiasPendentes(aoProgredir) };
    case 'varrer':
      return { reenfileirados: await varrerAnexos(), apagados: await apagarCopiasPendentes(aoProgredir) };
    default:
      throw new Error(`unknown job ${job.name}`);
  }
}
