import { Migracao } from '../../lib/database';
import { migracaoDeAcesso, migracaoDoSegredoDosTokens, migracaoDosNomesDePerfil } from '../shared/migracoes-de-acesso';
import { Colaborador } from './colaborador';
import { PerfilAcesso } from './perfil-acesso';

export { Colaborador, PerfilAcesso };
export const MODELOS_INTRANET = [PerfilAcesso, Colaborador];
export const MIGRACOES_INTRANET: Migracao[] = [migracaoDeAcesso, migracaoDosNomesDePerfil, migracaoDoSegredoDosTokens];
