import { config } from '../config';
import { DefinicaoDeFila } from './fila';

/** SPEC 4.6 rule 7: the first copy and up to 5 more. */
export const TENTATIVAS_DE_COPIA = 6;

/** SPEC 4.6 rule 7: 30 minutes between attempts, also between the runs of a copy put off on our side. */
export const esperaEntreTentativas = () => config().sales.anexoRetryMs;

/**
 * Message attachments of the sales service (SPEC 4.6 rule 7, §6.9): `copiar` copies one from the
 * chat platform to file storage right after the webhook (jobId = attachment id), retried every
 * SALES_ANEXO_RETRY_MS (30 minutes) up to 5 more times; `apagar` removes the copies of a deleted
 * conversation; a repeatable `varrer` enqueues copies that never reached the queue. A copy put off
 * on our side writes why in its job's log, of which the last 48 lines (a day of runs) are kept.
 */
export const filaSalesAnexo: DefinicaoDeFila = {
  nome: 'sales-anexo',
  servico: 'sales',
  descricao: 'Cópia dos anexos das mensagens para o armazenamento de arquivos',
  opcoesDosJobs: {
    attempts: TENTATIVAS_DE_COPIA,
    backoff: { type: 'espaco_fixo' },
    removeOnComplete: { age: 24 * 3600, count: 1000 },
    // a week of failures, at most the last 5,000 (each with its stacks and log lines)
    removeOnFail: { age: 7 * 24 * 3600, count: 5000 },
    keepLogs: 48,
  },
  opcoesDoWorker: {
    concurrency: 4,
    settings: { backoffStrategy: esperaEntreTentativas },
  },
};

export const INTERVALO_DA_VARREDURA_DE_ANEXOS_MS = 10 * 60_000;
