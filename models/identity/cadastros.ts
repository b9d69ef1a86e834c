import { Column, DataType, Model, Table } from 'sequelize-typescript';
import { MOMENTO, novoId, tabela } from '../shared/base';

/** Sectors, positions and functions share one shape: a unique name. */
abstract class Cadastro extends Model {
  @Column({ type: DataType.CHAR(36), primaryKey: true, defaultValue: novoId }) declare id: string;
  @Column({ type: DataType.STRING(200), allowNull: false }) declare nome: string;
  @Column(MOMENTO) declare criado_em: Date;
  @Column(MOMENTO) declare atualizado_em: Date;
}

@Table(tabela('setor'))
export class Setor extends Cadastro {}

@Table(tabela('cargo'))
export class Cargo extends Cadastro {}

@Table(tabela('funcao'))
export class Funcao extends Cadastro {}
