import { Job } from 'bullmq';
import { apagarCopiasPendentes, copiarAnexo, varrerAnexos } from '../api/sales/anexos';

/** Adapter: `copiar` copies one attachment to file storage; `apagar` removes copies of deleted ones; `varrer` catches up on both. */
export async function processarSalesAnexo(job: Job<{ anexo_id?: string }>) {
  switch (job.name) {
    case 'copiar':
      return copiarAnexo(job.data.anexo_id!, job.attemptsMade + 1);
    case 'apagar':
      return { apagados: await apagarCopiasPendentes() };
    case 'varrer':
      return { reenfileirados: await varrerAnexos(), apagados: await apagarCopiasPendentes() };
    default:
      throw new Error(`unknown job ${job.name}`);
  }
}
