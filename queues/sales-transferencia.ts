import { DefinicaoDeFila } from './fila';

/**
 * The hand-over trigger (issue: sales): a repeatable job that gives the team the conversations
 * whose contact waited too long for the robot. One run at a time in the whole queue, across every
 * worker process: two would call the chat platform twice for a conversation.
 */
export const filaSalesTransferencia: DefinicaoDeFila = {
  nome: 'sales-transferencia',
  servico: 'sales',
  descricao: 'Transferência para a equipe das conversas sem resposta do robô',
  opcoesDosJobs: { attempts: 1, removeOnComplete: { count: 100 }, removeOnFail: { count: 100 } },
  opcoesDoWorker: { concurrency: 1 },
  concorrenciaGlobal: 1,
};
