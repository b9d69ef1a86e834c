import { randomBytes } from 'node:crypto';
import { readdirSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { config } from '../../config';
import { Arquivo } from '../../models/files';
import { cliente, Resposta } from '../helpers/http';
import { identityDe } from '../helpers/identity';
import { SuiteDeTeste } from '../helpers/suite';

/**
 * Helpers of the file storage tests: raw-byte uploads as a client would send them (with a declared
 * length, or chunked without one), downloads read as bytes, and what the service left on its disk
 * and in its database, looked at directly.
 */

export interface Download extends Resposta {
  bytes: Buffer;
}

function comoResposta(status: number, headers: Headers, bytes: Buffer): Resposta {
  const text = bytes.toString('utf8');
  let body: any;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  return { status, headers, body, text };
}

export function filesDe(suite: SuiteDeTeste) {
  const base = suite.url.files;
  const identity = identityDe(suite.url.identity);
  const api = cliente(base);

  /** POST /arquivo with the bytes as the body (fetch declares Content-Length). */
  async function enviar(
    token: string | undefined,
    nome: string | undefined,
    bytes: Buffer | string,
    o: { tipo?: string; headers?: Record<string, string> } = {},
  ): Promise<Resposta> {
    const url = new URL(`${base}/arquivo`);
    if (nome !== undefined) url.searchParams.set('nome', nome);
    const headers: Record<string, string> = { accept: 'application/json', ...(o.headers ?? {}) };
    if (token) headers.authorization = `Bearer ${token}`;
    if (o.tipo) headers['content-type'] = o.tipo;
    const res = await fetch(url, { method: 'POST', headers, body: typeof bytes === 'string' ? Buffer.from(bytes) : bytes });
    return comoResposta(res.status, res.headers, Buffer.from(await res.arrayBuffer()));
  }

  /**
   * POST /arquivo in chunks with no Content-Length (Transfer-Encoding: chunked): the size is unknown
   * until the end. `intervaloMs`: a pause before each chunk after the first, as a slow link.
   */
  function enviarEmPedacos(token: string, nome: string, pedacos: Buffer[], tipo = 'application/octet-stream', intervaloMs = 0): Promise<Resposta> {
    const url = new URL(`${base}/arquivo`);
    url.searchParams.set('nome', nome);
    return new Promise((resolve, reject) => {
      let respondeu = false;
      const req = http.request(url, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': tipo } }, (res) => {
        respondeu = true;
        const partes: Buffer[] = [];
        res.on('data', (p: Buffer) => partes.push(p));
        res.on('end', () => {
          const headers = new Headers();
          for (const [k, v] of Object.entries(res.headers)) if (typeof v === 'string') headers.set(k, v);
          resolve(comoResposta(res.statusCode ?? 0, headers, Buffer.concat(partes)));
        });
        res.on('error', reject);
      });
      // the server may answer (413, 408) and close before the last chunk: the answer is what
      // counts; a connection it closed with no answer read is status 0
      req.on('error', () => setTimeout(() => respondeu || resolve(comoResposta(0, new Headers(), Buffer.alloc(0))), 500));
      void (async () => {
        for (const [i, p] of pedacos.entries()) {
          if (i && intervaloMs) await new Promise((r) => setTimeout(r, intervaloMs));
          if (req.destroyed) return;
          req.write(p);
        }
        req.end();
      })();
    });
  }

  /**
   * Starts a chunked upload, sends some bytes and then drops the connection, as a client that dies
   * midway: once `recebido` says the server holds them (it is awaited, so it may poll).
   */
  async function enviarEInterromper(token: string, nome: string, pedaco: Buffer, recebido: () => Promise<unknown>): Promise<void> {
    const url = new URL(`${base}/arquivo`);
    url.searchParams.set('nome', nome);
    const req = http.request(url, { method: 'POST', headers: { authorization: `Bearer ${token}` } });
    req.on('error', () => undefined);
    req.write(pedaco);
    try {
      await recebido();
    } finally {
      req.destroy();
    }
  }

  /** GET of a signed URL, no token. */
  async function baixar(url: string, metodo = 'GET'): Promise<Download> {
    const res = await fetch(url, { method: metodo, redirect: 'manual' });
    const bytes = Buffer.from(await res.arrayBuffer());
    return { ...comoResposta(res.status, res.headers, bytes), bytes };
  }

  /** An application of its own (identity) and its token. */
  async function novoAplicativo(): Promise<{ id: string; token: string }> {
    const app = await identity.criarAplicativo();
    return { id: app.id, token: app.token };
  }

  return { api, base, identity, enviar, enviarEmPedacos, enviarEInterromper, baixar, novoAplicativo };
}

/** Every file under the storage folder (sub-folders included), as paths relative to it. */
export function arquivosNoDisco(): string[] {
  const raiz = path.resolve(config().files.diretorio);
  const lista: string[] = [];
  const visitar = (dir: string) => {
    let entradas;
    try {
      entradas = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entradas) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) visitar(p);
      else lista.push(path.relative(raiz, p));
    }
  };
  visitar(raiz);
  return lista.sort();
}

/** Where the local storage keeps a file's bytes: `<dir>/<last two characters>/<id>`. */
export const caminhoNoDisco = (id: string) => path.join(id.slice(-2), id);

export const linhasNoBanco = () => Arquivo.count();

/** Unique bytes for each call (a test that finds them finds its own). */
export const bytesAleatorios = (n: number): Buffer => randomBytes(n);
