/**
 * `npm run bench:hub-falhas`: a subscriber failing half its calls (never part of `npm test`).
 *
 * One subscription (maximo_de_tentativas BENCH_TENTATIVAS, 3 by default) whose subscriber
 * (bench/hub-receptor.ts in `metade` mode) answers 500 to every other call, 200 to the rest;
 * retries are short (HUB_RETRY_SCHEDULE_MS, `20,40,80` by default). BENCH_EVENTOS events (default
 * 100,000) are published while no delivery worker runs, so that many deliveries are queued; then
 * ONE worker process (`suite worker hub-entrega`) runs until no delivery is pending
 * (pending deliveries in the database), its RSS (VmRSS) sampled every 250 ms.
 *
 * Checks, each PASS/FAIL:
 *   - counts: entregue + fila_de_erro = deliveries created (counted in the database), none pending or
 *     cancelled; the subscriber's distinct webhook-ids answered 200 = entregue, none answered 200
 *     twice; the ids that never got a 200 = fila_de_erro, each called exactly maximo_de_tentativas
 *     times;
 *   - peak worker RSS < 300 MB (issue: with 100,000 queued deliveries).
 *
 * The hub and the worker run as `npm start` runs them, plain node on tsc output (compiled first
 * into a temp folder, 10-20 s): under ts-node the worker's RSS carries the TypeScript
 * compiler (~70 MB) and every failed attempt's error stack goes through source maps.
 * BENCH_COMPILED=0 runs them through ts-node instead.
 *
 * Environment: BENCH_EVENTOS, BENCH_TENTATIVAS, BENCH_AGENDA (HUB_RETRY_SCHEDULE_MS for the run),
 * BENCH_CONEXOES (publishing connections, default 50), HUB_ENTREGA_CONCORRENCIA, BENCH_COMPILED,
 * BENCH_LOG_LEVEL (default warn; at warn every failed attempt is logged, as in production),
 * BENCH_SERVER_LOG (the children's logs; by default a temp file, summarised at the end and kept
 * when a check fails), BENCH_CPU_PROF, BENCH_RECEPTOR_HOST, MYSQL_URL / REDIS_URL.
 */
import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { esperar } from './comum';
import { rssMb } from './processo';
import {
  amostrarRss,
  Bancada,
  cabecalho,
  dormir,
  EstadoDoReceptor,
  f0,
  fpct,
  inteiro,
  linhaDeCpu,
  medirCpu,
  prepararCenario,
  publicarLote,
  rodar,
  tabela,
  totalDeEntregas,
} from './hub-comum';

const EVENTOS = inteiro('BENCH_EVENTOS', 100_000);
const TENTATIVAS = inteiro('BENCH_TENTATIVAS', 3);
const AGENDA = process.env.BENCH_AGENDA || '20,40,80';
const CONEXOES = inteiro('BENCH_CONEXOES', 50);
const SEM_PROGRESSO_MS = 120_000;
const META_RSS_MB = 300;

async function principal(b: Bancada): Promise<number> {
  cabecalho('bench:hub-falhas');
  // the worker logs every failed attempt: kept to explain a failed check
  if (!process.env.BENCH_SERVER_LOG) b.arquivoDeLog = path.join(tmpdir(), `suite-bench-hub-falhas-${b.prefixo}.log`);
  console.log(
    `${f0(EVENTOS)} deliveries queued, then 1 worker process (concurrency ${process.env.HUB_ENTREGA_CONCORRENCIA || 50}); ` +
      `the subscriber fails every other call; maximo_de_tentativas ${TENTATIVAS}, HUB_RETRY_SCHEDULE_MS=${AGENDA}`,
  );
  const inicio = Date.now();
  const e = await b.iniciarServidor();
  const r = await b.iniciarReceptor('metade');
  console.log(`hub API pid ${e.pid} ready in ${((Date.now() - inicio) / 1000).toFixed(1)} s; subscriber pid ${r.pid} at ${r.url()}`);
  const c = await prepararCenario(e, 1, { url: r.url(), maximo_de_tentativas: TENTATIVAS, tempo_limite_em_segundos: 10 });

  // no worker yet: every delivery stays queued
  const publicadas = await publicarLote(c, EVENTOS, CONEXOES);
  let criadas = await totalDeEntregas(c);
  for (let antes = -1; criadas !== antes; ) {
    await dormir(1000);
    antes = criadas;
    criadas = await totalDeEntregas(c);
  }
  const fila = await b.filaDeEntregas().getJobCounts('wait', 'delayed', 'active', 'prioritized');
  console.log(`${f0(criadas)} deliveries stored; jobs in the queue: ${JSON.stringify(fila)}`);

  const t0 = Date.now();
  const [worker] = await b.iniciarWorkers(1);
  const pid = worker.pid!;
  const rssInicial = rssMb(pid);
  console.log(`worker pid ${pid} connected in ${((Date.now() - t0) / 1000).toFixed(1)} s (RSS ${f0(rssInicial ?? NaN)} MB)`);
  const rss = amostrarRss([pid]);
  const fimCpu = medirCpu({ hub: e.pid, workers: [pid], receptor: r.pid });
  const t1 = Date.now();
  let pendentes = criadas;
  let ultimoProgresso = Date.now();
  let mostradoEm = Date.now();
  for (;;) {
    await dormir(1000);
    const agora = await totalDeEntregas(c, 'pendente');
    if (agora !== pendentes) ultimoProgresso = Date.now();
    pendentes = agora;
    if (pendentes === 0) break;
    if (Date.now() - ultimoProgresso > SEM_PROGRESSO_MS) {
      const q = await b.filaDeEntregas().getJobCounts('wait', 'active', 'delayed', 'prioritized', 'failed', 'completed');
      console.log(`no progress for ${SEM_PROGRESSO_MS / 1000} s with ${pendentes} pending: giving up (jobs ${JSON.stringify(q)}; worker ${worker.exitCode === null && worker.signalCode === null ? 'running' : 'exited'})`);
      break;
    }
    if (Date.now() - mostradoEm >= 10_000) {
      mostradoEm = Date.now();
      const s = await r.pedir<EstadoDoReceptor>('estado');
      const q = await b.filaDeEntregas().getJobCounts('wait', 'active', 'delayed', 'failed');
      console.log(
        `  ${f0(pendentes)} pending after ${((Date.now() - t1) / 1000).toFixed(0)} s; subscriber ${f0(s.chamadas)} calls (${f0(s.idsComSucesso)} ids answered 200); ` +
          `jobs ${JSON.stringify(q)}; worker RSS ${f0(rssMb(pid) ?? NaN)} MB, peak ${f0(rss.pico.get(pid) ?? NaN)} MB`,
      );
    }
  }
  const segundos = (Date.now() - t1) / 1000;
  const cpu = fimCpu();
  const pico = rss.parar().get(pid) ?? NaN;

  const [entregue, filaDeErro, pendente, cancelada, total] = [
    await totalDeEntregas(c, 'entregue'),
    await totalDeEntregas(c, 'fila_de_erro'),
    await totalDeEntregas(c, 'pendente'),
    await totalDeEntregas(c, 'cancelada'),
    await totalDeEntregas(c),
  ];
  // the subscription's error-queue count, as GET /assinatura/{id} answers it (kept by the database's triggers)
  const naFilaDeErro = (await esperar(c.e.hub, 'GET', `/assinatura/${c.assinaturas[0]}`, 200, { token: c.admin })).entregas_na_fila_de_erro;
  // the last answers may still be on their way to the subscriber's counters
  await dormir(500);
  const s = await r.pedir<EstadoDoReceptor>('estado');
  const soFalhasComTodas = s.falhasDosSemSucesso[String(TENTATIVAS)] ?? 0;
  const checks = [
    // every event taken, each with its one delivery: counts that agree over fewer would prove little
    { nome: 'every event published, each a delivery', ok: publicadas.aceitos === EVENTOS && criadas === EVENTOS, valor: `${f0(publicadas.aceitos)} accepted, ${f0(criadas)} deliveries of ${f0(EVENTOS)}` },
    { nome: 'entregue + fila_de_erro = deliveries created', ok: entregue + filaDeErro === criadas && total === criadas, valor: `${f0(entregue)} + ${f0(filaDeErro)} = ${f0(entregue + filaDeErro)} of ${f0(criadas)}` },
    { nome: "the subscription's entregas_na_fila_de_erro = fila_de_erro", ok: naFilaDeErro === filaDeErro, valor: `${f0(naFilaDeErro)} vs ${f0(filaDeErro)}` },
    { nome: 'nothing pending or cancelled', ok: pendente === 0 && cancelada === 0, valor: `${pendente} pending, ${cancelada} cancelled` },
    { nome: "subscriber's distinct ids answered 200 = entregue", ok: s.idsComSucesso === entregue, valor: `${f0(s.idsComSucesso)} vs ${f0(entregue)}` },
    { nome: 'no delivery answered 200 twice', ok: s.duplicados === 0, valor: String(s.duplicados) },
    {
      nome: `ids never answered 200 = fila_de_erro, each called ${TENTATIVAS} times`,
      ok: s.idsSoComFalhas === filaDeErro && soFalhasComTodas === filaDeErro,
      valor: `${f0(s.idsSoComFalhas)} (by calls: ${JSON.stringify(s.falhasDosSemSucesso)})`,
    },
    { nome: `peak worker RSS < ${META_RSS_MB} MB`, ok: pico < META_RSS_MB, valor: `${f0(pico)} MB` },
  ];

  console.log(
    `\ndone in ${segundos.toFixed(1)} s: ${f0(s.chamadas)} calls (${f0(s.sucessos)} answered 200, ${f0(s.falhas)} answered 500), ` +
      `${f0(s.chamadas / segundos)} attempts/s, ${f0(criadas / segundos)} deliveries finished/s`,
  );
  console.log(linhaDeCpu(cpu));
  console.log(`\nSummary: bench:hub-falhas (${f0(criadas)} deliveries, subscriber failing half its calls, 1 worker process)`);
  console.log(
    tabela(
      ['deliveries', 'entregue', 'fila_de_erro', 'calls', 'seconds', 'attempts/s', 'worker CPU', 'others', 'RSS start MB', 'RSS peak MB'],
      [
        [
          f0(criadas),
          f0(entregue),
          f0(filaDeErro),
          f0(s.chamadas),
          segundos.toFixed(1),
          f0(s.chamadas / segundos),
          fpct(cpu.workers),
          fpct(cpu.outros),
          f0(rssInicial ?? NaN),
          f0(pico),
        ],
      ],
      [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
    ),
  );
  console.log('');
  console.log(tabela(['check', 'value', 'result'], checks.map((k) => [k.nome, k.valor, k.ok ? 'PASS' : 'FAIL'])));
  const contagensOk = checks.slice(0, 5).every((k) => k.ok);
  const resumo = b.resumoDoLog();
  if (resumo.length) console.log(`\nwarnings and errors logged by the hub and the worker (count, message):\n${resumo.join('\n')}`);
  console.log(`\ncounts: ${contagensOk ? 'PASS' : 'FAIL'}; RSS < ${META_RSS_MB} MB: ${pico < META_RSS_MB ? 'PASS' : 'FAIL'}`);
  const ok = checks.every((k) => k.ok);
  if (b.arquivoDeLog) {
    if (ok) rmSync(b.arquivoDeLog, { force: true });
    else console.log(`the children's logs are kept in ${b.arquivoDeLog}`);
  }
  return ok ? 0 : 1;
}

rodar(principal, { HUB_RETRY_SCHEDULE_MS: AGENDA });
