import { DefinicaoDeFila } from './fila';

/**
 * Import of the Receita's CNPJ files (DESIGN §6), one at a time. A job whose worker died is not run
 * again by another (`maxStalledCount: 0`): it could be an older month than one imported since; it
 * fails, and the operator runs the import again. Recent runs stay visible in the dashboard.
 */
export const filaLeadsImportacao: DefinicaoDeFila = {
  nome: 'leads-importacao',
  servico: 'leads',
  descricao: 'Importação dos arquivos CNPJ da Receita Federal',
  opcoesDosJobs: { attempts: 1, removeOnComplete: { count: 20 }, removeOnFail: { count: 20 } },
  opcoesDoWorker: { concurrency: 1, maxStalledCount: 0 },
};
