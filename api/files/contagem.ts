import { consolidarDeltas, ContagemComDeltas, lerContagens } from '../../lib/contagem';
import { banco } from '../../lib/database';

/** Each application's live files, kept by the arquivo table's triggers (models/files/migracoes.ts). */
const ARQUIVOS_VIVOS = (): ContagemComDeltas => ({
  banco: banco('files'),
  base: 'arquivo_contagem',
  deltas: 'arquivo_contagem_delta',
  chave: 'aplicativo_id',
});

/** `total` of `GET /arquivo`: one small read, however many files the application holds. */
export async function totalDeArquivos(aplicativoId: string): Promise<number> {
  return (await lerContagens(ARQUIVOS_VIVOS(), [aplicativoId])).get(aplicativoId) ?? 0;
}

/** Folds the file count deltas into the base counts (the files-contagem job, one at a time). */
export const compactarContagemDeArquivos = (porVez?: number, aoProgredir?: (p: { consolidados: number }) => void, sinal?: AbortSignal) =>
  consolidarDeltas(ARQUIVOS_VIVOS(), porVez, aoProgredir, sinal);
