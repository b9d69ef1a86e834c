import { Arquivo } from './arquivo';
import { Colaborador } from './colaborador';
import { PerfilAcesso } from './perfil-acesso';
import { SegredoDeAssinatura } from './segredo-de-assinatura';

export { Arquivo, Colaborador, PerfilAcesso, SegredoDeAssinatura };
export { MIGRACOES_FILES } from './migracoes';
export const MODELOS_FILES = [Arquivo, SegredoDeAssinatura, PerfilAcesso, Colaborador];
