import { Model, ModelStatic, Transaction } from 'sequelize';
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
