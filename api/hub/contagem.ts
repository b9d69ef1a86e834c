import { consolidarDeltas, ContagemComDeltas, lerContagens } from '../../lib/contagem';
import { banco } from '../../lib/database';

/** Each subscription's deliveries in the error queue, kept by the entrega table's triggers (models/hub/migracoes.ts). */
const FILA_DE_ERRO = (): ContagemComDeltas => ({
  banco: banco('hub'),
  base: 'fila_de_erro_contagem',
  deltas: 'fila_de_erro_contagem_delta',
  chave: 'assinatura_id',
});

/** `entregas_na_fila_de_erro` of each subscription (SPEC 4.3): one small read, however long the queue. */
export const entregasNaFilaDeErro = (assinaturas: readonly string[]) => lerContagens(FILA_DE_ERRO(), assinaturas);

/** Folds the error-queue deltas into the base counts (the hub-contagem job, one at a time). */
export const compactarFilaDeErro = (porVez?: number, aoProgredir?: (p: { consolidados: number }) => void, sinal?: AbortSignal) =>
  consolidarDeltas(FILA_DE_ERRO(), porVez, aoProgredir, sinal);
