import { Job } from 'bullmq';
import { sincronizarAplicativos } from '../api/hub/aplicativos';
import { tokenDaFila } from '../queues/fila';
import { filaHubAplicativoSync } from '../queues/hub-aplicativo-sync';

/**
 * Adapter: the caller's token when a master listed (kept apart from the job, queues/fila.ts), else,
 * or once that token has lapsed, the hub's own application token.
 */
export async function processarHubAplicativoSync(job: Job<{ doChamador?: boolean }>) {
  const token = job.data.doChamador ? await tokenDaFila.ler(filaHubAplicativoSync) : null;
  return sincronizarAplicativos(token ?? undefined);
}
