import { Readable } from 'node:stream';
import { config } from '../../config';
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
}

/** `sinal` stops the call before its time-out (a worker's shutdown). */
async function chamar(caminho: string, init: RequestInit & { duplex?: 'half' } = {}, prazoMs = 10_000, sinal?: AbortSignal): Promise<Response> {
  const token = await tokenDoServico('sales');
  if (!token) throw new Error('the sales application has no credentials (SALES_CLIENT_ID / SALES_CLIENT_SECRET)');
  const prazo = AbortSignal.timeout(prazoMs);
  const res = await fetch(`${config().servicos.files.url}${caminho}`, {
    ...init,
    headers: { ...(init.headers as Record<string, string>), authorization: `Bearer ${token}`, accept: 'application/json' },
    signal: sinal ? AbortSignal.any([prazo, sinal]) : prazo,
  });
  if (res.status === 401) esquecerTokenDoServico('sales');
  return res;
}

/**
 * Streams the bytes to file storage as a new file of the sales application; `sinal` cuts the upload
 * short. `chave` (the attachment's) is its Idempotency-Key: an upload stored but whose answer was
 * lost is answered again, not stored twice, when the next attempt sends the same bytes.
 */
export async function guardarArquivo(
  nome: string,
  tipoMime: string,
  bytes: Readable,
  { prazoMs, chave, sinal }: { prazoMs: number; chave: string; sinal?: AbortSignal },
): Promise<ArquivoGuardado> {
  const res = await chamar(
    `/arquivo?nome=${encodeURIComponent(nome)}`,
    {
      method: 'POST',
      headers: { 'content-type': tipoMime, 'idempotency-key': chave },
      body: Readable.toWeb(bytes) as ReadableStream,
      duplex: 'half',
    },
    prazoMs,
    sinal,
  );
  if (res.status !== 201) throw new Error(`file storage answered ${res.status} to the upload`);
  return (await res.json()) as ArquivoGuardado;
}

/** Fresh signed URLs (15 minutes) of the sales application's files, by id; a file not found is absent. */
export async function urlsDosArquivos(ids: string[]): Promise<Map<string, string>> {
  const urls = new Map<string, string>();
  const unicos = [...new Set(ids)];
  // the files service answers at most 100 ids per call
  for (let i = 0; i < unicos.length; i += 100) {
    const res = await chamar(`/arquivo/filtro?ids=${unicos.slice(i, i + 100).join(',')}`);
    if (!res.ok) throw new Error(`file storage answered ${res.status} to GET /arquivo/filtro`);
    for (const a of (await res.json()) as ArquivoGuardado[]) urls.set(a.id, a.url);
  }
  return urls;
}

/** Removes a file of the sales application; one already gone counts as removed. */
export async function apagarArquivo(id: string): Promise<void> {
  const res = await chamar(`/arquivo/${encodeURIComponent(id)}`, { method: 'DELETE' });
  if (res.status !== 204 && res.status !== 404) throw new Error(`file storage answered ${res.status} to DELETE /arquivo/{id}`);
}
