import { Column, DataType, Model, Table } from 'sequelize-typescript';
import { MOMENTO } from '../shared/base';

/** LOCALHOST only: the key that encrypts configured systems' secrets (SALES_CHAVE_DE_CIFRA elsewhere). */
@Table({ tableName: 'segredo', underscored: true, timestamps: true, createdAt: 'criado_em', updatedAt: false })
export class Segredo extends Model {
  @Column({ type: DataType.STRING(64), primaryKey: true }) declare nome: string;
  @Column({ type: DataType.STRING(200), allowNull: false }) declare valor: string;
  @Column(MOMENTO) declare criado_em: Date;
}
