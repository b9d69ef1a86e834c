import { Column, DataType, Model } from 'sequelize-typescript';
import { MOMENTO, novoId } from './base';

/**
 * A service's local copy of an identity collaborator (SPEC §2 Colaborador), with the access
 * profile that decides what the person sees in this service (DESIGN §3). Each service that mounts
 * the access module declares its own table class extending this one (models/<service>/).
 */
export abstract class ColaboradorBase extends Model {
  @Column({ type: DataType.CHAR(36), primaryKey: true, defaultValue: novoId }) declare id: string;
  @Column({ type: DataType.STRING(64), allowNull: false }) declare auth_id: string;
  @Column({ type: DataType.STRING(200), allowNull: false }) declare nome: string;
  @Column({ type: DataType.STRING(254), allowNull: false }) declare email: string;
  @Column({ type: DataType.BOOLEAN, allowNull: false, defaultValue: true }) declare ativo: boolean;
  @Column({ type: DataType.BOOLEAN, allowNull: false, defaultValue: false }) declare master: boolean;
  @Column({ type: DataType.STRING(200), allowNull: true }) declare cargo: string | null;
  @Column({ type: DataType.STRING(200), allowNull: true }) declare funcao: string | null;
  @Column({ type: DataType.STRING(200), allowNull: true }) declare setor: string | null;
  @Column({ type: DataType.STRING(40), allowNull: true }) declare telefone: string | null;
  @Column({ type: DataType.CHAR(36), allowNull: true }) declare perfil_acesso_id: string | null;
  @Column(MOMENTO) declare criado_em: Date;
  @Column(MOMENTO) declare atualizado_em: Date;
  @Column(MOMENTO) declare deletado_em: Date | null;
}
