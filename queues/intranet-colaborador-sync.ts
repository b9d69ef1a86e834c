import { DefinicaoDeFila } from './fila';

/**
 * Registration of identity collaborators when a master lists them (SPEC 4.5 rule 2). One job at a
 * time (fixed jobId): concurrent listings share it. The job carries the master's token, so it is
 * removed as soon as it ends, whatever the outcome.
 */
export const filaIntranetColaboradorSync: DefinicaoDeFila = {
  nome: 'intranet-colaborador-sync',
  servico: 'intranet',
  descricao: 'Cadastro dos colaboradores do identity na listagem de um master',
  opcoesDosJobs: { attempts: 1, removeOnComplete: true, removeOnFail: true },
  opcoesDoWorker: { concurrency: 1 },
};
