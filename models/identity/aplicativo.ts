import { Column, DataType, Model, Table } from 'sequelize-typescript';
import { NomeDoServico } from '../../config/services';
import { MOMENTO, novoId, tabela } from '../shared/base';

/** An application: a client of the identity service with its own credentials (client credentials). */
@Table(tabela('aplicativo', { paranoid: true }))
export class Aplicativo extends Model {
  @Column({ type: DataType.CHAR(36), primaryKey: true, defaultValue: novoId }) declare id: string;
  @Column({ type: DataType.STRING(200), allowNull: false }) declare nome: string;
  @Column({ type: DataType.STRING(1000), allowNull: true }) declare descricao: string | null;
  /** SHA-256 of the client secret: secrets are 256-bit random, so a fast hash is enough */
  @Column({ type: DataType.CHAR(64), allowNull: false }) declare segredo_hash: string;
  @Column({ type: DataType.BOOLEAN, allowNull: false, defaultValue: true }) declare ativo: boolean;
  /** set for the suite's own services (hub, identity, ...), registered at start in LOCALHOST */
  @Column({ type: DataType.STRING(20), allowNull: true }) declare servico_da_suite: NomeDoServico | null;
  /** set when the secret is renewed: identity refuses the application's tokens issued before it (login.ts) */
  @Column({ type: DataType.DATE(3), allowNull: true }) declare tokens_validos_desde: Date | null;
  @Column(MOMENTO) declare criado_em: Date;
  @Column(MOMENTO) declare atualizado_em: Date;
  @Column(MOMENTO) declare deletado_em: Date | null;
}
