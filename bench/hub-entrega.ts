/**
 * `npm run bench:hub-entrega`: end-to-end delivery of the webhook hub (never part of `npm test`).
 *
 * One subscription whose subscriber (bench/hub-receptor.ts, its own process) answers 200. For each
 * count of delivery worker processes in BENCH_WORKERS (default `1,2`; each one is
 * `suite worker hub-entrega`, HUB_ENTREGA_CONCORRENCIA attempts in flight and jobs held, 50 by default):
 *   (a) throughput: with the delivery queue paused, BENCH_EVENTOS events (default 100,000) are
 *       published over HTTP; the workers are started and, once all are connected, the queue is
 *       resumed and the drain timed until the subscriber has received every delivery (distinct
 *       webhook-ids) -> deliveries/s. The deliveries recorded entregue must then count them all.
 *   (b) latency: with those workers running, events are offered at half the rate measured in (a)
 *       (or BENCH_TAXA per second) for BENCH_LATENCIA seconds (default 10); the subscriber
 *       records receipt time - `criado_em` (the event's acceptance) -> p50/p99.
 * (c) baseline, in the same run: bare BullMQ, BENCH_BASE_EVENTOS empty jobs (default
 *     BENCH_EVENTOS) added with addBulk to a scratch queue, then processed by a no-op Worker at the
 *     same concurrency in this process -> jobs/s; each delivery rate is shown as a ratio to it, a
 *     reference for the machine of the day rather than like for like (a batch job carries many
 *     deliveries, and each delivery is a signed HTTP call).
 *
 * Goal (issue): >= 2,000 deliveries/s, and p99 <= 250 ms at half that offered rate (a
 * self-reported peer: 1,812/s at p95 143 ms on 4 vCPU).
 *
 * Environment: BENCH_EVENTOS, BENCH_WORKERS, BENCH_LATENCIA (s), BENCH_TAXA (events/s for (b)),
 * BENCH_BASE_EVENTOS, BENCH_CONEXOES (publishing connections, default 50),
 * HUB_ENTREGA_CONCORRENCIA (passed to the workers and used by the baseline), BENCH_COMPILED=0 (ts-node),
 * BENCH_LOG_LEVEL (default warn), BENCH_SERVER_LOG, BENCH_CPU_PROF (folder for V8 CPU profiles of
 * the hub and the workers), BENCH_RECEPTOR_HOST (host in the subscription's URL: 127.0.0.1 by
 * default, `localhost` to include its lookup), MYSQL_URL / REDIS_URL.
 */
import { Queue, Worker } from 'bullmq';
import IORedis from 'ioredis';
import {
  amostrarRss,
  Bancada,
  cabecalho,
  Cenario,
  dormir,
  EstadoDoReceptor,
  f0,
  fms,
  fpct,
  inteiro,
  inteiros,
  Latencias,
  linhaDeCpu,
  medirCpu,
  prepararCenario,
  publicar,
  publicarLote,
  REDIS_URL,
  Receptor,
  rodar,
  tabela,
  totalDeEntregas,
  UsoDeCpu,
} from './hub-comum';

const EVENTOS = inteiro('BENCH_EVENTOS', 100_000);
const WORKERS = inteiros('BENCH_WORKERS', [1, 2]);
const LATENCIA_S = inteiro('BENCH_LATENCIA', 10);
const TAXA = inteiro('BENCH_TAXA', 0);
const BASE_EVENTOS = inteiro('BENCH_BASE_EVENTOS', EVENTOS);
const CONEXOES = inteiro('BENCH_CONEXOES', 50);
const CONCORRENCIA = inteiro('HUB_ENTREGA_CONCORRENCIA', 50);
/** a drain that makes no progress for this long is given up */
const SEM_PROGRESSO_MS = 120_000;

const META_TAXA = 2000;
const META_P99 = 250;

interface Rodada {
  workers: number;
  criadas: number;
  segundos: number;
  entregasPorSeg: number;
  cpu: UsoDeCpu;
  rssPico: number;
  entreguesOk: boolean;
  duplicados: number;
  taxaOferecida: number;
  taxaAceita: number;
  lat?: Latencias;
  latCriadas: number;
  latOk: boolean;
}

/** Polls the subscriber until it has had `alvo` distinct deliveries; prints progress. */
async function esperarRecebidas(r: Receptor, alvo: number, t0: number, rotulo: string): Promise<EstadoDoReceptor> {
  let ultimo = -1;
  let progressoEm = Date.now();
  let mostradoEm = Date.now();
  for (;;) {
    const s = await r.pedir<EstadoDoReceptor>('estado');
    if (s.idsComSucesso >= alvo) return s;
    if (s.idsComSucesso !== ultimo) {
      ultimo = s.idsComSucesso;
      progressoEm = Date.now();
    } else if (Date.now() - progressoEm > SEM_PROGRESSO_MS) {
      throw new Error(`${rotulo}: no delivery for ${SEM_PROGRESSO_MS / 1000} s, ${s.idsComSucesso} of ${alvo} received`);
    }
    if (Date.now() - mostradoEm >= 10_000) {
      mostradoEm = Date.now();
      const seg = (Date.now() - t0) / 1000;
      console.log(`    ${rotulo}: ${f0(s.idsComSucesso)} of ${f0(alvo)} received after ${seg.toFixed(0)} s (${f0(s.idsComSucesso / seg)}/s)`);
    }
    await dormir(200);
  }
}

/** The deliveries stored, until their count stops moving (requests in flight when a load stops finish first). */
async function totalEstavel(c: Cenario): Promise<number> {
  let total = await totalDeEntregas(c);
  for (let antes = -1; total !== antes; ) {
    await dormir(1000);
    antes = total;
    total = await totalDeEntregas(c);
  }
  return total;
}

/** The deliveries recorded entregue reach `alvo` (the hub records a success just after the answer). */
async function esperarEntregues(c: Cenario, alvo: number): Promise<number> {
  const limite = Date.now() + 30_000;
  for (;;) {
    const n = await totalDeEntregas(c, 'entregue');
    if (n >= alvo || Date.now() > limite) return n;
    await dormir(500);
  }
}

async function rodada(b: Bancada, c: Cenario, r: Receptor, w: number, entreguesAntes: number): Promise<Rodada> {
  console.log(`\n== ${w} delivery worker process(es), concurrency ${CONCORRENCIA} each ==`);
  const fila = b.filaDeEntregas();
  // (a) throughput: everything queued first, then the drain
  await fila.pause();
  await r.pedir('zerar');
  const totalAntes = await totalDeEntregas(c);
  await publicarLote(c, EVENTOS, CONEXOES);
  const criadas = (await totalEstavel(c)) - totalAntes;
  // every delivery stored is in a queued job (a batch's first attempts) before the drain is timed
  const naFila = await b.entregasNaFila('wait', 'delayed', 'prioritized');
  if (naFila.entregas !== criadas) throw new Error(`${naFila.entregas} of ${criadas} deliveries stored are in queued jobs`);
  console.log(`  ${f0(criadas)} deliveries stored, in ${f0(naFila.jobs)} queued jobs`);
  const inicioW = Date.now();
  const procs = await b.iniciarWorkers(w);
  const pids = procs.map((p) => p.pid!);
  console.log(`  worker pid(s) ${pids.join(', ')} connected in ${((Date.now() - inicioW) / 1000).toFixed(1)} s; resuming the queue`);
  const rss = amostrarRss(pids);
  const fimCpu = medirCpu({ hub: b.enderecos!.pid, workers: pids, receptor: r.pid });
  const t0 = Date.now();
  await fila.resume();
  const estado = await esperarRecebidas(r, criadas, t0, 'drain');
  const cpu = fimCpu();
  const segundos = (estado.ultimoOk - t0) / 1000;
  const entregasPorSeg = criadas / segundos;
  const entregues = await esperarEntregues(c, entreguesAntes + criadas);
  const entreguesOk = entregues === entreguesAntes + criadas && estado.idsComSucesso === criadas;
  const pico = rss.parar();
  const rssPico = Math.max(...pids.map((p) => pico.get(p) ?? 0));
  console.log(
    `  drained ${f0(criadas)} deliveries in ${segundos.toFixed(1)} s: ${f0(entregasPorSeg)} deliveries/s ` +
      `(first receipt ${((estado.primeiroOk - t0) / 1000).toFixed(2)} s after resume)`,
  );
  console.log(`  ${linhaDeCpu(cpu)}`);
  console.log(`  peak worker RSS ${f0(rssPico)} MB`);
  console.log(
    `  check: recorded entregue ${f0(entregues - entreguesAntes)} new, subscriber ${f0(estado.idsComSucesso)} distinct ids ` +
      `(${estado.duplicados} answered twice), ${estado.chamadas} calls -> ${entreguesOk ? 'PASS' : 'FAIL'}`,
  );

  // (b) latency at half that rate, workers running
  const taxaOferecida = TAXA || Math.max(1, Math.round(entregasPorSeg / 2));
  await r.pedir('zerar');
  const antesLat = await totalDeEntregas(c);
  const token = await c.tokenDoPublicador();
  console.log(`  latency: offering ${f0(taxaOferecida)} events/s for ${LATENCIA_S} s with the workers running`);
  const carga = await publicar(c, token, { conexoes: CONEXOES, duracao: LATENCIA_S, taxa: taxaOferecida });
  const latCriadas = (await totalEstavel(c)) - antesLat;
  const estadoLat = await esperarRecebidas(r, latCriadas, Date.now(), 'latency');
  const lat = await r.pedir<Latencias>('latencias');
  const latOk = estadoLat.idsComSucesso === latCriadas && estadoLat.duplicados === 0;
  console.log(
    `    accepted ${f0(carga.aceitos)} (${f0(carga.eventosPorSeg)}/s; publish p50 ${fms(carga.p50)} ms, p99 ${fms(carga.p99)} ms` +
      `${carga.non2xx || carga.erros ? `; ${carga.non2xx} non-2xx, ${carga.erros} errors` : ''})`,
  );
  console.log(
    `    accept -> receipt over ${f0(lat.n)} deliveries: p50 ${fms(lat.p50)} ms, p90 ${fms(lat.p90)} ms, p99 ${fms(lat.p99)} ms, max ${fms(lat.max)} ms ` +
      `(${latOk ? 'all received once' : `CHECK FAILED: ${estadoLat.idsComSucesso} received of ${latCriadas}, ${estadoLat.duplicados} twice`})`,
  );
  await b.pararWorkers();
  return {
    workers: w,
    criadas,
    segundos,
    entregasPorSeg,
    cpu,
    rssPico,
    entreguesOk,
    duplicados: estado.duplicados + estadoLat.duplicados,
    taxaOferecida,
    taxaAceita: carga.eventosPorSeg,
    lat,
    latCriadas,
    latOk,
  };
}

/** (c) bare BullMQ: N empty jobs added with addBulk, then a no-op Worker at the same concurrency. */
async function base(b: Bancada, n: number) {
  console.log(`\n== bare BullMQ baseline: ${f0(n)} empty jobs, no-op worker at concurrency ${CONCORRENCIA} (in this process) ==`);
  const conexao = new IORedis(REDIS_URL, { maxRetriesPerRequest: null });
  const q = new Queue('bench-vazia', { connection: conexao, prefix: b.prefixo });
  const tAdd = performance.now();
  for (let i = 0; i < n; i += 1000) {
    const lote = Array.from({ length: Math.min(1000, n - i) }, () => ({ name: 'vazio', data: {}, opts: { removeOnComplete: true, removeOnFail: true } }));
    await q.addBulk(lote);
  }
  const segAdd = (performance.now() - tAdd) / 1000;
  let feitos = 0;
  let fim: () => void = () => undefined;
  const terminou = new Promise<void>((resolve) => (fim = resolve));
  const worker = new Worker('bench-vazia', async () => undefined, {
    connection: new IORedis(REDIS_URL, { maxRetriesPerRequest: null }),
    prefix: b.prefixo,
    concurrency: CONCORRENCIA,
    autorun: false,
  });
  worker.on('completed', () => {
    if (++feitos >= n) fim();
  });
  const fimCpu = medirCpu({});
  const t0 = performance.now();
  void worker.run();
  await terminou;
  const seg = (performance.now() - t0) / 1000;
  const cpu = fimCpu();
  await worker.close();
  await q.close();
  conexao.disconnect();
  const r = { adicionadosPorSeg: n / segAdd, jobsPorSeg: n / seg, cpu };
  console.log(`  added in ${segAdd.toFixed(1)} s (${f0(r.adicionadosPorSeg)} jobs/s); processed in ${seg.toFixed(1)} s: ${f0(r.jobsPorSeg)} jobs/s`);
  console.log(`  ${linhaDeCpu(cpu)} (load generator = this process, the worker)`);
  return r;
}

async function principal(b: Bancada): Promise<number> {
  cabecalho('bench:hub-entrega');
  console.log(
    `${f0(EVENTOS)} events per round, worker processes ${WORKERS.join(' then ')}, concurrency ${CONCORRENCIA}; ` +
      `latency at ${TAXA ? `${TAXA} events/s` : 'half the measured rate'} for ${LATENCIA_S} s`,
  );
  console.log(`goal: >= ${f0(META_TAXA)} deliveries/s, and p99 accept -> receipt <= ${META_P99} ms at half that offered rate`);
  const baseline = await base(b, BASE_EVENTOS);

  const inicio = Date.now();
  const e = await b.iniciarServidor();
  const r = await b.iniciarReceptor('ok');
  console.log(`\nhub API pid ${e.pid} (identity ${e.identity}, hub ${e.hub}) ready in ${((Date.now() - inicio) / 1000).toFixed(1)} s; subscriber pid ${r.pid} at ${r.url()}`);
  const c = await prepararCenario(e, 1, { url: r.url(), maximo_de_tentativas: 3, tempo_limite_em_segundos: 10 });

  const rodadas: Rodada[] = [];
  let entregues = 0;
  for (const w of WORKERS) {
    const x = await rodada(b, c, r, w, entregues);
    rodadas.push(x);
    entregues = await totalDeEntregas(c, 'entregue');
  }

  const cumpreTaxa = (x: Rodada) => x.entregasPorSeg >= META_TAXA;
  const cumpreLat = (x: Rodada) => x.lat !== undefined && x.lat.p99 <= META_P99;
  console.log(
    `\nSummary: bench:hub-entrega (${f0(EVENTOS)} events per round; bare BullMQ ${f0(baseline.jobsPorSeg)} jobs/s; ` +
      `goal >= ${f0(META_TAXA)} deliveries/s and p99 <= ${META_P99} ms at half rate)`,
  );
  console.log(
    tabela(
      ['workers', 'deliveries/s', 'x bare', 'worker CPU', 'db CPU', 'others', 'RSS MB', 'offered/s', 'accepted/s', 'p50 ms', 'p99 ms', 'counts', 'goal'],
      rodadas.map((x) => [
        String(x.workers),
        f0(x.entregasPorSeg),
        (x.entregasPorSeg / baseline.jobsPorSeg).toFixed(3),
        fpct(x.cpu.workers),
        fpct(x.cpu.banco),
        fpct(x.cpu.outros),
        f0(x.rssPico),
        f0(x.taxaOferecida),
        f0(x.taxaAceita),
        fms(x.lat?.p50 ?? NaN),
        fms(x.lat?.p99 ?? NaN),
        x.entreguesOk && x.latOk && x.duplicados === 0 ? 'PASS' : 'FAIL',
        `${cumpreTaxa(x) ? 'rate met' : 'rate NOT met'}, ${cumpreLat(x) ? 'p99 met' : 'p99 NOT met'}`,
      ]),
      [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10],
    ),
  );
  const contagensOk = rodadas.every((x) => x.entreguesOk && x.latOk && x.duplicados === 0);
  console.log(`count check (every delivery received once and recorded as entregue): ${contagensOk ? 'PASS' : 'FAIL'}`);
  return contagensOk ? 0 : 1;
}

rodar(principal);
