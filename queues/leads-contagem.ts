import { DefinicaoDeFila } from './fila';

/**
 * Counts of GET /api/empresas (SPEC 4.2 rule 4), one job per filter set at a time (the jobId is
 * the filter set's key, so concurrent listings share one count). The result is cached apart, so
 * the job is removed as soon as it ends.
 */
export const filaLeadsContagem: DefinicaoDeFila = {
  nome: 'leads-contagem',
  servico: 'leads',
  descricao: 'Contagem de estabelecimentos por conjunto de filtros',
  opcoesDosJobs: { attempts: 1, removeOnComplete: true, removeOnFail: true },
  opcoesDoWorker: { concurrency: 4 },
};
