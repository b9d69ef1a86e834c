import { DefinicaoDeFila } from './fila';

/** Repeatable purge of delivery history older than HUB_RETENCAO_DIAS, and of deliveries left without a job. */
export const filaHubRetencao: DefinicaoDeFila = {
  nome: 'hub-retencao',
  servico: 'hub',
  descricao: 'Limpeza do histórico de entregas e reenfileiramento de entregas esquecidas',
  opcoesDosJobs: { attempts: 3, backoff: { type: 'exponential', delay: 10_000 }, removeOnComplete: { count: 100 }, removeOnFail: { count: 100 } },
  // two: a long purge (the first one over a large history takes thousands of batches) must not
  // hold up the minute's sweep; a purge due while another runs ends at once (a named lock), so
  // it never takes the sweep's slot for long
  opcoesDoWorker: { concurrency: 2 },
};

export const INTERVALO_DA_RETENCAO_MS = 60 * 60_000;
export const INTERVALO_DA_VARREDURA_DE_ENTREGAS_MS = 60_000;
