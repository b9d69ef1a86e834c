import { BelongsTo, Column, DataType, HasMany, Model, Table } from 'sequelize-typescript';
import { MOMENTO, novoId } from '../shared/base';
import { Assinatura } from './assinatura';
import { Evento } from './evento';

/**
 * A delivery of one event to one subscription. `pendente` while attempts remain, then `entregue`
 * or `fila_de_erro` (attempts exhausted); `cancelada` when its subscription was deactivated or
 * deleted, or its subscriber made inactive. Its id is the `webhook-id`, the same on every attempt.
 */
export const SITUACOES_DA_ENTREGA = ['pendente', 'entregue', 'fila_de_erro', 'cancelada'] as const;
export type SituacaoDaEntrega = (typeof SITUACOES_DA_ENTREGA)[number];

@Table({ tableName: 'entrega', underscored: true, timestamps: true, createdAt: 'criada_em', updatedAt: 'atualizada_em' })
export class Entrega extends Model {
  @Column({ type: DataType.CHAR(36), primaryKey: true, defaultValue: novoId }) declare id: string;
  @Column({ type: DataType.CHAR(36), allowNull: false }) declare evento_id: string;
  @Column({ type: DataType.CHAR(36), allowNull: false }) declare assinatura_id: string;
  @Column({ type: DataType.STRING(20), allowNull: false, defaultValue: 'pendente' }) declare situacao: SituacaoDaEntrega;
  @Column({ type: DataType.INTEGER, allowNull: false, defaultValue: 0 }) declare tentativas: number;
  @Column({ type: DataType.DATE(3), allowNull: true }) declare proxima_tentativa_em: Date | null;
  @Column({ type: DataType.DATE(3), allowNull: true }) declare entregue_em: Date | null;
  @Column({ type: DataType.STRING(1000), allowNull: true }) declare ultimo_erro: string | null;
  @Column(MOMENTO) declare criada_em: Date;
  @Column(MOMENTO) declare atualizada_em: Date;

  @BelongsTo(() => Evento, { foreignKey: 'evento_id', constraints: false }) declare evento?: Evento;
  @BelongsTo(() => Assinatura, { foreignKey: 'assinatura_id', constraints: false }) declare assinatura?: Assinatura;
  @HasMany(() => TentativaDeEntrega, { foreignKey: 'entrega_id', constraints: false }) declare tentativasFeitas?: TentativaDeEntrega[];
}

/** One attempt: when, how long, what came back (the first KiB), or why it failed. */
@Table({ tableName: 'tentativa_de_entrega', underscored: true, timestamps: false })
export class TentativaDeEntrega extends Model {
  @Column({ type: DataType.BIGINT, primaryKey: true, autoIncrement: true }) declare id: string;
  @Column({ type: DataType.CHAR(36), allowNull: false }) declare entrega_id: string;
  @Column({ type: DataType.INTEGER, allowNull: false }) declare numero: number;
  @Column({ type: DataType.DATE(3), allowNull: false }) declare iniciada_em: Date;
  @Column({ type: DataType.INTEGER, allowNull: false }) declare duracao_ms: number;
  @Column({ type: DataType.INTEGER, allowNull: true }) declare status_http: number | null;
  @Column({ type: DataType.STRING(1000), allowNull: true }) declare erro: string | null;
  @Column({ type: DataType.STRING(1024), allowNull: true }) declare resposta: string | null;
}
