import { Job } from 'bullmq';
import { sincronizarAplicativos } from '../api/hub/aplicativos';
import { comTokenDaFila } from '../queues/fila';
import { filaHubAplicativoSync } from '../queues/hub-aplicativo-sync';

/**
 * Adapter: the caller's token when a master listed (kept apart from the job, queues/fila.ts), else,
 * or once no master's token is left (lapsed, or refused by identity: its holder is no master any
 * more), the hub's own application token. A shutdown gives up its wait for another sync.
 */
export async function processarHubAplicativoSync(job: Job<{ doChamador?: boolean }>, _token?: string, sinal?: AbortSignal) {
  const doMaster = job.data.doChamador ? await comTokenDaFila(filaHubAplicativoSync, (token) => sincronizarAplicativos(token, sinal)) : null;
  return doMaster ? doMaster.resultado : sincronizarAplicativos(undefined, sinal);
}
