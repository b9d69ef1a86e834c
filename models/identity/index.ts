import { Aplicativo } from './aplicativo';
import { Cargo, Funcao, Setor } from './cadastros';
import { ChaveDeAssinatura } from './chave-de-assinatura';
import { EventoPendente } from './evento-pendente';
import { Usuario } from './usuario';

export { Aplicativo, Cargo, ChaveDeAssinatura, EventoPendente, Funcao, Setor, Usuario };
export { MIGRACOES_IDENTITY } from './migracoes';
export const MODELOS_IDENTITY = [Setor, Cargo, Funcao, Usuario, Aplicativo, ChaveDeAssinatura, EventoPendente];
