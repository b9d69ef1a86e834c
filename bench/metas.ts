/**
 * `npm run bench:metas`: every benchmark that has a goal, one after the other, each in a process
 * of its own, with a reference of the machine's speed before and after: a bare Express route
 * (one process, 50 connections, 5 s) measured by a load generator in another process. The figures
 * of a shared machine move with its neighbours (the same route has done 2,700 and 16,600 req/s
 * on machines of one kind); the reference says which kind of hour a run had.
 *
 * Each benchmark's whole output goes to a log file (its path is printed); at the end the lines
 * that judge a goal are printed together. Takes half an hour or more.
 *
 * Environment: BENCH_METAS (comma-separated names among those below, default all) and each
 * benchmark's own knobs, passed on.
 */
import { spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { RAIZ } from './comum';

const BENCHMARKS = ['access', 'hub-ingest', 'hub-entrega', 'hub-falhas', 'leads-importacao', 'leads-cnpj', 'leads-empresas', 'sales-webhook', 'sales-consultas'];

/** A bare Express route in a child process: its address, and how to stop it. */
async function rotaNua(): Promise<{ url: string; parar: () => void }> {
  const codigo = `const app = require('express')();
    app.get('/x', (req, res) => res.json({ ok: true }));
    const s = app.listen(0, '127.0.0.1', () => process.send(s.address().port));`;
  const filho = spawn(process.execPath, ['-e', codigo], { cwd: RAIZ, stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  const porta = await new Promise<number>((resolve, reject) => {
    filho.once('message', (p) => resolve(Number(p)));
    filho.once('exit', (c) => reject(new Error(`the bare route exited with ${c}`)));
  });
  return { url: `http://127.0.0.1:${porta}/x`, parar: () => filho.kill() };
}

async function referencia(): Promise<string> {
  const { url, parar } = await rotaNua();
  try {
    await autocannon({ url, connections: 50, duration: 2 });
    const r = await autocannon({ url, connections: 50, duration: 5 });
    return `bare Express ${Math.round(r.requests.average).toLocaleString('en')} req/s, p99 ${r.latency.p99} ms`;
  } finally {
    parar();
  }
}

/** A line that judges a goal: "goal: MET", "NOT met (...)", "counts: PASS". */
const JULGA = /\b(not )?met\b|\b(PASS|FAIL)\b/i;

/** Runs `npm run bench:<nome>`, its output both on screen and in `log`; answers the lines that judge a goal. */
function rodar(nome: string, log: NodeJS.WritableStream): Promise<string[]> {
  return new Promise((resolve) => {
    const julgamentos: string[] = [];
    const filho = spawn('npm', ['run', '--silent', `bench:${nome}`], { cwd: RAIZ, stdio: ['ignore', 'pipe', 'pipe'] });
    // each stream's lines apart (a line may come in two pieces), the last one read at the end
    const leitor = (saida: NodeJS.ReadableStream) => {
      let resto = '';
      saida.on('data', (pedaco: Buffer) => {
        process.stdout.write(pedaco);
        log.write(pedaco);
        const linhas = (resto + pedaco.toString()).split('\n');
        resto = linhas.pop() ?? '';
        for (const l of linhas) if (JULGA.test(l)) julgamentos.push(l.trim());
      });
      saida.on('end', () => JULGA.test(resto) && julgamentos.push(resto.trim()));
    };
    leitor(filho.stdout!);
    leitor(filho.stderr!);
    filho.on('close', (codigo) => {
      if (codigo !== 0) julgamentos.push(`(bench:${nome} exited with ${codigo})`);
      resolve(julgamentos);
    });
  });
}

async function main() {
  const escolhidos = process.env.BENCH_METAS ? process.env.BENCH_METAS.split(',').map((n) => n.trim()) : BENCHMARKS;
  const desconhecidos = escolhidos.filter((n) => !BENCHMARKS.includes(n));
  if (desconhecidos.length) throw new Error(`unknown benchmarks: ${desconhecidos.join(', ')} (known: ${BENCHMARKS.join(', ')})`);
  const arquivo = path.join(tmpdir(), `bench-metas-${new Date().toISOString().replace(/[:.]/g, '-')}.log`);
  const log = createWriteStream(arquivo);
  const antes = await referencia();
  console.log(`machine before: ${antes}\nwhole output: ${arquivo}`);
  log.write(`machine before: ${antes}\n`);
  const resumo: [string, string[]][] = [];
  for (const nome of escolhidos) {
    log.write(`\n=== bench:${nome} ===\n`);
    console.log(`\n=== bench:${nome} ===`);
    resumo.push([nome, await rodar(nome, log)]);
  }
  const depois = await referencia();
  log.write(`\nmachine after: ${depois}\n`);
  log.end();
  console.log(`\n=== goals ===\nmachine before: ${antes}\nmachine after:  ${depois}`);
  for (const [nome, linhas] of resumo) {
    console.log(`\nbench:${nome}`);
    for (const l of linhas.length ? linhas : ['(no goal line printed)']) console.log(`  ${l}`);
  }
  console.log(`\nwhole output: ${arquivo}`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
