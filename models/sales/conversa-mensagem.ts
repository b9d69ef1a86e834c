import { Column, DataType, Model, Table } from 'sequelize-typescript';
import { MOMENTO, novoId, tabela } from '../shared/base';

export type AutorDaMensagem = 'contato' | 'atendente' | 'robo';

/** A visible message of a conversation (SPEC §2 ConversaMensagem); private notes are never stored. Keyed by conversation. */
@Table(tabela('conversa_mensagem'))
export class ConversaMensagem extends Model {
  @Column({ type: DataType.CHAR(36), primaryKey: true }) declare conversa_id: string;
  @Column({ type: DataType.BIGINT, primaryKey: true }) declare suporte_mensagem_id: string | number;
  @Column({ type: DataType.CHAR(36), allowNull: false, defaultValue: novoId }) declare id: string;
  @Column({ type: DataType.STRING(10), allowNull: false }) declare autor: AutorDaMensagem;
  @Column({ type: DataType.TEXT('medium'), allowNull: false }) declare conteudo: string;
  @Column({ type: DataType.STRING(64), allowNull: true }) declare etapa_id: string | null;
  @Column(MOMENTO) declare criada_em: Date;
  @Column({ type: DataType.INTEGER, allowNull: false, defaultValue: 0 }) declare quantidade_anexos: number;
  /** deleted in the chat platform: its text is the platform's notice, and no later event changes it */
  @Column({ type: DataType.BOOLEAN, allowNull: false, defaultValue: false }) declare apagada: boolean;
  @Column(MOMENTO) declare criado_em: Date;
  @Column(MOMENTO) declare atualizado_em: Date;
}
