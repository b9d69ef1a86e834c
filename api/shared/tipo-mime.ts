/**
 * Media types as file storage keeps them (RFC 9110): its uploads are checked against this grammar,
 * and the sales copy sends the chat platform's Content-Type in a shape it takes.
 */

export const TIPO_MIME_PADRAO = 'application/octet-stream';

const TOKEN = "[!#$%&'*+.^_`|~0-9A-Za-z-]+";
/** `type/subtype` and optional `; name=value` parameters (value a token or a quoted string). */
const TIPO_MIME = new RegExp(`^${TOKEN}/${TOKEN}(\\s*;\\s*${TOKEN}=(${TOKEN}|"[^"\\\\\\u0000-\\u001f\\u007f]*"))*$`);

/** A Content-Type file storage keeps: the grammar above, up to 255 characters. */
export const ehTipoMime = (v: string) => v.length <= 255 && TIPO_MIME.test(v);
