/**
 * `Content-Disposition: attachment` for a stored name (RFC 6266): a plain-ASCII `filename` for old
 * clients and the exact name, UTF-8 percent-encoded, in `filename*` (RFC 8187, formerly 5987).
 * Path separators, control characters and bidirectional controls become `_` in both, so whatever
 * name a client gave, the browser saves one file in its download folder under a name that shows
 * its real extension; the stored name itself is left as given.
 */
export function disposicaoDeAnexo(nome: string): string {
  const seguro = nome
    // eslint-disable-next-line no-control-regex
    .replace(/[\u0000-\u001f\u007f-\u009f/\\]/g, '_')
    // bidirectional controls: `fatura\u202Efdp.exe` shows as `faturaexe.pdf` and saves as an .exe
    .replace(/[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g, '_')
    // a lone surrogate has no UTF-8 form
    .replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '_');
  // quoted-string without escapes: no `"` or `\`; no `%` either, which some agents would decode
  const ascii = seguro.replace(/[^\u0020-\u007e]|["%]/g, '_');
  return `attachment; filename="${ascii}"; filename*=UTF-8''${codificarRfc8187(seguro)}`;
}

/** Percent-encodes all but RFC 8187's attr-char (ALPHA DIGIT ! # $ & + - . ^ _ ` | ~). */
function codificarRfc8187(valor: string): string {
  return encodeURIComponent(valor).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}
