import { Column, DataType, Model, Table } from 'sequelize-typescript';
import { MOMENTO } from '../shared/base';

/**
 * Ed25519 keys that sign deliveries (DESIGN §5). A key is published before it signs
 * (`assina_desde`), and stays published after it stops signing (`aposentada_em`) until no attempt
 * signed with it can still be in flight. A key revoked (`revoke-hub-key`) is neither, from each
 * process's next reading of the keys.
 */
@Table({ tableName: 'chave_do_hub', underscored: true, timestamps: true, createdAt: 'criada_em', updatedAt: false })
export class ChaveDoHub extends Model {
  @Column({ type: DataType.STRING(64), primaryKey: true }) declare kid: string;
  @Column({ type: DataType.TEXT, allowNull: false }) declare chave_privada_pem: string;
  @Column({ type: DataType.DATE(3), allowNull: false }) declare assina_desde: Date;
  @Column({ type: DataType.DATE(3), allowNull: true }) declare aposentada_em: Date | null;
  @Column({ type: DataType.DATE(3), allowNull: true }) declare revogada_em: Date | null;
  @Column(MOMENTO) declare criada_em: Date;
}
