import { Column, DataType, Model, Table } from 'sequelize-typescript';
import { MOMENTO } from '../shared/base';

/** Token signing keys kept in the database (LOCALHOST; elsewhere the key comes from a file). */
@Table({ tableName: 'chave_de_assinatura', underscored: true, timestamps: true, createdAt: 'criada_em', updatedAt: false })
export class ChaveDeAssinatura extends Model {
  @Column({ type: DataType.STRING(64), primaryKey: true }) declare kid: string;
  @Column({ type: DataType.TEXT, allowNull: false }) declare chave_privada_pem: string;
  @Column(MOMENTO) declare criada_em: Date;
}
