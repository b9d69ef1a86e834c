import { Column, DataType, Model, Table } from 'sequelize-typescript';
import { json, MOMENTO, novoId } from '../shared/base';

/** A published event (DESIGN §5). `id_do_publicador` is the publisher's idempotency key. */
@Table({ tableName: 'evento', underscored: true, timestamps: true, createdAt: 'criado_em', updatedAt: false })
export class Evento extends Model {
  @Column({ type: DataType.CHAR(36), primaryKey: true, defaultValue: novoId }) declare id: string;
  @Column({ type: DataType.CHAR(36), allowNull: false }) declare aplicativo_origem_id: string;
  @Column({ type: DataType.STRING(100), allowNull: true }) declare id_do_publicador: string | null;
  @Column({ type: DataType.CHAR(36), allowNull: false }) declare tipo_de_evento_id: string;
  /**
   * the type's name it was published under, which every attempt carries (a rename of the type
   * since changes nothing); null only when stored by a process older than migration 0012
   */
  @Column({ type: DataType.STRING(150), allowNull: true }) declare tipo: string | null;
  @Column({ type: DataType.INTEGER, allowNull: false }) declare versao: number;
  @Column({ type: DataType.TEXT('long'), allowNull: false, ...json<unknown>('dados') }) declare dados: unknown;
  @Column({ type: DataType.INTEGER, allowNull: false, defaultValue: 0 }) declare entregas: number;
  /** job id of the batch carrying its deliveries' first attempts (queues/hub-entrega.ts); null without deliveries */
  @Column({ type: DataType.STRING(50), allowNull: true }) declare lote: string | null;
  @Column(MOMENTO) declare criado_em: Date;
}
