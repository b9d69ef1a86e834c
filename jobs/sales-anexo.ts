import { Job } from 'bullmq';
import { apagarCopias, copiarAnexo, varrerAnexos } from '../api/sales/anexos';

/** Adapter: `copiar` copies one attachment to file storage; `apagar` removes copies; `varrer` re-enqueues forgotten ones. */
export async function processarSalesAnexo(job: Job<{ anexo_id?: string; arquivos?: string[] }>) {
  switch (job.name) {
    case 'copiar':
      return copiarAnexo(job.data.anexo_id!, job.attemptsMade + 1);
    case 'apagar':
      return { apagados: await apagarCopias(job.data.arquivos ?? []) };
    case 'varrer':
      return { reenfileirados: await varrerAnexos() };
    default:
      throw new Error(`unknown job ${job.name}`);
  }
}
