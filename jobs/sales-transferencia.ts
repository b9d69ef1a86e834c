import { Job } from 'bullmq';
import { transferirSemResposta } from '../api/sales/transferencia';
import { progressoNoPainel } from '../queues/fila';

/**
 * Adapter: hands the conversations the robot left without an answer to the team, its progress on
 * the dashboard; a shutdown stops it between two calls to the chat platform.
 */
export function processarSalesTransferencia(job: Job, _token?: string, sinal?: AbortSignal) {
  return transferirSemResposta(new Date(), progressoNoPainel(job), sinal);
}
