import { Job } from 'bullmq';
import { transferirSemResposta } from '../api/sales/transferencia';
import { progressoNoPainel } from '../queues/fila';

/** Adapter: hands the conversations the robot left without an answer to the team, its progress on the dashboard. */
export function processarSalesTransferencia(job: Job) {
  return transferirSemResposta(new Date(), progressoNoPainel(job));
}
