import { DefinicaoDeFila } from './fila';

/**
 * A repeatable job that folds the file count deltas into the base counts (api/files/contagem.ts),
 * so each application's `total` stays one small read. One at a time.
 */
export const filaFilesContagem: DefinicaoDeFila = {
  nome: 'files-contagem',
  servico: 'files',
  descricao: 'Consolidação da contagem de arquivos por aplicativo',
  opcoesDosJobs: { attempts: 1, removeOnComplete: { count: 100 }, removeOnFail: { count: 100 } },
  opcoesDoWorker: { concurrency: 1 },
};

export const INTERVALO_DA_CONSOLIDACAO_DOS_ARQUIVOS_MS = 10_000;
