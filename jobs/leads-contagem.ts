import { Job } from 'bullmq';
import { contarEmpresas } from '../api/leads/contagem';
import { FiltrosDeEmpresas } from '../api/leads/filtros';

/** Adapter: counts one filter set under the database's time limit. */
export function processarLeadsContagem(job: Job<{ filtros: FiltrosDeEmpresas }>) {
  return contarEmpresas(job.data.filtros);
}
