import { DefinicaoDeFila } from './fila';

/**
 * The hand-over trigger (issue: sales): a repeatable job that gives the team the conversations
 * whose contact waited too long for the robot. One run at a time in the whole queue (a global
 * concurrency of 1, set where it is scheduled), so a conversation is handed over once.
 */
export const filaSalesTransferencia: DefinicaoDeFila = {
  nome: 'sales-transferencia',
  servico: 'sales',
  descricao: 'Transferência para a equipe das conversas sem resposta do robô',
  opcoesDosJobs: { attempts: 1, removeOnComplete: { count: 100 }, removeOnFail: { count: 100 } },
  opcoesDoWorker: { concurrency: 1 },
};
