import { compactarFilaDeErro } from '../api/hub/contagem';
import { processadorDeContagem } from './contagem';

export const processarHubContagem = processadorDeContagem(compactarFilaDeErro);
