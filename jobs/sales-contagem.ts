import { compactarContagem } from '../api/sales/contagem';

/** Adapter: folds the conversation count deltas into the base counts. */
export async function processarSalesContagem() {
  return { consolidados: await compactarContagem() };
}
