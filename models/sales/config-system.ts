import { Column, DataType, Model, Table } from 'sequelize-typescript';
import { MOMENTO, novoId, tabela } from '../shared/base';

export type TipoDeSistema = 'suporte' | 'mensageiro' | 'gateway';

/**
 * A configured system (DESIGN §7, §10): a chat-platform account (`suporte`), a messaging-app number
 * (`mensageiro`) or a messaging gateway (`gateway`). Its webhooks present `token`, kept only as
 * a hash; the secrets the service itself must use are kept encrypted.
 */
@Table(tabela('config_system', { paranoid: true }))
export class ConfigSystem extends Model {
  @Column({ type: DataType.CHAR(36), primaryKey: true, defaultValue: novoId }) declare id: string;
  @Column({ type: DataType.STRING(12), allowNull: false }) declare tipo: TipoDeSistema;
  @Column({ type: DataType.STRING(120), allowNull: false }) declare nome: string;
  /** keyed hash (HMAC-SHA256, hex) of the webhook token (api/sales/cifra.ts) */
  @Column({ type: DataType.CHAR(64), allowNull: false }) declare token_hash: string;
  /** the chat platform's webhook HMAC key (X-Chatwoot-Signature), encrypted */
  @Column({ type: DataType.STRING(1000), allowNull: true }) declare segredo_hmac_cifrado: string | null;
  /** the platform's base address (panel links, API calls) */
  @Column({ type: DataType.STRING(500), allowNull: true }) declare url: string | null;
  /** the chat platform's account id */
  @Column({ type: DataType.BIGINT, allowNull: true }) declare conta_id: string | number | null;
  /** the chat platform's API access token (hand-over, attachment downloads), encrypted */
  @Column({ type: DataType.STRING(1000), allowNull: true }) declare token_api_cifrado: string | null;
  /** a messaging number's digits (how the gateway names it) */
  @Column({ type: DataType.STRING(20), allowNull: true }) declare numero: string | null;
  @Column({ type: DataType.BOOLEAN, allowNull: false, defaultValue: true }) declare ativo: boolean;
  @Column(MOMENTO) declare criado_em: Date;
  @Column(MOMENTO) declare atualizado_em: Date;
  @Column(MOMENTO) declare deletado_em: Date | null;
}
