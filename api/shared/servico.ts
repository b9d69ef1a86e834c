import { Express } from 'express';
import { ModelCtor } from 'sequelize-typescript';
import { NomeDoServico } from '../../config/services';
import { banco, Migracao } from '../../lib/database';
import { redis } from '../../lib/redis';

/** What the suite runner needs to know of a service. */
export interface Servico {
  nome: NomeDoServico;
  modelos: ModelCtor[];
  migracoes: Migracao[];
  /** after migrations: keys, seeds, anything the API or the workers need at hand */
  preparar(): Promise<void>;
  /**
   * After `preparar`, in a process that serves the API only: what the API's own settings decide,
   * which a worker started with other settings must not undo
   */
  aoServir?(): Promise<void>;
  app(): Express;
  /**
   * How long a request may take to arrive whole, when not Node's 5 minutes (a large upload on a
   * slow link takes longer); past it Node answers 408 and closes the connection.
   */
  prazoDaRequisicaoMs?(): number;
}

/** Readiness (DESIGN §4): the service's database and Redis answer. */
export async function prontidao(servico: NomeDoServico): Promise<void> {
  await Promise.all([banco(servico).query('SELECT 1'), redis('produtor').ping()]);
}
