import { NomeDoServico } from '../config/services';
import { DefinicaoDeFila } from './fila';

/**
 * A service's repeatable job that folds its count deltas into the base counts (lib/contagem.ts), so
 * each count it serves stays one small read. One at a time.
 */
export function filaDeContagem(servico: NomeDoServico, descricao: string): DefinicaoDeFila {
  return {
    nome: `${servico}-contagem`,
    servico,
    descricao,
    opcoesDosJobs: { attempts: 1, removeOnComplete: { count: 100 }, removeOnFail: { count: 100 } },
    opcoesDoWorker: { concurrency: 1 },
  };
}

export const INTERVALO_DA_CONSOLIDACAO_MS = 10_000;
