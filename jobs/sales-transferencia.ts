import { transferirSemResposta } from '../api/sales/transferencia';

/** Adapter: hands the conversations the robot left without an answer to the team. */
export function processarSalesTransferencia() {
  return transferirSemResposta();
}
