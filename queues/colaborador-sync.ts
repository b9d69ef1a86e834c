import { NomeDoServico } from '../config/services';
import { DefinicaoDeFila } from './fila';

/**
 * Registration of identity collaborators when a master lists them (SPEC 4.5 rule 2), one queue per
 * service that mounts the access module. One job at a time (fixed jobId): concurrent listings share
 * it, and is removed as soon as it ends, whatever the outcome. The master's token it acts with is
 * kept apart from its data (tokenDaFila), which the dashboard shows.
 */
export function filaDeColaboradorSync(servico: NomeDoServico): DefinicaoDeFila {
  return {
    nome: `${servico}-colaborador-sync`,
    servico,
    descricao: 'Cadastro dos colaboradores do identity na listagem de um master',
    opcoesDosJobs: { attempts: 1, removeOnComplete: true, removeOnFail: true },
    opcoesDoWorker: { concurrency: 1 },
  };
}
