import { col, Op, where, WhereOptions } from 'sequelize';
import { BelongsTo, Column, DataType, HasMany, Model, Table } from 'sequelize-typescript';
import { json, MOMENTO, novoId, tabela } from '../shared/base';
import { Aplicativo } from './aplicativo';

export type SituacaoDaVersao = 'ativa' | 'depreciada' | 'desligada';

/** An event type (`colaborador.criado`), owned by the application that publishes it (DESIGN §5). */
@Table(tabela('tipo_de_evento', { paranoid: true }))
export class TipoDeEvento extends Model {
  @Column({ type: DataType.CHAR(36), primaryKey: true, defaultValue: novoId }) declare id: string;
  @Column({ type: DataType.STRING(150), allowNull: false }) declare nome: string;
  @Column({ type: DataType.STRING(1000), allowNull: true }) declare descricao: string | null;
  @Column({ type: DataType.CHAR(36), allowNull: false }) declare aplicativo_id: string;
  @Column(MOMENTO) declare criado_em: Date;
  @Column(MOMENTO) declare atualizado_em: Date;
  @Column(MOMENTO) declare deletado_em: Date | null;

  @BelongsTo(() => Aplicativo, { foreignKey: 'aplicativo_id', constraints: false }) declare aplicativo?: Aplicativo;
  @HasMany(() => VersaoDeEvento, { foreignKey: 'tipo_de_evento_id', constraints: false }) declare versoes?: VersaoDeEvento[];
}

/**
 * The live types named `nome` (one, or any of a list), through the unique key of live names: `nome`
 * itself has no index, and a lookup by it read every type, the deleted ones too (on every cache
 * miss of a publication, at every application sync).
 */
export const comONome = (nome: string | string[]): WhereOptions => where(col('nome_unico'), Array.isArray(nome) ? { [Op.in]: nome } : nome);

/** A schema version of a type: `dados` of its events must match `esquema` (a JSON Schema). */
@Table({ tableName: 'versao_de_evento', underscored: true, timestamps: true, createdAt: 'criada_em', updatedAt: 'atualizada_em' })
export class VersaoDeEvento extends Model {
  @Column({ type: DataType.CHAR(36), primaryKey: true }) declare tipo_de_evento_id: string;
  @Column({ type: DataType.INTEGER, primaryKey: true }) declare versao: number;
  @Column({ type: DataType.TEXT('long'), allowNull: false, ...json<Record<string, unknown>>('esquema') })
  declare esquema: Record<string, unknown>;
  @Column({ type: DataType.STRING(20), allowNull: false, defaultValue: 'ativa' }) declare situacao: SituacaoDaVersao;
  @Column(MOMENTO) declare criada_em: Date;
  @Column(MOMENTO) declare atualizada_em: Date;
}

/** identity publishes these by name (DESIGN §10): renaming or deleting one would lose its events */
export const TIPOS_DO_IDENTITY = ['colaborador.criado', 'colaborador.atualizado', 'colaborador.removido'];
