/** Table options of every service: InnoDB, full Unicode, case-insensitive comparison. */
export const TABELA = 'ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci';
/** Ids, codes and digits: ASCII, compared byte by byte. */
export const ASCII = 'CHARACTER SET ascii COLLATE ascii_bin';
