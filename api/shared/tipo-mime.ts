/**
 * Media types as file storage keeps them (RFC 9110): its uploads are checked against this grammar,
 * and the sales copy sends the chat platform's Content-Type in a shape it takes.
 */

export const TIPO_MIME_PADRAO = 'application/octet-stream';
/** The longest Content-Type file storage keeps. */
export const TAMANHO_MAXIMO_DO_TIPO_MIME = 255;

const TOKEN = "[!#$%&'*+.^_`|~0-9A-Za-z-]+";
/** `type/subtype` and optional `; name=value` parameters (value a token or a quoted string). */
export const TIPO_MIME = new RegExp(`^${TOKEN}/${TOKEN}(\\s*;\\s*${TOKEN}=(${TOKEN}|"[^"\\\\\\u0000-\\u001f\\u007f]*"))*$`);
/** `type/subtype` alone: the essence of a media type. */
export const ESSENCIA_DO_TIPO_MIME = new RegExp(`^${TOKEN}/${TOKEN}$`);
