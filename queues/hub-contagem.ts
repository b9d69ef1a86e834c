import { filaDeContagem } from './contagem';

/** Each subscription's error-queue count (api/hub/contagem.ts). */
export const filaHubContagem = filaDeContagem('hub', 'Consolidação da contagem de entregas na fila de erro');
