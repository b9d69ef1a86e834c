import { Job } from 'bullmq';
import { sincronizarAplicativos } from '../api/hub/aplicativos';
import { comTokenDaFila, devolverAFila } from '../queues/fila';
import { filaHubAplicativoSync } from '../queues/hub-aplicativo-sync';

/**
 * Adapter: the caller's token when a master listed (kept apart from the job, queues/fila.ts), else,
 * or once no master's token is left (lapsed, or refused by identity: its holder is no master any
 * more), the hub's own application token. A shutdown ends its wait for another sync and hands the
 * job back to the queue, as the collaborator syncs do.
 */
export async function processarHubAplicativoSync(job: Job<{ doChamador?: boolean }>, token?: string, sinal?: AbortSignal) {
  const doMaster = job.data.doChamador ? await comTokenDaFila(filaHubAplicativoSync, (t) => sincronizarAplicativos(t, sinal)) : null;
  const r = doMaster ? doMaster.resultado : await sincronizarAplicativos(undefined, sinal);
  // a shutdown ended its wait for another sync: back to the queue, for another worker
  return r === null ? devolverAFila(job, token) : r;
}
