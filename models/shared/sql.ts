import { QueryInterface } from 'sequelize';

/** Table options of every service: InnoDB, full Unicode, case-insensitive comparison. */
export const TABELA = 'ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci';
/** Ids, codes and digits: ASCII, compared byte by byte. */
export const ASCII = 'CHARACTER SET ascii COLLATE ascii_bin';
/**
 * Ids (UUIDs, job ids) and fixed words (`situacao`): ASCII, compared as before without regard to
 * case, at a fraction of the cost of a Unicode collation in every index they are keys of. A value
 * compared with such a column must be ASCII itself (the database refuses the comparison otherwise):
 * ids reach queries only through the id pattern of the routes' schemas.
 */
export const ID_ASCII = 'CHARACTER SET ascii COLLATE ascii_general_ci';

/**
 * Whether a column (or, with `indice`, an index) of a table of this database exists: how a migration
 * of more than one statement finds, run again after a stop midway, what it already did (MySQL has no
 * `ADD COLUMN IF NOT EXISTS`).
 */
export async function existeNoEsquema(qi: QueryInterface, tabela: string, o: { coluna: string } | { indice: string }): Promise<boolean> {
  const [linhas] = await qi.sequelize.query(
    'coluna' in o
      ? 'SELECT 1 FROM information_schema.columns WHERE table_schema = DATABASE() AND table_name = ? AND column_name = ? LIMIT 1'
      : 'SELECT 1 FROM information_schema.statistics WHERE table_schema = DATABASE() AND table_name = ? AND index_name = ? LIMIT 1',
    { replacements: [tabela, 'coluna' in o ? o.coluna : o.indice] },
  );
  return (linhas as unknown[]).length > 0;
}
