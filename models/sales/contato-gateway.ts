import { Column, DataType, Model, Table } from 'sequelize-typescript';
import { MOMENTO } from '../shared/base';

/**
 * The messaging gateway's last word on a phone (DESIGN §7): the gateway and messaging number it
 * talks through, applied to the phone's running conversations and to those created later.
 */
@Table({ tableName: 'contato_gateway', underscored: true, timestamps: true, createdAt: false, updatedAt: 'atualizado_em' })
export class ContatoGateway extends Model {
  /** the phone's digits, Brazilian mobiles without their ninth digit (api/sales/telefone.ts) */
  @Column({ type: DataType.STRING(40), primaryKey: true }) declare telefone_chave: string;
  @Column({ type: DataType.CHAR(36), allowNull: false }) declare config_system_gateway_id: string;
  @Column({ type: DataType.CHAR(36), allowNull: true }) declare config_system_mensageiro_id: string | null;
  /** when the message whose event wrote the link was sent (its `messageTimestamp`): an older one's event, arriving later, changes nothing */
  @Column({ type: DataType.DATE(3), allowNull: true }) declare mensagem_em: Date | null;
  @Column(MOMENTO) declare atualizado_em: Date;
}
