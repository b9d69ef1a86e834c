import { Job } from 'bullmq';
import { sincronizarAplicativos } from '../api/hub/aplicativos';

/** Adapter: the caller's token when a master listed, else the hub's own application token. */
export function processarHubAplicativoSync(job: Job<{ token?: string }>) {
  return sincronizarAplicativos(job.data.token);
}
