import { Column, DataType, Model, Table } from 'sequelize-typescript';
import { MOMENTO } from '../shared/base';

/**
 * LOCALHOST only: the HMAC key of the signed download URLs, generated on first start and kept here
 * so every process of the service signs and checks with the same key. Elsewhere it comes from
 * FILES_SEGREDO_DE_ASSINATURA.
 */
@Table({ tableName: 'segredo_de_assinatura', underscored: true, timestamps: true, createdAt: 'criado_em', updatedAt: false })
export class SegredoDeAssinatura extends Model {
  @Column({ type: DataType.STRING(64), primaryKey: true }) declare nome: string;
  @Column({ type: DataType.STRING(200), allowNull: false }) declare valor: string;
  @Column(MOMENTO) declare criado_em: Date;
}
