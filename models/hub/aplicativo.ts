import { Column, DataType, Model, Table } from 'sequelize-typescript';
import { MOMENTO, novoId, tabela } from '../shared/base';

/** The hub's read-only copy of an identity application (SPEC §2 Aplicativo, §3 Hub application activity). */
@Table(tabela('aplicativo', { paranoid: true }))
export class Aplicativo extends Model {
  @Column({ type: DataType.CHAR(36), primaryKey: true, defaultValue: novoId }) declare id: string;
  /** the application's id in the identity service (its token's `sub`); never changes */
  @Column({ type: DataType.STRING(64), allowNull: false }) declare identificador_no_auth: string;
  @Column({ type: DataType.STRING(200), allowNull: false }) declare nome: string;
  @Column({ type: DataType.STRING(1000), allowNull: true }) declare descricao: string | null;
  @Column({ type: DataType.BOOLEAN, allowNull: false, defaultValue: true }) declare ativo: boolean;
  @Column(MOMENTO) declare criado_em: Date;
  @Column(MOMENTO) declare atualizado_em: Date;
  @Column(MOMENTO) declare deletado_em: Date | null;
}
