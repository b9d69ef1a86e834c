import { Column, DataType, Model, Table } from 'sequelize-typescript';
import { json, MOMENTO, novoId } from '../shared/base';

/**
 * Outbox of `colaborador.*` events: written in the same transaction as the user change, sent to
 * the hub by the identity-outbox queue, marked `enviado_em` once the hub accepted it, and deleted
 * IDENTITY_OUTBOX_RETENCAO_DIAS after that (api/identity/outbox.ts purgarEventosEnviados).
 */
@Table({ tableName: 'evento_pendente', underscored: true, timestamps: true, createdAt: 'criado_em', updatedAt: false })
export class EventoPendente extends Model {
  @Column({ type: DataType.CHAR(36), primaryKey: true, defaultValue: novoId }) declare id: string;
  /**
   * Order of storage, from the database's one counter: `criado_em` came from each process's own
   * clock before, and any clock may give two events one millisecond or step back
   */
  @Column({ type: DataType.BIGINT, autoIncrement: true }) declare sequencia: number;
  @Column({ type: DataType.STRING(100), allowNull: false }) declare tipo: string;
  @Column({ type: DataType.INTEGER, allowNull: false, defaultValue: 1 }) declare versao: number;
  @Column({ type: DataType.TEXT('long'), allowNull: false, ...json<Record<string, unknown>>('dados') })
  declare dados: Record<string, unknown>;
  /** `dados.id`: the events of one collaborator are sent in the order they were stored (`sequencia`) */
  @Column({ type: DataType.CHAR(36), allowNull: true }) declare colaborador_id: string | null;
  @Column({ type: DataType.DATE(3), allowNull: true }) declare enviado_em: Date | null;
  @Column({ type: DataType.INTEGER, allowNull: false, defaultValue: 0 }) declare tentativas: number;
  @Column({ type: DataType.STRING(1000), allowNull: true }) declare ultimo_erro: string | null;
  /** by the database's clock (api/identity/outbox.ts registrarEvento): the sweep compares it with that clock */
  @Column(MOMENTO) declare criado_em: Date;
}
