import { Job } from 'bullmq';
import { purgarHistorico, reenfileirarEsquecidas } from '../api/hub/entregas';
import { config } from '../config';

/** Adapter: `purgar` drops history past retention; `varrer` re-enqueues pending deliveries left without a job. */
export async function processarHubRetencao(job: Job) {
  switch (job.name) {
    case 'purgar':
      return purgarHistorico(config().hub.retencaoDias);
    case 'varrer':
      return { reenfileiradas: await reenfileirarEsquecidas() };
    default:
      throw new Error(`unknown job ${job.name}`);
  }
}
