import { Column, DataType, Model, Table } from 'sequelize-typescript';
import { MOMENTO, novoId, tabela } from '../shared/base';

export type StatusDaConversa = 'pending' | 'open' | 'resolved' | 'snoozed';

/**
 * A conversation of the chat platform (SPEC §2 Conversa, §3). Written by the webhooks with
 * hand-written SQL (api/sales/registro.ts); this class declares the table for the few writes that
 * go through Sequelize (PATCH, the hand-over).
 */
@Table(tabela('conversa', { paranoid: true }))
export class Conversa extends Model {
  @Column({ type: DataType.CHAR(36), primaryKey: true, defaultValue: novoId }) declare id: string;
  @Column({ type: DataType.CHAR(36), allowNull: false }) declare config_system_suporte_id: string;
  @Column({ type: DataType.BIGINT, allowNull: false }) declare suporte_conversa_id: string | number;
  @Column({ type: DataType.BIGINT, allowNull: true }) declare suporte_conta_id: string | number | null;
  @Column({ type: DataType.BIGINT, allowNull: true }) declare suporte_contato_id: string | number | null;
  @Column({ type: DataType.STRING(700), allowNull: true }) declare suporte_endereco_conversa: string | null;
  @Column({ type: DataType.CHAR(36), allowNull: true }) declare config_system_mensageiro_id: string | null;
  @Column({ type: DataType.CHAR(36), allowNull: true }) declare config_system_gateway_id: string | null;
  @Column({ type: DataType.CHAR(36), allowNull: true }) declare cliente_id: string | null;
  @Column({ type: DataType.CHAR(36), allowNull: true }) declare robo_id: string | null;
  /** robo_id was set (or cleared) by PATCH: the team's choice, which a robot message no longer changes */
  @Column({ type: DataType.BOOLEAN, allowNull: false, defaultValue: false }) declare robo_escolhido: boolean;
  @Column({ type: DataType.STRING(64), allowNull: true }) declare etapa_id: string | null;
  @Column({ type: DataType.STRING(255), allowNull: false }) declare contato_nome: string;
  @Column({ type: DataType.STRING(40), allowNull: false }) declare contato_telefone: string;
  @Column({ type: DataType.STRING(40), allowNull: false }) declare contato_telefone_digitos: string;
  @Column({ type: DataType.STRING(10), allowNull: false }) declare status: StatusDaConversa;
  /**
   * the platform's `updated_at` of the copy whose status a PATCH or the hand-over decided (written
   * in SQL, to the microsecond; the decision's moment when no platform time was known: registro.ts
   * MARCA_DA_DECISAO): a copy not newer leaves the decided status
   */
  @Column({ type: DataType.DATE(6), allowNull: true }) declare status_corrigido_sobre: Date | null;
  @Column({ type: DataType.TEXT('medium'), allowNull: false }) declare ultima_mensagem: string;
  @Column(MOMENTO) declare ultima_mensagem_em: Date | null;
  @Column(MOMENTO) declare ultima_mensagem_do_contato_em: Date | null;
  @Column(MOMENTO) declare ultima_mensagem_do_robo_em: Date | null;
  @Column(MOMENTO) declare transferida_em: Date | null;
  /** the contact's last message (the platform's time) when handed over: a later one starts a new wait */
  @Column(MOMENTO) declare transferida_contato_em: Date | null;
  @Column({ type: DataType.STRING(30), allowNull: true }) declare transferida_motivo: string | null;
  /** hand-overs the chat platform refused in a row, the last refusal, and when the next may be tried */
  @Column({ type: DataType.INTEGER, allowNull: false, defaultValue: 0 }) declare transferencia_falhas: number;
  @Column(MOMENTO) declare transferencia_falhou_em: Date | null;
  /** the contact's last message (the platform's time) of the wait those refusals were for */
  @Column(MOMENTO) declare transferencia_falhou_contato_em: Date | null;
  @Column(MOMENTO) declare transferencia_tentar_apos: Date | null;
  @Column({ type: DataType.INTEGER, allowNull: false, defaultValue: 0 }) declare quantidade_mensagens: number;
  @Column(MOMENTO) declare criado_em: Date;
  @Column(MOMENTO) declare atualizado_em: Date;
  @Column(MOMENTO) declare deletado_em: Date | null;
}
