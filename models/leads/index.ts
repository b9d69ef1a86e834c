import { Colaborador } from './colaborador';
import { PerfilAcesso } from './perfil-acesso';

export { Colaborador, PerfilAcesso };
export { MIGRACOES_LEADS, TABELAS_DE_CODIGOS } from './migracoes';
/**
 * Only the access module's tables are models: the registry is loaded in bulk and read with plain
 * SQL (api/leads/), where a model per row would cost more than the query.
 */
export const MODELOS_LEADS = [PerfilAcesso, Colaborador];
