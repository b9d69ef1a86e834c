import http from 'node:http';
import { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import express from 'express';
import pino from 'pino';
import { config, ConfigError } from '../../config';
import { appDoDashboard, autenticacaoBasica, FALHAS_NO_DASHBOARD } from '../../dashboards/bull-board';
import { FILAS } from '../../queues';
import { fila, opcoesDosJobsDe } from '../../queues/fila';
import { filaHubEntrega } from '../../queues/hub-entrega';
import { filaSalesAnexo } from '../../queues/sales-anexo';
import { encerrar } from '../../lib/lifecycle';
import { iniciarDashboard, iniciarTudo } from '../../lib/runner';
import * as registroDaSuite from '../../lib/logger';
import * as redisDaSuite from '../../lib/redis';
import { limparDados } from '../helpers/suite';

/** The dashboard's HTTP Basic check (required outside LOCALHOST, DASHBOARD_USUARIO/DASHBOARD_SENHA). */

let servidor: http.Server;
let url: string;

beforeAll(async () => {
  const app = express();
  app.use(autenticacaoBasica('operador', 'senha:com:dois-pontos'));
  app.get('/', (_req, res) => void res.send('filas'));
  servidor = app.listen(0, '127.0.0.1');
  await new Promise((r) => servidor.once('listening', r));
  url = `http://127.0.0.1:${(servidor.address() as AddressInfo).port}/`;
});
afterAll(async () => {
  await new Promise((r) => servidor.close(r));
  // the Redis connections a test below opened, then the keys its queues wrote (their `meta`)
  await encerrar();
  await limparDados([]);
});

const basico = (credenciais: string) => ({ authorization: `Basic ${Buffer.from(credenciais).toString('base64')}` });

test('the right user and password pass, a password with colons included (RFC 7617)', async () => {
  const res = await fetch(url, { headers: basico('operador:senha:com:dois-pontos') });
  expect(res.status).toBe(200);
  expect(await res.text()).toBe('filas');
});

test('the scheme is named in any case, with any spaces before the value (RFC 9110 §11.1)', async () => {
  const valor = Buffer.from('operador:senha:com:dois-pontos').toString('base64');
  for (const authorization of [`basic ${valor}`, `BASIC   ${valor}`]) {
    expect((await fetch(url, { headers: { authorization } })).status).toBe(200);
  }
});

test('anything else is 401 with a Basic challenge: wrong or partial password, wrong user, no colon, another scheme, nothing', async () => {
  const casos: (Record<string, string> | undefined)[] = [
    basico('operador:senha'),
    basico('operador:senha:com:dois-pontos:'),
    basico('outro:senha:com:dois-pontos'),
    basico('operador'),
    { authorization: 'Bearer operador:senha:com:dois-pontos' },
    undefined,
  ];
  for (const headers of casos) {
    const res = await fetch(url, { headers });
    expect({ status: res.status, desafio: res.headers.get('www-authenticate') }).toEqual({ status: 401, desafio: 'Basic realm="filas"' });
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(await res.json()).toMatchObject({ status: 401, code: 'nao_autenticado' });
  }
});

test('past 10 wrong pairs from one address, even the right one gets 429 with Retry-After; requests without credentials do not count', async () => {
  await redisDaSuite.esperarRedis();
  const redisDaSuiteProdutor = redisDaSuite.redis('produtor');
  const apagarContagem = async () => {
    const chaves = await redisDaSuiteProdutor.keys(`${config().queuePrefix}:limite:dashboard-falhas*`);
    if (chaves.length) await redisDaSuiteProdutor.del(...chaves);
  };
  await apagarContagem();
  try {
    for (let i = 0; i < 15; i++) expect((await fetch(url)).status).toBe(401);
    for (let i = 0; i < FALHAS_NO_DASHBOARD; i++) expect((await fetch(url, { headers: basico('operador:chute') })).status).toBe(401);
    const bloqueada = await fetch(url, { headers: basico('operador:senha:com:dois-pontos') });
    expect(bloqueada.status).toBe(429);
    expect(Number(bloqueada.headers.get('retry-after'))).toBeGreaterThan(800);
    expect(await bloqueada.json()).toMatchObject({ status: 429, code: 'limite_excedido' });
    // sent side by side on connections already open, so they arrive together: the right pair
    // behind two hundred wrong ones is not checked either
    await apagarContagem();
    const agente = new http.Agent({ keepAlive: true, maxSockets: 201 });
    const pedir = (headers: Record<string, string> = {}) =>
      new Promise<number>((resolve, reject) => {
        http.get(url, { agent: agente, headers }, (res) => (res.resume(), resolve(res.statusCode!))).on('error', reject);
      });
    let status: number[];
    try {
      // the connections opened first, by requests without credentials (not counted)
      await Promise.all(Array.from({ length: 201 }, () => pedir()));
      status = await Promise.all([...Array.from({ length: 200 }, () => pedir(basico('operador:chute'))), pedir(basico('operador:senha:com:dois-pontos'))]);
    } finally {
      agente.destroy();
    }
    expect(status.filter((st) => st === 401)).toHaveLength(FALHAS_NO_DASHBOARD);
    expect(status[status.length - 1]).toBe(429);
  } finally {
    await apagarContagem();
  }
  expect((await fetch(url, { headers: basico('operador:senha:com:dois-pontos') })).status).toBe(200);
});

/**
 * A request to the dashboard with the Host header a browser would send for `host` (fetch sets its
 * own): its status, headers and body.
 */
function pedirComHost(porta: number, host: string, caminho = '/api/queues'): Promise<{ status: number; cabecalhos: http.IncomingHttpHeaders; corpo: string }> {
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port: porta, path: caminho, headers: { host } }, (res) => {
        let corpo = '';
        res.on('data', (p) => (corpo += p));
        res.on('end', () => resolve({ status: res.statusCode!, cabecalhos: res.headers, corpo }));
      })
      .on('error', reject);
  });
}

/** The dashboard as `suite start` serves it in LOCALHOST (no credentials), on a free port, for `fn`. */
async function comPainelAberto(fn: (porta: number) => Promise<void>): Promise<void> {
  const servidorDoPainel = appDoDashboard().listen(0, '127.0.0.1');
  await new Promise((r) => servidorDoPainel.once('listening', r));
  try {
    await fn((servidorDoPainel.address() as AddressInfo).port);
  } finally {
    await new Promise((r) => servidorDoPainel.close(r));
  }
}

test('without credentials (LOCALHOST) the dashboard answers only requests addressed to this machine by name: no DNS rebinding', () =>
  comPainelAberto(async (porta) => {
    for (const host of [`localhost:${porta}`, 'localhost', `painel.localhost:${porta}`, `127.0.0.1:${porta}`, `[::1]:${porta}`]) {
      expect({ host, status: (await pedirComHost(porta, host)).status }).toEqual({ host, status: 200 });
    }
    for (const host of [`ataque.example:${porta}`, 'localhost.ataque.example', `127.0.0.1.nip.io:${porta}`, `192.168.0.10:${porta}`]) {
      expect({ host, status: (await pedirComHost(porta, host)).status }).toEqual({ host, status: 403 });
    }
  }));

test('what Bull Board does not answer is answered as the services answer: problem+json, no stack; so is the refusal of a host', () =>
  comPainelAberto(async (porta) => {
    for (const [caminho, host, status] of [
      ['/nada/aqui', 'localhost', 404],
      ['/queue/%E0%A4%A', 'localhost', 400],
      ['/', 'ataque.example', 403],
    ] as const) {
      const { status: recebido, cabecalhos, corpo } = await pedirComHost(porta, host, caminho);
      expect({ caminho, status: recebido, tipo: cabecalhos['content-type'] }).toEqual({ caminho, status, tipo: expect.stringMatching(/^application\/problem\+json/) });
      expect(JSON.parse(corpo)).toMatchObject({ status });
      expect(corpo).not.toMatch(/\bat .*\.[jt]s:\d+|<html/i);
    }
  }));

test("the board never renders inside another site's frame (clickjacking its buttons): every answer says so, a refusal too", () =>
  comPainelAberto(async (porta) => {
    for (const [host, status] of [[`localhost:${porta}`, 200], [`ataque.example:${porta}`, 403]] as const) {
      const res = await pedirComHost(porta, host, '/');
      expect({ host, status: res.status, quadro: res.cabecalhos['x-frame-options'], csp: res.cabecalhos['content-security-policy'] }).toEqual({
        host,
        status,
        quadro: 'DENY',
        csp: "frame-ancestors 'none'",
      });
    }
  }));

/** A request to the open dashboard with its own method, headers and body: its status and body. */
function pedir(porta: number, metodo: string, caminho: string, cabecalhos: Record<string, string>, corpo = ''): Promise<{ status: number; corpo: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port: porta, method: metodo, path: caminho, headers: { host: `localhost:${porta}`, ...cabecalhos } }, (res) => {
      let recebido = '';
      res.on('data', (p) => (recebido += p));
      res.on('end', () => resolve({ status: res.statusCode!, corpo: recebido }));
    });
    req.on('error', reject);
    req.end(corpo);
  });
}

test("a change on the board from another site's page (a form post or a no-cors fetch carrying the browser's credentials) is refused: only the board's own page, or a client naming no origin, changes anything", () =>
  comPainelAberto(async (porta) => {
    const nomeDaFila = FILAS[0].nome;
    const antes = await fila(FILAS[0], 'painel').count();
    const adicionar = `/api/queues/${encodeURIComponent(nomeDaFila)}/add`;
    const json = { 'content-type': 'application/json' };
    // what a hostile page can send without the browser asking first: refused, nothing added
    for (const [cabecalhos, status] of [
      [{ origin: 'https://ataque.example', 'content-type': 'text/plain' }, 403],
      [{ origin: 'https://ataque.example', 'sec-fetch-site': 'cross-site', 'content-type': 'application/x-www-form-urlencoded' }, 403],
      [{ 'sec-fetch-site': 'same-site', ...json }, 403],
      [{ origin: 'null', ...json }, 403],
      // the board's own origin, but not JSON: no page of the board sends that
      [{ origin: `http://localhost:${porta}`, 'sec-fetch-site': 'same-origin', 'content-type': 'text/plain' }, 415],
    ] as const) {
      const res = await pedir(porta, 'POST', adicionar, cabecalhos, '{"name":"forjado"}');
      expect({ cabecalhos, status: res.status }).toEqual({ cabecalhos, status });
    }
    expect(await fila(FILAS[0], 'painel').count()).toBe(antes);
    // a PUT from another origin is refused as well (a browser would ask first, and be told no)
    expect((await pedir(porta, 'PUT', `/api/queues/${encodeURIComponent(nomeDaFila)}/pause`, { origin: 'https://ataque.example' })).status).toBe(403);
    // the board's own page (behind a proxy that gives it its own Host too: the browser's Sec-Fetch-Site
    // decides), and a client naming no origin, reach Bull Board (here: a queue it does not have)
    for (const cabecalhos of [
      { origin: `http://localhost:${porta}`, 'sec-fetch-site': 'same-origin', ...json },
      { origin: 'https://filas.empresa.example', 'sec-fetch-site': 'same-origin', ...json },
      { origin: `http://localhost:${porta}`, ...json },
      json,
    ]) {
      const res = await pedir(porta, 'POST', '/api/queues/fila-que-nao-existe/add', cabecalhos, '{"name":"x","data":{}}');
      expect({ cabecalhos, status: res.status }).toEqual({ cabecalhos, status: 404 });
    }
    // reads need no origin check
    expect((await pedir(porta, 'GET', '/api/queues', { origin: 'https://ataque.example', 'sec-fetch-site': 'cross-site' })).status).toBe(200);
  }));

test('outside LOCALHOST without its credentials, `suite start` and `suite dashboard` stop before opening anything, with a configuration error', async () => {
  const c = config();
  const antes = { ambiente: c.ambiente, dashboard: { ...c.dashboard } };
  Object.assign(c, { ambiente: 'PRODUCTION', dashboard: { porta: c.dashboard.porta } });
  const espera = jest.spyOn(redisDaSuite, 'esperarRedis');
  try {
    await expect(iniciarTudo()).rejects.toThrow(ConfigError);
    await expect(iniciarDashboard()).rejects.toThrow('DASHBOARD_USUARIO and DASHBOARD_SENHA are required outside LOCALHOST');
    expect(espera).not.toHaveBeenCalled();
  } finally {
    espera.mockRestore();
    Object.assign(c, antes);
  }
});

test("the dashboard's queues keep each queue's job defaults, on a connection without the producers' command deadline (a bulk action may take Redis longer)", async () => {
  const app = appDoDashboard();
  const servidorDoPainel = app.listen(0, '127.0.0.1');
  await new Promise((r) => servidorDoPainel.once('listening', r));
  try {
    const base = `http://127.0.0.1:${(servidorDoPainel.address() as AddressInfo).port}`;
    for (const def of [filaHubEntrega, filaSalesAnexo]) {
      const res = await fetch(`${base}/api/queues/${def.nome}/default-job-options`);
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual(JSON.parse(JSON.stringify(opcoesDosJobsDe(def))));
      const conexao = await fila(def, 'painel').getBackend().connection.client;
      expect(conexao.options.commandTimeout).toBeUndefined();
    }
    expect((await fila(filaHubEntrega).getBackend().connection.client).options.commandTimeout).toBe(redisDaSuite.PRAZO_DO_COMANDO_MS);
  } finally {
    await new Promise((r) => servidorDoPainel.close(r));
  }
});

test("every request to the board leaves an access line, as the services' do: a read and a refusal alike, no query string", async () => {
  const linhas: Record<string, unknown>[] = [];
  const registro = pino({ level: 'info' }, new Writable({ write: (pedaco, _c, pronto) => (linhas.push(JSON.parse(String(pedaco))), pronto()) }));
  const espiao = jest.spyOn(registroDaSuite, 'logger').mockImplementation((componente) => registro.child({ componente }));
  try {
    await comPainelAberto(async (porta) => {
      expect((await pedirComHost(porta, `localhost:${porta}`, `/api/queues/${filaHubEntrega.nome}/default-job-options?x=1`)).status).toBe(200);
      expect((await pedirComHost(porta, `ataque.example:${porta}`, '/')).status).toBe(403);
    });
  } finally {
    espiao.mockRestore();
  }
  const acessos = linhas.filter((l) => l.msg === 'requisição').map(({ componente, servico, metodo, rota, status }) => ({ componente, servico, metodo, rota, status }));
  expect(acessos).toEqual([
    { componente: 'http', servico: 'dashboard', metodo: 'GET', rota: `/api/queues/${filaHubEntrega.nome}/default-job-options`, status: 200 },
    { componente: 'http', servico: 'dashboard', metodo: 'GET', rota: '/', status: 403 },
  ]);
});
