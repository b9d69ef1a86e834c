import { Column, DataType, Model, Table } from 'sequelize-typescript';
import { MOMENTO, novoId, tabela } from '../shared/base';

/**
 * An AI service robot (SPEC §2 Conversa `robo_id`). It answers in the chat platform as a user
 * (`suporte_usuario_id`) or as an agent bot (`suporte_bot_id`), whose ids are counted apart: a
 * message from either is the robot's (DESIGN §10 `autor`). Each belongs to one live robot at most
 * (unique keys over generated columns, NULL once deleted: migration 0014).
 */
@Table(tabela('robo', { paranoid: true }))
export class Robo extends Model {
  @Column({ type: DataType.CHAR(36), primaryKey: true, defaultValue: novoId }) declare id: string;
  @Column({ type: DataType.STRING(120), allowNull: false }) declare nome: string;
  @Column({ type: DataType.STRING(500), allowNull: true }) declare descricao: string | null;
  @Column({ type: DataType.BIGINT, allowNull: true }) declare suporte_usuario_id: string | number | null;
  @Column({ type: DataType.BIGINT, allowNull: true }) declare suporte_bot_id: string | number | null;
  @Column(MOMENTO) declare criado_em: Date;
  @Column(MOMENTO) declare atualizado_em: Date;
  @Column(MOMENTO) declare deletado_em: Date | null;
}
