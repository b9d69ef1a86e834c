import { Readable } from 'node:stream';
import { config } from '../../config';
import { comCausa } from '../../lib/erros';
import { largarResposta } from '../../lib/resposta';
import { esquecerTokenDoServico, tokenDoServico } from '../shared/token-do-servico';

/**
 * The file storage service as the sales application uses it (SPEC 4.6 rule 7): attachment copies
 * are private files of the sales application, read and removed with its own application token.
 */

export interface ArquivoGuardado {
  id: string;
  tipo_mime: string;
  tamanho: number;
  url: string;
  /** the upload was answered with the file an earlier one stored under the same Idempotency-Key (`Idempotent-Replayed`) */
  repetido?: boolean;
}

/**
 * A failure of the suite's own side, not of the file sent: no token for the sales application
 * (identity refusing its credentials, failing or out of reach), or file storage out of reach,
 * failing (5xx), busy (429) or refusing the token (401, 403). An attachment's copy that meets one
 * spends no attempt (copiarAnexo). No credentials configured at all is no such failure: it is how
 * the suite was set up, not an outage that ends, and a copy waiting for it would wait for good.
 */
export class FalhaDoNossoLado extends Error {}

/**
 * File storage refused the file as larger than its limit (413): no attempt can ever store it, so
 * the copy stops at once instead of downloading it again (copiarAnexo). The message is file
 * storage's own, which names its limit.
 */
export class ArquivoGrandeDemais extends Error {}

/**
 * Causes of a call that never connected to file storage, so sent nothing. One cut once the bytes
 * flow is no such failure: file storage crashing in the middle of an upload looks the same.
 */
const SEM_CONEXAO = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_CONNECT_TIMEOUT']);

/**
 * The sales application's own token. Identity refusing its credentials (a secret renewed and not
 * yet set), failing or out of reach is a failure of our side; no credentials configured (outside
 * LOCALHOST, SALES_CLIENT_SECRET is optional) is an ordinary failure, which spends the copy's
 * attempts as before: nothing would end the wait for a setting nobody meant to give. In LOCALHOST
 * identity's start writes them, so missing there is ours: identity has not started yet.
 */
export async function tokenDaSales(): Promise<string> {
  const token = await tokenDoServico('sales').catch((err: Error) => {
    throw new FalhaDoNossoLado(`no token for the sales application: ${comCausa(err)}`, { cause: err });
  });
  if (!token) {
    const falta = 'the sales application has no credentials (SALES_CLIENT_ID / SALES_CLIENT_SECRET)';
    // in LOCALHOST identity's start writes them: missing, it has not started yet, which ends
    throw config().ambiente === 'LOCALHOST' ? new FalhaDoNossoLado(`${falta} yet: identity writes them as it starts`) : new Error(falta);
  }
  return token;
}

/** `sinal` stops the call before its time-out (a worker's shutdown); `token`, one asked for already. */
async function chamar(
  caminho: string,
  init: RequestInit & { duplex?: 'half' } = {},
  prazoMs = 10_000,
  sinal?: AbortSignal,
  token?: string,
): Promise<Response> {
  token ??= await tokenDaSales();
  const prazo = AbortSignal.timeout(prazoMs);
  const res = await fetch(`${config().servicos.files.url}${caminho}`, {
    ...init,
    headers: { ...(init.headers as Record<string, string>), authorization: `Bearer ${token}`, accept: 'application/json' },
    signal: sinal ? AbortSignal.any([prazo, sinal]) : prazo,
  }).catch((err: Error) => {
    const codigo = (err.cause as { code?: string } | undefined)?.code;
    throw codigo && SEM_CONEXAO.has(codigo) ? new FalhaDoNossoLado(`file storage out of reach: ${comCausa(err)}`, { cause: err }) : err;
  });
  // only the refused token: another copy may have asked for a newer one meanwhile
  if (res.status === 401) esquecerTokenDoServico('sales', token);
  return res;
}

/**
 * Streams the bytes to file storage as a new file of the sales application; `sinal` cuts the upload
 * short. `chave` (the attachment's) is its Idempotency-Key: an upload stored but whose answer was
 * lost is answered again, not stored twice, when the next attempt sends the same bytes. `token`
 * (tokenDaSales) is asked for by the caller before it opens the download the bytes come from.
 * `tamanho`, when the download announced it, goes as the Content-Length: file storage then refuses
 * a file past its limit from the headers, before reading a byte, by the limit it alone knows.
 */
export async function guardarArquivo(
  nome: string,
  tipoMime: string,
  bytes: Readable,
  { prazoMs, chave, sinal, token, tamanho }: { prazoMs: number; chave: string; sinal?: AbortSignal; token: string; tamanho?: number | null },
): Promise<ArquivoGuardado> {
  const res = await chamar(
    `/arquivo?nome=${encodeURIComponent(nome)}`,
    {
      method: 'POST',
      headers: { 'content-type': tipoMime, 'idempotency-key': chave, ...(tamanho != null && { 'content-length': String(tamanho) }) },
      body: Readable.toWeb(bytes) as ReadableStream,
      duplex: 'half',
    },
    prazoMs,
    sinal,
    token,
  );
  if (res.status === 201) return { ...((await res.json()) as ArquivoGuardado), repetido: res.headers.get('idempotent-replayed') === 'true' };
  const erro = `file storage answered ${res.status} to the upload`;
  if (res.status === 413) {
    // its problem's detail names the limit; the connection may be gone before the body is read
    const problema = (await res.json().catch(() => null)) as { detail?: unknown } | null;
    throw new ArquivoGrandeDemais(typeof problema?.detail === 'string' ? `${erro}: ${problema.detail}` : erro);
  }
  largarResposta(res);
  // other refusals (a name or type refused, a key used for other bytes) are the file's
  throw res.status >= 500 || [401, 403, 429].includes(res.status) ? new FalhaDoNossoLado(erro) : new Error(erro);
}

/** Fresh signed URLs (15 minutes) of the sales application's files, by id; a file not found is absent. */
export async function urlsDosArquivos(ids: string[]): Promise<Map<string, string>> {
  const urls = new Map<string, string>();
  const unicos = [...new Set(ids)];
  // the files service answers at most 100 ids per call
  for (let i = 0; i < unicos.length; i += 100) {
    const res = await chamar(`/arquivo/filtro?ids=${unicos.slice(i, i + 100).join(',')}`);
    if (!res.ok) {
      largarResposta(res);
      throw new Error(`file storage answered ${res.status} to GET /arquivo/filtro`);
    }
    for (const a of (await res.json()) as ArquivoGuardado[]) urls.set(a.id, a.url);
  }
  return urls;
}

/** The id of the sales application's file uploaded with Idempotency-Key `chave`, while file storage has it; else null. */
export async function arquivoDaChave(chave: string): Promise<string | null> {
  const res = await chamar(`/arquivo/filtro?chave=${encodeURIComponent(chave)}`);
  if (!res.ok) {
    largarResposta(res);
    throw new Error(`file storage answered ${res.status} to GET /arquivo/filtro?chave=`);
  }
  const [arquivo] = (await res.json()) as ArquivoGuardado[];
  return arquivo?.id ?? null;
}

/** Removes a file of the sales application; one already gone counts as removed. */
export async function apagarArquivo(id: string): Promise<void> {
  const res = await chamar(`/arquivo/${encodeURIComponent(id)}`, { method: 'DELETE' });
  // a 404's problem is not read
  largarResposta(res);
  if (res.status !== 204 && res.status !== 404) throw new Error(`file storage answered ${res.status} to DELETE /arquivo/{id}`);
}
