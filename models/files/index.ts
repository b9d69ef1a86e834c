import { Arquivo } from './arquivo';
import { SegredoDeAssinatura } from './segredo-de-assinatura';

export { Arquivo, SegredoDeAssinatura };
export { MIGRACOES_FILES } from './migracoes';
export const MODELOS_FILES = [Arquivo, SegredoDeAssinatura];
