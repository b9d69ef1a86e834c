/**
 * Media types as file storage keeps them (RFC 9110): its uploads are checked against this grammar,
 * and the sales copy sends the chat platform's Content-Type in a shape it takes.
 */

export const TIPO_MIME_PADRAO = 'application/octet-stream';

const TOKEN = "[!#$%&'*+.^_`|~0-9A-Za-z-]+";
/** A `; name=value` parameter (value a token or a quoted string), its name and value captured. */
const PARAMETRO = `;\\s*(${TOKEN})=(${TOKEN}|"[^"\\\\\\u0000-\\u001f\\u007f]*")`;
/** `type/subtype` and optional parameters. */
const TIPO_MIME = new RegExp(`^${TOKEN}/${TOKEN}(\\s*${PARAMETRO})*$`);
/** Each parameter of a Content-Type the grammar took (matchAll works on a copy). */
const PARAMETROS = new RegExp(PARAMETRO, 'g');

/** A Content-Type file storage keeps: the grammar above, up to 255 characters. */
export const ehTipoMime = (v: string) => v.length <= 255 && TIPO_MIME.test(v);


/**
 * Whether two Content-Types of the grammar above say the same (RFC 9110 §8.3.1, §5.6.6): type,
 * subtype and parameter names in any case, spaces around `;` as they come, a value quoted or not,
 * and a charset's value in any case (§8.3.2). Other parameters' values keep their case.
 */
export function mesmoTipoMime(a: string, b: string): boolean {
  return formaCanonica(a) === formaCanonica(b);
}

function formaCanonica(tipo: string): string {
  const essencia = tipo.split(';', 1)[0];
  const parametros = [...tipo.slice(essencia.length).matchAll(PARAMETROS)].map(([, nome, valor]) => {
    const n = nome.toLowerCase();
    const v = valor.startsWith('"') ? valor.slice(1, -1) : valor;
    return `${n}=${n === 'charset' ? v.toLowerCase() : v}`;
  });
  return [essencia.trim().toLowerCase(), ...parametros].join(';');
}
