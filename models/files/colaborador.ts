import { BelongsTo, Table } from 'sequelize-typescript';
import { tabela } from '../shared/base';
import { ColaboradorBase } from '../shared/colaborador';
import { PerfilAcesso } from './perfil-acesso';

@Table(tabela('colaborador', { paranoid: true }))
export class Colaborador extends ColaboradorBase {
  @BelongsTo(() => PerfilAcesso, { foreignKey: 'perfil_acesso_id', constraints: false })
  declare perfil?: PerfilAcesso | null;
}
