import { Column, DataType, Model, Table } from 'sequelize-typescript';
import { MOMENTO, novoId, tabela } from '../shared/base';

/**
 * An attachment of a message (SPEC §2 AnexoDaMensagem): where it is in the chat platform and,
 * once copied, the file storage's id of the sales application's private copy.
 */
@Table(tabela('anexo_da_mensagem'))
export class AnexoDaMensagem extends Model {
  @Column({ type: DataType.CHAR(36), primaryKey: true, defaultValue: novoId }) declare id: string;
  @Column({ type: DataType.CHAR(36), allowNull: false }) declare mensagem_id: string;
  @Column({ type: DataType.CHAR(36), allowNull: false }) declare conversa_id: string;
  @Column({ type: DataType.BIGINT, allowNull: true }) declare suporte_anexo_id: string | number | null;
  @Column({ type: DataType.STRING(2000), allowNull: false }) declare endereco: string;
  @Column({ type: DataType.STRING(255), allowNull: false }) declare nome: string;
  @Column({ type: DataType.STRING(30), allowNull: false }) declare tipo: string;
  @Column({ type: DataType.CHAR(36), allowNull: true }) declare arquivo_id: string | null;
  @Column({ type: DataType.STRING(255), allowNull: true }) declare tipo_mime: string | null;
  @Column({ type: DataType.BIGINT, allowNull: true }) declare tamanho: string | number | null;
  /** copy attempts made so far (SPEC 4.6 rule 7: the first and up to 5 more) */
  @Column({ type: DataType.INTEGER, allowNull: false, defaultValue: 0 }) declare tentativas: number;
  /**
   * when the last attempt counted in `tentativas` began, by the database's clock; null when none
   * is (never tried, its last attempt given back, re-armed): the next waits SALES_ANEXO_RETRY_MS from it
   */
  @Column({ ...MOMENTO, allowNull: true }) declare ultima_tentativa_em: Date | null;
  /**
   * the copy stopped for good whatever attempts are left (file storage refused the attachment as
   * past its size limit): neither the queue nor the sweep runs it again until it is re-armed
   */
  @Column({ type: DataType.BOOLEAN, allowNull: false, defaultValue: false }) declare parada: boolean;
  @Column({ type: DataType.STRING(500), allowNull: true }) declare ultimo_erro: string | null;
  /**
   * when the copy was first put off by a failure of our side, by the database's clock; null once
   * it is made, fails on its own or is given up (SALES_ANEXO_ADIAMENTO_MAXIMO_MS counts from it)
   */
  @Column({ ...MOMENTO, allowNull: true }) declare adiada_desde: Date | null;
  @Column(MOMENTO) declare criado_em: Date;
  /** by the database's clock (api/sales/anexos.ts atualizarAnexos): the sweep compares it with that clock */
  @Column(MOMENTO) declare atualizado_em: Date;
}
