import { Column, DataType, Model, Table } from 'sequelize-typescript';
import { MOMENTO, novoId, tabela } from '../shared/base';

/** A customer that conversations link to (SPEC §2 Conversa `cliente_id`, `cliente_razao_social`). */
@Table(tabela('cliente', { paranoid: true }))
export class Cliente extends Model {
  @Column({ type: DataType.CHAR(36), primaryKey: true, defaultValue: novoId }) declare id: string;
  @Column({ type: DataType.STRING(255), allowNull: false }) declare razao_social: string;
  @Column({ type: DataType.STRING(14), allowNull: true }) declare cnpj: string | null;
  @Column({ type: DataType.STRING(40), allowNull: true }) declare telefone: string | null;
  @Column({ type: DataType.STRING(254), allowNull: true }) declare email: string | null;
  @Column(MOMENTO) declare criado_em: Date;
  @Column(MOMENTO) declare atualizado_em: Date;
  @Column(MOMENTO) declare deletado_em: Date | null;
}
