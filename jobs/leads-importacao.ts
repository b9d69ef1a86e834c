import { Job } from 'bullmq';
import { importarCnpj } from '../api/leads/importacao';

/** Adapter: imports the directory named by the job, reporting progress to the dashboard. */
export function processarLeadsImportacao(job: Job<{ diretorio: string }>) {
  return importarCnpj(job.data.diretorio, (p) => void job.updateProgress({ ...p }).catch(() => undefined));
}
