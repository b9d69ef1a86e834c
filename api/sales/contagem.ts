import { consolidarDeltas, ContagemComDeltas, lerContagens } from '../../lib/contagem';
import { banco } from '../../lib/database';
import { StatusDaConversa } from '../../models/sales';

/** Live conversations per status, kept by the conversa table's triggers (models/sales/migracoes.ts). */
const CONTAGEM_DE_CONVERSAS = (): ContagemComDeltas => ({
  banco: banco('sales'),
  base: 'conversa_contagem',
  deltas: 'conversa_contagem_delta',
  chave: 'status',
});

/** Live conversations of `status`, or of every status (SPEC 4.6 rule 1 `total`): one read, whatever the size. */
export async function totalDeConversas(status?: StatusDaConversa): Promise<number> {
  const porStatus = await lerContagens(CONTAGEM_DE_CONVERSAS(), status && [status]);
  return [...porStatus.values()].reduce((soma, n) => soma + n, 0);
}

/** Folds the conversation count deltas into the base counts (the sales-contagem job, one at a time). */
export const compactarContagem = (porVez?: number, aoProgredir?: (p: { consolidados: number }) => void, sinal?: AbortSignal) =>
  consolidarDeltas(CONTAGEM_DE_CONVERSAS(), porVez, aoProgredir, sinal);
