import http from 'node:http';
import https from 'node:https';
import { Readable } from 'node:stream';
import { config } from '../../config';
import { agentesDeSaida } from '../../lib/conexoes-de-saida';
import { guardaDeDestino } from '../../lib/destino-seguro';
import { ehTipoMime, TIPO_MIME_PADRAO } from '../shared/tipo-mime';

const REDIRECIONAMENTOS = 5;

/** Where the chat platform serves attachments (Rails Active Storage): the only paths of its origin downloaded. */
const CAMINHO_DOS_ANEXOS = '/rails/active_storage/';
/** The SSRF guard of downloads outside the chat platform's own origin: no private network passes. */
const guarda = guardaDeDestino();
/**
 * Guarded downloads keep their connections apart: an agent reuses an idle socket by host and port
 * alone, and the guard checks an address only when a socket is opened, so a guarded download
 * taking a socket the chat platform's own (unguarded) download left in the global pool would
 * reach that private address unchecked. Here every socket was opened through the guard.
 */
const agentesGuardados = agentesDeSaida();

export interface Download {
  /** the answer's Content-Type in a shape file storage takes (tipoParaGuardar) */
  tipoMime: string;
  /** the length the answer announced (content-length), when it did */
  tamanho: number | null;
  bytes: Readable;
}

export interface AcessoAoAnexo {
  /** the chat platform's address (origin and any path it is served under): the only one trusted with its token, reached even when private */
  enderecoDoSuporte: string | null;
  tokenApi: string | null;
  sinal: AbortSignal;
}

/**
 * The download's Content-Type as file storage will take it: whole when it parses, else its essence
 * (`type/subtype`, lower case), else application/octet-stream. Platforms and their storages send
 * values file storage refuses (`image/jpeg;`, a parameter without a value, a name with accents),
 * and a refused upload fails every attempt of the copy alike.
 */
export function tipoParaGuardar(valor: string | undefined): string {
  const v = valor?.trim();
  if (!v) return TIPO_MIME_PADRAO;
  if (ehTipoMime(v)) return v;
  // with no `;` left, the grammar takes `type/subtype` alone
  const essencia = v.split(';')[0].trim().toLowerCase();
  return ehTipoMime(essencia) ? essencia : TIPO_MIME_PADRAO;
}

/**
 * GET of an attachment from the address the chat platform gave. Redirects (its storage's signed
 * URLs) are followed here, at most 5. On the platform's own origin only its attachment paths
 * (/rails/active_storage/) are fetched, so a forged address cannot copy an API answer into file
 * storage; its API token goes there and only until the chain has left that origin once. Any other
 * host passes the SSRF guard (private addresses refused outside LOCALHOST unless
 * SALES_PERMITIR_DOWNLOADS_PRIVADOS). The answer's body is handed over as a stream.
 */
export function baixarAnexo(endereco: string, a: AcessoAoAnexo, saltos = 0, saiuDoSuporte = false): Promise<Download> {
  const url = new URL(endereco);
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return Promise.reject(new Error(`address ${url.protocol} is not http(s)`));
  const suporte = a.enderecoDoSuporte ? new URL(a.enderecoDoSuporte) : null;
  const doSuporte = suporte !== null && url.origin === suporte.origin;
  // encoded separators and dots survive URL parsing, and a proxy in front of the platform may
  // decode them into a path outside the attachments
  const anexos = `${suporte?.pathname.replace(/\/+$/, '') ?? ''}${CAMINHO_DOS_ANEXOS}`;
  if (doSuporte && (!url.pathname.startsWith(anexos) || /%(2f|5c|2e)/i.test(url.pathname))) {
    return Promise.reject(new Error(`only ${CAMINHO_DOS_ANEXOS} addresses of the chat platform are downloaded`));
  }
  const protegido = !doSuporte && !config().sales.permitirDownloadsPrivados;
  if (protegido && guarda.recusaLiteral(url)) return Promise.reject(new Error('attachment address on a private network refused'));
  // the bytes as stored: with no Accept-Encoding any coding is acceptable (RFC 9110 §12.5.3), and
  // gzip bytes were stored under the decoded type, their digest that of the compressed ones
  const headers: Record<string, string> = { 'user-agent': 'suite-sales', 'accept-encoding': 'identity' };
  if (doSuporte && !saiuDoSuporte && a.tokenApi) headers.api_access_token = a.tokenApi;
  return new Promise((resolve, reject) => {
    const guardado = protegido ? { lookup: guarda.lookupPara(url), agent: agentesGuardados[url.protocol as 'http:' | 'https:'] } : {};
    const req = (url.protocol === 'https:' ? https : http).get(url, { headers, signal: a.sinal, ...guardado }, (res) => {
      const status = res.statusCode ?? 0;
      // the body of a redirect or an error is not read: closed, not drained (a host may send no end)
      if (status >= 300 && status < 400 && res.headers.location) {
        res.destroy();
        if (saltos >= REDIRECIONAMENTOS) return reject(new Error(`more than ${REDIRECIONAMENTOS} redirects`));
        // a Location no URL can be made of fails this copy, not the process (this runs outside the promise's own try)
        const destino = URL.parse(res.headers.location, url.href);
        if (!destino) return reject(new Error('the attachment\'s address redirected to an invalid address'));
        return resolve(baixarAnexo(destino.toString(), a, saltos + 1, saiuDoSuporte || !doSuporte));
      }
      if (status < 200 || status >= 300) {
        res.destroy();
        return reject(new Error(`the attachment's address answered ${status}`));
      }
      const codificacao = res.headers['content-encoding']?.trim().toLowerCase();
      if (codificacao && codificacao !== 'identity') {
        res.destroy();
        return reject(new Error(`the attachment's address answered in content coding ${codificacao.slice(0, 50)}, not its bytes as they are`));
      }
      const comprimento = res.headers['content-length'];
      resolve({
        tipoMime: tipoParaGuardar(res.headers['content-type']),
        tamanho: comprimento && /^\d{1,15}$/.test(comprimento) ? Number(comprimento) : null,
        bytes: res,
      });
    });
    req.on('error', reject);
  });
}
