/**
 * An open-loop load at a fixed rate: request i is due at start + i / rate, whatever the answers
 * before it, and its latency runs from when it was due to when its answer ended. A server that
 * falls behind is charged for the wait of every request it delayed (a queue at the client counts),
 * as wrk2 measures.
 *
 * autocannon's `overallRate` does not offer a rate in that sense: each connection sends as fast as
 * it is answered until it has made its share of the second, then waits for the next second (the
 * whole second's requests arrive as a closed-loop burst), and it corrects for coordinated omission
 * with an expected interval of `Math.ceil(1 / rate)`, one millisecond whatever the rate, so an
 * answer of n ms is counted n times (autocannon 9.0.0, lib/httpClient.js and lib/run.js). Its
 * p99 at an offered rate is then the tail of bursts, weighted by latency: docs/desempenho.md.
 */
import { performance } from 'node:perf_hooks';
import { Pool } from 'undici';
import { percentil } from './comum';

export interface OpcoesDaCargaRitmada {
  url: string;
  method: 'GET' | 'POST';
  headers?: Record<string, string>;
  /** the body of request i (a new event each, say) */
  corpo?: (i: number) => string;
  /** requests per second */
  taxa: number;
  segundos: number;
  /** seconds sent at the same rate before the measured ones and left out of the figures (connections opened, code warm): 1 */
  aquecimento?: number;
  /** keep-alive connections the requests share; a request due while all are busy waits for one */
  conexoes: number;
}

export interface ResultadoDaCargaRitmada {
  /** from the first measured request's due time to the last answer */
  segundos: number;
  requests: { total: number; average: number };
  latency: { p50: number; p90: number; p99: number; max: number };
  /** answers by status code */
  codigos: Record<number, number>;
  '2xx': number;
  non2xx: number;
  errors: number;
  /** 2xx answers to the warm-up's requests, left out of the figures (what they wrote is the server's all the same) */
  aceitosNoAquecimento: number;
  /** the warm-up's other answers and errors, for the checks of what the server stored */
  falhasNoAquecimento: number;
  /** every answer, the warm-up's included: the server's CPU over the whole load is spent on these */
  respondidas: number;
  /** how late the generator itself sent a request after it was due, at the p99 and worst (ms): a busy generator shows here */
  atrasoDoGerador: { p99: number; max: number };
}

const maior = (valores: number[]) => valores.reduce((m, v) => Math.max(m, v), -Infinity);

/** Sends `taxa` × (`aquecimento` + `segundos`) requests, each at its due time, and waits for every answer; figures of the measured ones. */
export async function cargaRitmada(o: OpcoesDaCargaRitmada): Promise<ResultadoDaCargaRitmada> {
  const url = new URL(o.url);
  // an answer not begun, or not ended, within 30 s is an error (autocannon's time-out in these benchmarks)
  const pool = new Pool(url.origin, { connections: o.conexoes, pipelining: 1, keepAliveTimeout: 60_000, headersTimeout: 30_000, bodyTimeout: 30_000 });
  const intervaloMs = 1000 / o.taxa;
  const primeiroMedido = Math.round(o.taxa * (o.aquecimento ?? 1));
  const total = primeiroMedido + Math.round(o.taxa * o.segundos);
  const latencias: number[] = [];
  const atrasos: number[] = [];
  const codigos: Record<number, number> = {};
  let erros = 0;
  let aceitosNoAquecimento = 0;
  let falhasNoAquecimento = 0;
  const emVoo: Promise<void>[] = [];

  const enviar = (i: number, devidoEm: number) => {
    const medido = i >= primeiroMedido;
    if (medido) atrasos.push(performance.now() - devidoEm);
    emVoo.push(
      pool
        .request({ path: url.pathname + url.search, method: o.method, headers: o.headers, body: o.corpo?.(i) })
        .then(async (r) => {
          await r.body.dump();
          if (!medido) {
            if (r.statusCode < 300 && r.statusCode >= 200) aceitosNoAquecimento++;
            else falhasNoAquecimento++;
            return;
          }
          // the latencies and the rate are the accepted requests' (autocannon's are 2xx too): a
          // quick refusal would lower the p99 of a run that fails its goal anyway
          if (r.statusCode >= 200 && r.statusCode < 300) latencias.push(performance.now() - devidoEm);
          codigos[r.statusCode] = (codigos[r.statusCode] ?? 0) + 1;
        })
        .catch(() => {
          if (medido) erros++;
          else falhasNoAquecimento++;
        }),
    );
  };

  const inicio = performance.now();
  const inicioMedido = inicio + primeiroMedido * intervaloMs;
  let proximo = 0;
  await new Promise<void>((pronto) => {
    // every millisecond or so, send what fell due since the last turn (a timer never fires exactly)
    const turno = () => {
      const devidos = Math.min(total, Math.floor((performance.now() - inicio) / intervaloMs) + 1);
      for (; proximo < devidos; proximo++) enviar(proximo, inicio + proximo * intervaloMs);
      if (proximo < total) setTimeout(turno, 1);
      else pronto();
    };
    turno();
  });
  await Promise.all(emVoo);
  const segundos = (performance.now() - inicioMedido) / 1000;
  await pool.close();

  const ok = latencias.length;
  const respondidas = Object.values(codigos).reduce((n, v) => n + v, 0);
  return {
    segundos,
    requests: { total: latencias.length, average: latencias.length / segundos },
    latency: {
      p50: percentil(latencias, 50),
      p90: percentil(latencias, 90),
      p99: percentil(latencias, 99),
      max: maior(latencias),
    },
    codigos,
    '2xx': ok,
    non2xx: respondidas - ok,
    errors: erros,
    aceitosNoAquecimento,
    falhasNoAquecimento,
    respondidas: respondidas + aceitosNoAquecimento + falhasNoAquecimento,
    atrasoDoGerador: { p99: percentil(atrasos, 99), max: maior(atrasos) },
  };
}
