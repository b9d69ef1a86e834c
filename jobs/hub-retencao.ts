import { Job } from 'bullmq';
import { purgarHistorico, reenfileirarEsquecidas } from '../api/hub/entregas';
import { config } from '../config';
import { sozinho } from '../lib/database';

/** Adapter: `purgar` drops history past retention; `varrer` re-enqueues pending deliveries left without a job. */
export async function processarHubRetencao(job: Job) {
  switch (job.name) {
    case 'purgar':
      // one purge at a time: a purge lasting past the hour would otherwise take the queue's other
      // slot when the next one comes due, and hold up the minute's sweep again
      return (await sozinho('hub', 'purga', () => purgarHistorico(config().hub.retencaoDias))) ?? { ignorada: 'outra limpeza em andamento' };
    case 'varrer':
      return { reenfileiradas: await reenfileirarEsquecidas() };
    default:
      throw new Error(`unknown job ${job.name}`);
  }
}
