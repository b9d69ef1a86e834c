/**
 * What the leads benchmarks share (never part of `npm test`): synthetic Receita files (generated
 * once per size into a temp folder and reused), the import run as an operator runs it
 * (`suite import-cnpj <dir>` in a child process, its peak RSS read from /proc), and clean-up.
 */
import { spawn } from 'node:child_process';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ADMIN_DO_BENCH, Ambiente, argumentosDePerfil, Compilado, novoAmbiente as criarAmbiente, inteiro, RAIZ } from './comum';
import { gerarArquivosReceita, ResumoDaGeracao } from './leads-gerador';
import { cpuDaMaquina, cpuDoProcesso, cpuDosProcessos, PIDS_DO_BANCO, picoDeRssMb } from './processo';

export type { Ambiente } from './comum';
export { f0, fms, limparAmbiente, percentil } from './comum';

export const ESTABELECIMENTOS = inteiro('BENCH_ESTABELECIMENTOS', 1_000_000);
export const ADMIN = ADMIN_DO_BENCH;

/** The synthetic month: BENCH_RECEITA_DIR, or a temp folder per size, generated on first use. */
export function arquivosDoBench(): Promise<ResumoDaGeracao> {
  const dir = process.env.BENCH_RECEITA_DIR || path.join(tmpdir(), `suite-bench-receita-${ESTABELECIMENTOS}`);
  const inicio = Date.now();
  return gerarArquivosReceita(dir, { estabelecimentos: ESTABELECIMENTOS }).then((r) => {
    console.log(`synthetic Receita files in ${dir} (${((Date.now() - inicio) / 1000).toFixed(1)} s to generate or reuse)`);
    return r;
  });
}

/** A run's environment: identity and leads, compiled. */
export const novoAmbiente = (c: Compilado, extra: Record<string, string> = {}): Ambiente => criarAmbiente(c, ['identity', 'leads'], extra);

export interface Importacao {
  segundos: number;
  rssPicoMb: number;
  linhas: Record<string, number>;
  /** CPU seconds used during the run: the importer, the database and the whole machine (all cores) */
  cpu: { importador?: number; banco?: number; maquina?: number };
}

/**
 * `suite import-cnpj <dir>` as an operator runs it. With no worker of the import queue running
 * under this prefix, the command runs the job itself, so its RSS is the importer's.
 */
export function importar(c: Compilado, a: Ambiente, dir: string): Promise<Importacao> {
  const inicio = process.hrtime.bigint();
  const banco0 = cpuDosProcessos(PIDS_DO_BANCO);
  const maquina0 = cpuDaMaquina();
  const filho = spawn(process.execPath, [...argumentosDePerfil(), c.saida('suite.ts'), 'import-cnpj', dir], { cwd: RAIZ, env: a.env, stdio: ['ignore', 'pipe', 'pipe'] });
  let saida = '';
  let erros = '';
  let pico = 0;
  let cpuDoImportador: number | undefined;
  filho.stdout.on('data', (d) => (saida += d));
  filho.stderr.on('data', (d) => {
    erros += d;
    const ultima = String(d).trim().split('\n').pop();
    if (ultima && process.env.BENCH_PROGRESSO !== '0') process.stdout.write(`  ${ultima}\n`);
  });
  // an exited process has no /proc entry: its last sample is its CPU time
  const amostra = setInterval(() => {
    pico = Math.max(pico, picoDeRssMb(filho.pid!) ?? 0);
    cpuDoImportador = cpuDoProcesso(filho.pid!) ?? cpuDoImportador;
  }, 100);
  return new Promise((resolve, reject) => {
    // once its output is read whole: `exit` may come before the last of stdout
    filho.once('close', (codigo) => {
      clearInterval(amostra);
      const segundos = Number(process.hrtime.bigint() - inicio) / 1e9;
      if (codigo !== 0) return reject(new Error(`import-cnpj exited ${codigo}: ${erros.slice(-2000)}`));
      const resultado = JSON.parse(saida.trim().split('\n').pop() ?? '{}');
      const banco1 = cpuDosProcessos(PIDS_DO_BANCO);
      const maquina1 = cpuDaMaquina();
      const cpu = {
        importador: cpuDoImportador,
        banco: banco0 !== undefined && banco1 !== undefined ? banco1 - banco0 : undefined,
        maquina: maquina0 && maquina1 ? maquina1.ocupado - maquina0.ocupado : undefined,
      };
      resolve({ segundos, rssPicoMb: pico, linhas: resultado.linhas ?? {}, cpu });
    });
  });
}
