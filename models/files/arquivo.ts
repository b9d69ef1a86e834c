import { Column, DataType, Model, Table } from 'sequelize-typescript';
import { MOMENTO, novoId } from '../shared/base';

/**
 * A stored file's metadata (DESIGN §7). The bytes live in the storage (api/files/armazenamento.ts)
 * under the file's id, never under its name. A file never changes: no `atualizado_em`. Deleting it
 * removes the bytes and keeps the row, marked `deletado_em` (DESIGN §4), gone from every read.
 */
@Table({ tableName: 'arquivo', underscored: true, timestamps: true, createdAt: 'criado_em', updatedAt: false, deletedAt: 'deletado_em', paranoid: true })
export class Arquivo extends Model {
  @Column({ type: DataType.CHAR(36), primaryKey: true, defaultValue: novoId }) declare id: string;
  /** the owner: `sub` of the application token that uploaded it (identity id) */
  @Column({ type: DataType.STRING(64), allowNull: false }) declare aplicativo_id: string;
  @Column({ type: DataType.STRING(255), allowNull: false }) declare nome: string;
  @Column({ type: DataType.STRING(255), allowNull: false }) declare tipo_mime: string;
  /** BIGINT: mysql2 hands it back as a string (bigNumberStrings) */
  @Column({ type: DataType.BIGINT, allowNull: false }) declare tamanho: number | string;
  /** lower-case hex SHA-256 of the bytes */
  @Column({ type: DataType.CHAR(64), allowNull: false }) declare sha256: string;
  /** the upload's Idempotency-Key, unique per application (null: sent without one) */
  @Column({ type: DataType.STRING(255), allowNull: true }) declare chave_de_idempotencia: string | null;
  @Column(MOMENTO) declare criado_em: Date;
  @Column(MOMENTO) declare deletado_em: Date | null;
}
