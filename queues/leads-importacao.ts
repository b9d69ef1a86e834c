import { randomUUID } from 'node:crypto';
import { config } from '../config';
import { DefinicaoDeFila, fila } from './fila';

/**
 * Import of the Receita's CNPJ files (DESIGN §6), one at a time. A job whose worker died is not run
 * again by another (`maxStalledCount: 0`): it could be an older month than one imported since; it
 * fails, and the operator runs the import again. Recent runs stay visible in the dashboard.
 * A worker's death is seen once its job's lock lapses (LEADS_IMPORTACAO_LOCK_MS, renewed while the
 * job runs) by two stalled checks, one marking the job and the next failing it, run as often as
 * the lock lasts (30 s at most).
 */
export const filaLeadsImportacao: DefinicaoDeFila = {
  nome: 'leads-importacao',
  servico: 'leads',
  descricao: 'Importação dos arquivos CNPJ da Receita Federal',
  opcoesDosJobs: { attempts: 1, removeOnComplete: { count: 20 }, removeOnFail: { count: 20 } },
  get opcoesDoWorker() {
    const lockDuration = config().leads.importacaoLockMs;
    return { concurrency: 1, maxStalledCount: 0, lockDuration, stalledInterval: Math.min(lockDuration, 30_000) };
  },
};

/** What an import job carries: its directory, and the id it was enqueued under (`pedido`). */
export interface DadosDaImportacao {
  diretorio: string;
  pedido: string;
}

/**
 * Enqueues the import of `diretorio` under `id`, which the job also carries: a copy of the job
 * (the dashboard's "duplicate" or "add") gets another id, and its processor refuses it, since the
 * month it names may be older than one imported since.
 */
export function enfileirarImportacao(diretorio: string, id: string = randomUUID()) {
  const dados: DadosDaImportacao = { diretorio, pedido: id };
  return fila(filaLeadsImportacao).add('importar', dados, { jobId: id });
}
