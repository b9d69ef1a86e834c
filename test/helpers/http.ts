import http from 'node:http';
export interface Resposta<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface Opcoes {
  token?: string;
  body?: unknown;
  raw?: string;
  query?: Record<string, string | number | boolean | undefined>;
  headers?: Record<string, string>;
}

/** One HTTP call to a service started by the test, JSON in and out. */
export async function chamar<T = any>(base: string, metodo: string, caminho: string, o: Opcoes = {}): Promise<Resposta<T>> {
  const url = new URL(base + caminho);
  for (const [k, v] of Object.entries(o.query ?? {})) if (v !== undefined) url.searchParams.set(k, String(v));
  const headers: Record<string, string> = { accept: 'application/json', ...(o.headers ?? {}) };
  if (o.token) headers.authorization = `Bearer ${o.token}`;
  let corpo: string | undefined;
  if (o.raw !== undefined) {
    corpo = o.raw;
    headers['content-type'] ??= 'application/json';
  } else if (o.body !== undefined) {
    corpo = JSON.stringify(o.body);
    headers['content-type'] = 'application/json';
  }
  const res = await fetch(url, { method: metodo, headers, body: corpo, redirect: 'manual' });
  const text = await res.text();
  let body: any;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  return { status: res.status, headers: res.headers, body, text };
}

export function cliente(base: string) {
  return {
    get: (c: string, o?: Opcoes) => chamar(base, 'GET', c, o),
    post: (c: string, o?: Opcoes) => chamar(base, 'POST', c, o),
    patch: (c: string, o?: Opcoes) => chamar(base, 'PATCH', c, o),
    del: (c: string, o?: Opcoes) => chamar(base, 'DELETE', c, o),
  };
}

/** RFC 9457 shape of DESIGN §4; returns the problem for further checks. */
export function esperarProblema(res: Resposta, status: number) {
  expect({ status: res.status, corpo: res.body }).toEqual({ status, corpo: expect.anything() });
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(res.body).toEqual(
    expect.objectContaining({ type: expect.any(String), title: expect.any(String), status, detail: expect.any(String), code: expect.any(String) }),
  );
  expect(res.text).not.toMatch(/Sequelize|ER_[A-Z_]{3,}|node_modules|\bat .*\.(ts|js):\d+/);
  return res.body;
}

/**
 * A local HTTP server standing in for another service: each request's body is read whole, as
 * text, then handed to `responder` with the request and the response to write.
 */
export function servidorQueLeOCorpo(responder: (bruto: string, req: http.IncomingMessage, res: http.ServerResponse) => void): http.Server {
  return http.createServer((req, res) => {
    let bruto = '';
    req.setEncoding('utf8');
    req.on('data', (parte) => (bruto += parte));
    req.on('end', () => responder(bruto, req, res));
  });
}

/**
 * A POST to `url` sent with `Expect: 100-continue` (as curl sends bodies past 1 MiB), declaring
 * `tamanho` bytes (the body's, by default): whether the server said 100 (the body is then sent),
 * the status, and the answer's Content-Type.
 */
export function postComExpectativa(
  url: URL,
  corpo: Buffer | string,
  o: { headers?: Record<string, string>; tamanho?: number; expect?: string } = {},
): Promise<{ continuou: boolean; status: number; tipo?: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, {
      method: 'POST',
      agent: false,
      headers: { ...o.headers, 'content-length': String(o.tamanho ?? Buffer.byteLength(corpo)), expect: o.expect ?? '100-continue' },
    });
    let continuou = false;
    req.on('continue', () => {
      continuou = true;
      req.end(corpo);
    });
    req.on('response', (res) => {
      res.resume();
      res.on('end', () => resolve({ continuou, status: res.statusCode!, tipo: res.headers['content-type'] }));
    });
    req.on('error', reject);
    req.flushHeaders();
  });
}
