import { Job } from 'bullmq';
import { contarEGuardar, PedidoDeContagem } from '../api/leads/contagem';

/** Adapter: counts one filter set under the database's time limit and caches the result. */
export function processarLeadsContagem(job: Job<PedidoDeContagem>) {
  return contarEGuardar(job.data);
}
