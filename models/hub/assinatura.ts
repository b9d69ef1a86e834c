import { BelongsTo, Column, DataType, Model, Table } from 'sequelize-typescript';
import { MOMENTO, novoId } from '../shared/base';
import { Aplicativo } from './aplicativo';
import { TipoDeEvento } from './tipo-de-evento';

/** A subscription (SPEC §2 Assinatura): an application receives a type's events in one version. */
@Table({
  tableName: 'assinatura',
  underscored: true,
  timestamps: true,
  createdAt: 'criada_em',
  updatedAt: 'atualizada_em',
  deletedAt: 'deletada_em',
  paranoid: true,
})
export class Assinatura extends Model {
  @Column({ type: DataType.CHAR(36), primaryKey: true, defaultValue: novoId }) declare id: string;
  @Column({ type: DataType.CHAR(36), allowNull: false }) declare aplicativo_assinante_id: string;
  @Column({ type: DataType.CHAR(36), allowNull: false }) declare tipo_de_evento_id: string;
  @Column({ type: DataType.INTEGER, allowNull: false }) declare versao_do_esquema: number;
  @Column({ type: DataType.STRING(500), allowNull: false }) declare url_de_destino: string;
  @Column({ type: DataType.INTEGER, allowNull: false, defaultValue: 5 }) declare maximo_de_tentativas: number;
  @Column({ type: DataType.INTEGER, allowNull: false, defaultValue: 5 }) declare tempo_limite_em_segundos: number;
  @Column({ type: DataType.BOOLEAN, allowNull: false, defaultValue: true }) declare ativa: boolean;
  @Column({ type: DataType.DATE(3), allowNull: true }) declare ultima_entrega_em: Date | null;
  @Column(MOMENTO) declare criada_em: Date;
  @Column(MOMENTO) declare atualizada_em: Date;
  @Column(MOMENTO) declare deletada_em: Date | null;

  @BelongsTo(() => Aplicativo, { foreignKey: 'aplicativo_assinante_id', constraints: false }) declare assinante?: Aplicativo;
  @BelongsTo(() => TipoDeEvento, { foreignKey: 'tipo_de_evento_id', constraints: false }) declare tipo?: TipoDeEvento;
}
