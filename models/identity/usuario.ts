import { BelongsTo, Column, DataType, Model, Table } from 'sequelize-typescript';
import { MOMENTO, novoId, tabela } from '../shared/base';
import { Cargo, Funcao, Setor } from './cadastros';

export type PerfilDeUsuario = 'colaborador' | 'cliente';

@Table(tabela('usuario', { paranoid: true }))
export class Usuario extends Model {
  @Column({ type: DataType.CHAR(36), primaryKey: true, defaultValue: novoId }) declare id: string;
  @Column({ type: DataType.STRING(200), allowNull: false }) declare nome: string;
  @Column({ type: DataType.STRING(254), allowNull: false }) declare email: string;
  @Column({ type: DataType.STRING(20), allowNull: false }) declare perfil: PerfilDeUsuario;
  /** master stored in the database; `e_master` also counts MASTER_EMAILS */
  @Column({ type: DataType.BOOLEAN, allowNull: false, defaultValue: false }) declare master: boolean;
  @Column({ type: DataType.BOOLEAN, allowNull: false, defaultValue: false }) declare email_verificado: boolean;
  @Column({ type: DataType.BOOLEAN, allowNull: false, defaultValue: false }) declare dois_fatores_ativo: boolean;
  @Column({ type: DataType.STRING(255), allowNull: true }) declare senha_hash: string | null;
  @Column({ type: DataType.CHAR(36), allowNull: true }) declare setor_id: string | null;
  @Column({ type: DataType.CHAR(36), allowNull: true }) declare cargo_id: string | null;
  @Column({ type: DataType.CHAR(36), allowNull: true }) declare funcao_id: string | null;
  @Column({ type: DataType.STRING(1000), allowNull: true }) declare imagem: string | null;
  @Column({ type: DataType.DATE(3), allowNull: true }) declare bloqueado_ate: Date | null;
  @Column({ type: DataType.DATE(3), allowNull: true }) declare ultimo_login_em: Date | null;
  /** failed logins in a row; reset by a success, when a lock ends, or a day after the first of them */
  @Column({ type: DataType.INTEGER, allowNull: false, defaultValue: 0 }) declare falhas_de_login: number;
  /** when the first of `falhas_de_login` happened (null: no count, or one an earlier version kept) */
  @Column({ type: DataType.DATE(3), allowNull: true }) declare primeira_falha_de_login_em: Date | null;
  /** set when the password changes: identity refuses the user's tokens issued before it (login.ts) */
  @Column({ type: DataType.DATE(3), allowNull: true }) declare tokens_validos_desde: Date | null;
  @Column(MOMENTO) declare criado_em: Date;
  @Column(MOMENTO) declare atualizado_em: Date;
  @Column(MOMENTO) declare deletado_em: Date | null;

  @BelongsTo(() => Setor, { foreignKey: 'setor_id', constraints: false }) declare setor?: Setor | null;
  @BelongsTo(() => Cargo, { foreignKey: 'cargo_id', constraints: false }) declare cargo?: Cargo | null;
  @BelongsTo(() => Funcao, { foreignKey: 'funcao_id', constraints: false }) declare funcao?: Funcao | null;
}
