import { Column, DataType, Model } from 'sequelize-typescript';
import { json, MOMENTO, novoId } from './base';

export type Acao = 'ler' | 'criar' | 'editar' | 'deletar';
export type Permissoes = Record<string, Acao[]>;

/** An access profile: what a collaborator may do, per area (DESIGN §3). */
export abstract class PerfilAcessoBase extends Model {
  @Column({ type: DataType.CHAR(36), primaryKey: true, defaultValue: novoId }) declare id: string;
  @Column({ type: DataType.STRING(120), allowNull: false }) declare nome: string;
  @Column({ type: DataType.STRING(500), allowNull: true }) declare descricao: string | null;
  @Column({ type: DataType.TEXT, allowNull: false, ...json<Permissoes>('permissoes') }) declare permissoes: Permissoes;
  /** seeded profiles (`Acesso inicial`) cannot be deleted: the master-listing sync hands them out */
  @Column({ type: DataType.BOOLEAN, allowNull: false, defaultValue: false }) declare sistema: boolean;
  @Column(MOMENTO) declare criado_em: Date;
  @Column(MOMENTO) declare atualizado_em: Date;
  @Column(MOMENTO) declare deletado_em: Date | null;
}
