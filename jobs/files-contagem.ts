import { compactarContagemDeArquivos } from '../api/files/contagem';
import { processadorDeContagem } from './contagem';

export const processarFilesContagem = processadorDeContagem(compactarContagemDeArquivos);
