import { QueryInterface } from 'sequelize';

/** Table options of every service: InnoDB, full Unicode, case-insensitive comparison. */
export const TABELA = 'ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci';
/**
 * Names that must be unique (a sector's, an access profile's): utf8mb4_unicode_ci weighs every
 * character past Unicode's first plane (emoji) alike, so `Time 🚀` and `Time 🎯` were one name;
 * unicode_520 (MariaDB and MySQL 8 alike) tells them apart, still ignoring case and accents.
 */
export const NOMES_UNICOS = 'CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_520_ci';
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
 * The lower-case letters of Latin-1 that carry an accent, each with its plain letter: what
 * `semAcentos` folds (`ã` → `a`, `ç` → `c`, `ü` → `u`). The stored search columns built with it
 * (sales' `contato_busca`) keep what it folded when they were built: changing the list takes a
 * migration that builds them again.
 */
const LETRAS_ACENTUADAS = [...'àáâãäåçèéêëìíîïñòóôõöùúûüýÿ'].map((letra) => [letra, letra.normalize('NFD')[0]]);

/**
 * A SQL expression of `texto` (already in lower case) with its accented letters plain: a search
 * built on it finds `João` by `joao`. Nested REPLACEs, read alike by MariaDB and MySQL, usable in a
 * generated column; letters outside Latin-1 (`ő`, `ş`) keep their accent.
 */
export function semAcentos(texto: string): string {
  return LETRAS_ACENTUADAS.reduce((sql, [acentuada, simples]) => `REPLACE(${sql}, '${acentuada}', '${simples}')`, texto);
}

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

/**
 * A migration's `ALTER TABLE tabela ADD COLUMN coluna definicao`, skipped when the column is there:
 * run again after a stop midway, the migration goes on from where it was.
 */
export async function adicionarColuna(qi: QueryInterface, tabela: string, coluna: string, definicao: string): Promise<void> {
  if (!(await existeNoEsquema(qi, tabela, { coluna }))) await qi.sequelize.query(`ALTER TABLE ${tabela} ADD COLUMN ${coluna} ${definicao}`);
}
