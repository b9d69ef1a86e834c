import IORedis from 'ioredis';
import { createConnection } from 'mysql2/promise';

/** What every benchmark needs: its knobs, setup calls over HTTP, and leaving nothing behind. */

export const MYSQL_URL = process.env.MYSQL_URL ?? 'mysql://root@127.0.0.1:3306';
export const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

export function inteiro(nome: string, padrao: number): number {
  const v = process.env[nome];
  if (v === undefined || v === '') return padrao;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0) throw new Error(`${nome} must be a non-negative integer, got "${v}"`);
  return n;
}

export type Opcoes = { token?: string; body?: unknown };

export async function chamar(base: string, metodo: string, caminho: string, o: Opcoes = {}) {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (o.token) headers.authorization = `Bearer ${o.token}`;
  if (o.body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(base + caminho, {
    method: metodo,
    headers,
    body: o.body === undefined ? undefined : JSON.stringify(o.body),
    signal: AbortSignal.timeout(60_000),
  });
  const text = await res.text();
  let body: any;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  return { status: res.status, body, text };
}

export async function esperar(base: string, metodo: string, caminho: string, status: number, o: Opcoes = {}) {
  const r = await chamar(base, metodo, caminho, o);
  if (r.status !== status) throw new Error(`${metodo} ${caminho}: expected ${status}, got ${r.status} ${r.text.slice(0, 500)}`);
  return r.body;
}

/** Drops `<prefix>_<service>` of each service and the Redis keys `<prefix>*` (as test/helpers/suite.ts). */
export async function limparDados(prefixo: string, servicos: string[]): Promise<void> {
  const u = new URL(MYSQL_URL);
  const conexao = await createConnection({
    host: u.hostname,
    port: Number(u.port || 3306),
    user: decodeURIComponent(u.username || 'root'),
    password: decodeURIComponent(u.password),
  });
  try {
    for (const servico of servicos) await conexao.query(`DROP DATABASE IF EXISTS \`${prefixo}_${servico}\``);
  } finally {
    await conexao.end();
  }
  const r = new IORedis(REDIS_URL, { maxRetriesPerRequest: 2 });
  try {
    let cursor = '0';
    do {
      const [proximo, chaves] = await r.scan(cursor, 'MATCH', `${prefixo}*`, 'COUNT', 1000);
      cursor = proximo;
      if (chaves.length) await r.del(...chaves);
    } while (cursor !== '0');
  } finally {
    r.disconnect();
  }
}
