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
