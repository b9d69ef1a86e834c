import { DataType, TableOptions } from 'sequelize-typescript';
import { v7 as uuidv7 } from 'uuid';

/** Ids are time-ordered UUIDs (v7): sortable, no coordination (DESIGN §4). */
export const novoId = (): string => uuidv7();

/** Tables of the suite: snake_case, timestamps named in the spec's words. */
export function tabela(nome: string, opcoes: { paranoid?: boolean } = {}): TableOptions {
  return {
    tableName: nome,
    underscored: true,
    timestamps: true,
    createdAt: 'criado_em',
    updatedAt: 'atualizado_em',
    deletedAt: opcoes.paranoid ? 'deletado_em' : false,
    paranoid: opcoes.paranoid ?? false,
  };
}

/**
 * Timestamp columns are DATETIME(3), but sequelize writes a plain DATE without its milliseconds:
 * declared with this type, a record reads back the same instant its create or update answered.
 */
export const MOMENTO = { type: DataType.DATE(3) };

/** RFC 3339 UTC with milliseconds, or null. */
export const iso = (d: Date | null | undefined): string | null => (d ? new Date(d).toISOString() : null);

/** A JSON document kept in a TEXT column (MariaDB has no native JSON type). */
export function json<T>(campo: string) {
  return {
    get(this: { getDataValue(k: string): unknown }): T {
      const bruto = this.getDataValue(campo);
      return (typeof bruto === 'string' ? JSON.parse(bruto) : bruto) as T;
    },
    set(this: { setDataValue(k: string, v: unknown): void }, valor: T) {
      this.setDataValue(campo, JSON.stringify(valor));
    },
  };
}
