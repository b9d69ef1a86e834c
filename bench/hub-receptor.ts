/**
 * The subscriber of the hub benchmarks (bench/hub-comum.ts spawns it; never part of `npm test`):
 * a bare node:http server on 127.0.0.1 that takes the hub's deliveries, in its own process so its
 * work is neither the hub's nor the load generator's.
 *
 * BENCH_RECEPTOR_MODO:
 *   - `ok` (default): answers 200 to every call;
 *   - `metade`: answers 500 to every other call (a counter over all calls: exactly half fail,
 *     whichever delivery they belong to), 200 to the rest.
 *
 * For every call it keeps, per webhook-id, how many calls were answered 2xx and how many failed;
 * for every 2xx call the latency receipt time - `criado_em` of the delivery body (the event's
 * acceptance by the hub). The parent asks over IPC:
 *   {pedido, cmd: 'estado'}    counts (calls, 2xx, failures, distinct ids, ids with a success,
 *                               ids answered 2xx more than once, first/last 2xx receipt times)
 *   {pedido, cmd: 'latencias'} p50/p90/p99/max/mean of the 2xx latencies since the last reset
 *   {pedido, cmd: 'zerar'}     forgets everything (a new round)
 * and gets `{pedido, ...answer}` back. It exits when the parent goes away.
 */
import http from 'node:http';
import { AddressInfo } from 'node:net';

const MODO = process.env.BENCH_RECEPTOR_MODO ?? 'ok';
if (MODO !== 'ok' && MODO !== 'metade') {
  process.stderr.write(`BENCH_RECEPTOR_MODO must be ok or metade, got "${MODO}"\n`);
  process.exit(2);
}

/** per webhook-id: successes * 2^16 + failures, packed in one number (fewer objects for 100k ids) */
let porId = new Map<string, number>();
let chamadas = 0;
let sucessos = 0;
let falhas = 0;
let semCriadoEm = 0;
let duplicados = 0;
let primeiroOk = 0;
let ultimoOk = 0;
let latencias: number[] = [];

function zerar(): void {
  porId = new Map();
  chamadas = sucessos = falhas = semCriadoEm = duplicados = primeiroOk = ultimoOk = 0;
  latencias = [];
}

const RESPOSTA_OK = '{"ok":true}';
const RESPOSTA_FALHA = '{"erro":"falha simulada pelo benchmark"}';

const servidor = http.createServer((req, res) => {
  const partes: Buffer[] = [];
  req.on('data', (p: Buffer) => partes.push(p));
  req.on('end', () => {
    const agora = Date.now();
    chamadas++;
    const id = String(req.headers['webhook-id'] ?? '');
    const falhar = MODO === 'metade' && chamadas % 2 === 1;
    const anterior = porId.get(id) ?? 0;
    if (falhar) {
      falhas++;
      porId.set(id, anterior + 1);
      res.writeHead(500, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(RESPOSTA_FALHA) });
      res.end(RESPOSTA_FALHA);
      return;
    }
    sucessos++;
    if (anterior >= 65536) duplicados++;
    porId.set(id, anterior + 65536);
    if (!primeiroOk) primeiroOk = agora;
    ultimoOk = agora;
    try {
      const corpo = JSON.parse(Buffer.concat(partes).toString('utf8'));
      const criadoEm = Date.parse(corpo?.criado_em);
      if (Number.isFinite(criadoEm)) latencias.push(agora - criadoEm);
      else semCriadoEm++;
    } catch {
      semCriadoEm++;
    }
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(RESPOSTA_OK) });
    res.end(RESPOSTA_OK);
  });
});
// the hub keeps its connections alive: do not close them between bursts
servidor.keepAliveTimeout = 120_000;
servidor.headersTimeout = 125_000;

function estado() {
  let idsComSucesso = 0;
  let idsSoComFalhas = 0;
  /** ids without any success, by their number of failed calls */
  const falhasDosSemSucesso: Record<number, number> = {};
  for (const v of porId.values()) {
    if (v >= 65536) idsComSucesso++;
    else {
      idsSoComFalhas++;
      falhasDosSemSucesso[v] = (falhasDosSemSucesso[v] ?? 0) + 1;
    }
  }
  return {
    chamadas,
    sucessos,
    falhas,
    idsDistintos: porId.size,
    idsComSucesso,
    idsSoComFalhas,
    falhasDosSemSucesso,
    duplicados,
    semCriadoEm,
    primeiroOk,
    ultimoOk,
  };
}

function percentis() {
  const v = Float64Array.from(latencias).sort();
  const p = (q: number) => (v.length ? v[Math.min(v.length - 1, Math.ceil(q * v.length) - 1)] : NaN);
  let soma = 0;
  for (const x of v) soma += x;
  return { n: v.length, p50: p(0.5), p90: p(0.9), p99: p(0.99), max: v.length ? v[v.length - 1] : NaN, media: v.length ? soma / v.length : NaN };
}

process.on('message', (m: any) => {
  if (!m || typeof m !== 'object') return;
  let resposta: object;
  switch (m.cmd) {
    case 'estado':
      resposta = estado();
      break;
    case 'latencias':
      resposta = percentis();
      break;
    case 'zerar':
      zerar();
      resposta = {};
      break;
    default:
      resposta = { erro: `unknown command ${m.cmd}` };
  }
  process.send?.({ pedido: m.pedido, ...resposta });
});
process.once('disconnect', () => process.exit(0));
process.once('SIGTERM', () => {
  servidor.closeAllConnections();
  servidor.close(() => process.exit(0));
});

servidor.listen(0, '127.0.0.1', () => {
  const porta = (servidor.address() as AddressInfo).port;
  const msg = { tipo: 'pronto', pid: process.pid, porta, modo: MODO };
  if (process.send) process.send(msg);
  else process.stdout.write(`${JSON.stringify(msg)}\n`);
});
