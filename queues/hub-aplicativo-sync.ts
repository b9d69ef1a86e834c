import { DefinicaoDeFila } from './fila';

/**
 * Sync of the hub's applications with identity before a listing (SPEC 4.4 rule 3). One job for
 * masters' listings and one for the others' (fixed jobIds), each shared by concurrent listings of
 * its kind, run one at a time, removed as soon as it ends. A master's token it acts with is kept
 * apart from its data (tokenDaFila), which the dashboard shows.
 */
export const filaHubAplicativoSync: DefinicaoDeFila = {
  nome: 'hub-aplicativo-sync',
  servico: 'hub',
  descricao: 'Sincronização dos aplicativos com o identity',
  opcoesDosJobs: { attempts: 1, removeOnComplete: true, removeOnFail: true },
  opcoesDoWorker: { concurrency: 1 },
};
