import { DefinicaoDeFila } from './fila';

/**
 * Import of the Receita's CNPJ files (DESIGN §6), one at a time. A worker that dies mid-import
 * hands the job back (stalled) and the next run starts over on fresh copies of the tables, so
 * running it twice is harmless. Recent runs stay visible in the dashboard.
 */
export const filaLeadsImportacao: DefinicaoDeFila = {
  nome: 'leads-importacao',
  servico: 'leads',
  descricao: 'Importação dos arquivos CNPJ da Receita Federal',
  opcoesDosJobs: { attempts: 1, removeOnComplete: { count: 20 }, removeOnFail: { count: 20 } },
  opcoesDoWorker: { concurrency: 1 },
};
