import { DefinicaoDeFila } from './fila';

/**
 * File storage's tidying (DESIGN §7): a repeatable `varrer` removes the bytes of deleted files
 * whose removal did not finish after the deletion's commit (a crash, the storage out of reach).
 * Removing twice is harmless, so runs need no lock between processes.
 */
export const filaFilesLimpeza: DefinicaoDeFila = {
  nome: 'files-limpeza',
  servico: 'files',
  descricao: 'Remoção dos bytes de arquivos apagados que ficou por fazer',
  opcoesDosJobs: { attempts: 1, removeOnComplete: { count: 100 }, removeOnFail: { count: 100 } },
  opcoesDoWorker: { concurrency: 1 },
};

export const INTERVALO_DA_LIMPEZA_DE_ARQUIVOS_MS = 5 * 60_000;
