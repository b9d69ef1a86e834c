import { Job, UnrecoverableError } from 'bullmq';
import { acessoIntranet } from '../api/intranet/acesso';

/** Adapter: mirrors identity's collaborators with the master's token carried by the job. */
export async function processarIntranetColaboradorSync(job: Job<{ token?: string }>) {
  if (!job.data.token) throw new UnrecoverableError('job without a token');
  return acessoIntranet.sincronizar(job.data.token);
}
