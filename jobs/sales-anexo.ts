import { Job, UnrecoverableError } from 'bullmq';
import { apagarCopiasPendentes, copiarAnexo, esperaAntesDaCopia, varrerAnexos } from '../api/sales/anexos';
import { devolverAFila, progressoNoPainel } from '../queues/fila';
import { esperaEntreTentativas } from '../queues/sales-anexo';

/**
 * Adapter: `copiar` copies one attachment to file storage; `apagar` removes copies of deleted ones;
 * `varrer` catches up on both. Progress (bytes copied, copies removed) shows in the dashboard.
 * Shutdown (the worker's abort signal) stops a copy under way, and its job goes back to the queue
 * without spending one of its attempts, as does a copy removed as it was recorded (`de_novo`); so
 * does a copy put off on our side, until its next run is due, writing why in the job's log (the
 * dashboard shows it), and one run again sooner than the retry interval after its last attempt
 * (after a crash, or added by the sweep), until it has passed. One too large for file storage
 * fails without the job's retries. The removal of copies stops between two at shutdown.
 */
export async function processarSalesAnexo(job: Job<{ anexo_id?: string }>, token?: string, sinal?: AbortSignal) {
  const aoProgredir = progressoNoPainel(job);
  switch (job.name) {
    case 'copiar': {
      const espera = await esperaAntesDaCopia(job.data.anexo_id!);
      if (espera > 0) {
        await job.log(`cópia aguarda ${espera} ms: o intervalo entre tentativas ainda não passou desde a última`);
        return devolverAFila(job, token, Date.now() + espera);
      }
      const r = await copiarAnexo(job.data.anexo_id!, aoProgredir, sinal);
      switch (r.estado) {
        case 'interrompido':
          return devolverAFila(job, token);
        case 'de_novo':
          await job.log('a cópia foi removida enquanto era registrada: o anexo é copiado de novo');
          return devolverAFila(job, token);
        case 'adiada':
          await job.log(`cópia adiada, sem gastar tentativa: ${r.motivo}`);
          return devolverAFila(job, token, Date.now() + esperaEntreTentativas());
        case 'grande_demais':
          // failed for good, its reason on the dashboard: a retry would download it for nothing
          throw new UnrecoverableError(r.motivo);
        default:
          return r.estado;
      }
    }
    case 'apagar':
      return { apagados: await apagarCopiasPendentes(aoProgredir, sinal) };
    case 'varrer':
      return { reenfileirados: await varrerAnexos(), apagados: await apagarCopiasPendentes(aoProgredir, sinal) };
    default:
      throw new Error(`unknown job ${job.name}`);
  }
}
