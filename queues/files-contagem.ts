import { filaDeContagem } from './contagem';

/** Each application's file count (api/files/contagem.ts). */
export const filaFilesContagem = filaDeContagem('files', 'Consolidação da contagem de arquivos por aplicativo');
