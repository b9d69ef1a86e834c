import { Job } from 'bullmq';
import { purgarHistorico, reenfileirarEsquecidas } from '../api/hub/entregas';
import { config } from '../config';
import { sozinho } from '../lib/database';
import { progressoNoPainel } from '../queues/fila';

/**
 * Adapter: `purgar` drops history past retention (its counts as progress; shutdown stops it between
 * batches); `varrer` re-enqueues pending deliveries left without a job.
 */
export async function processarHubRetencao(job: Job, _token?: string, sinal?: AbortSignal) {
  switch (job.name) {
    case 'purgar': {
      const aoProgredir = progressoNoPainel(job);
      // one purge at a time: a purge lasting past the hour would otherwise take the queue's other
      // slot when the next one comes due, and hold up the minute's sweep again
      const purga = () => purgarHistorico(config().hub.retencaoDias, { aoProgredir, sinal });
      return (await sozinho('hub', 'purga', purga)) ?? { ignorada: 'outra limpeza em andamento' };
    }
    case 'varrer':
      return { reenfileiradas: await reenfileirarEsquecidas() };
    default:
      throw new Error(`unknown job ${job.name}`);
  }
}
