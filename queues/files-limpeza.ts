import { DefinicaoDeFila } from './fila';

/**
 * File storage's tidying (DESIGN §7): a repeatable `varrer` removes the owed bytes that are due:
 * a deleted file's whose removal did not finish after the deletion's commit (a crash, the storage
 * out of reach), and an upload's that never got its row, once it can no longer finish. Each
 * removal holds its line, so runs on several processes act once on each.
 */
export const filaFilesLimpeza: DefinicaoDeFila = {
  nome: 'files-limpeza',
  servico: 'files',
  descricao: 'Remoção dos bytes que ficou por fazer: de arquivos apagados e de envios sem registro',
  opcoesDosJobs: { attempts: 1, removeOnComplete: { count: 100 }, removeOnFail: { count: 100 } },
  opcoesDoWorker: { concurrency: 1 },
};

export const INTERVALO_DA_LIMPEZA_DE_ARQUIVOS_MS = 5 * 60_000;
