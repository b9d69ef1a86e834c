import { Model, ModelStatic, Transaction, UniqueConstraintError } from 'sequelize';
import { decidirSobTrava } from '../../lib/database';
import { naoEncontrado } from './errors';

/**
 * A change or deletion of a record that must still be there: read again under its lock
 * (decidirSobTrava), so of two at once the second sees the first, and one gone meanwhile (deleted,
 * or never there) answers 404 naming `oQue` instead of a write to a deleted record.
 */
export function mudarSobTrava<M extends Model, T>(
  modelo: ModelStatic<M>,
  id: string,
  oQue: string,
  mudar: (linha: M, transaction: Transaction) => Promise<T>,
): Promise<T> {
  return decidirSobTrava(modelo, id, async (linha, transaction) => {
    if (!linha) throw naoEncontrado(oQue);
    return mudar(linha, transaction);
  });
}

/**
 * For a write's `.catch`: a unique key the write met is the conflict the rule names (a write of
 * the same key committed after the rule's own check looked), not the generic 409; any other error
 * goes on as it came.
 */
export const comoConflitoDaRegra =
  (conflito: () => Error) =>
  (err: unknown): never => {
    throw err instanceof UniqueConstraintError ? conflito() : err;
  };
