import { Column, DataType, Model } from 'sequelize-typescript';
import { MOMENTO } from './base';

/**
 * LOCALHOST only: a key a service generates on first start and keeps in its own database, so that
 * every process of it uses the same (lib/segredo-local.ts); elsewhere the key comes from the
 * environment. Each service declares its table class extending this one (models/<service>/).
 */
export abstract class SegredoBase extends Model {
  @Column({ type: DataType.STRING(64), primaryKey: true }) declare nome: string;
  @Column({ type: DataType.STRING(200), allowNull: false }) declare valor: string;
  @Column(MOMENTO) declare criado_em: Date;
}

/** Options of such a table's class: written once, never updated. */
export const tabelaDeSegredo = (nome: string) => ({ tableName: nome, underscored: true, timestamps: true, createdAt: 'criado_em', updatedAt: false as const });
