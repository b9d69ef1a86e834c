import { readdirSync, readFileSync } from 'node:fs';
import type autocannon from 'autocannon';
import { f0, fpct } from './comum';

/**
 * CPU time from /proc (Linux), so the benchmark can say who was busy during a run: the server
 * process, the load generator, the database, or nobody (the server waiting on I/O).
 */
const TICKS_POR_SEGUNDO = 100; // USER_HZ on Linux

/** user + system CPU seconds of one process, or undefined when it cannot be read. */
export function cpuDoProcesso(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // the command name may hold spaces: fields are counted after its closing parenthesis
    const campos = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(campos[11]) + Number(campos[12])) / TICKS_POR_SEGUNDO;
  } catch {
    return undefined;
  }
}

/** A line of /proc/<pid>/status in MB (`VmRSS` now, `VmHWM` its peak so far), or undefined. */
function memoriaMb(pid: number, campo: 'VmRSS' | 'VmHWM'): number | undefined {
  try {
    const m = new RegExp(`${campo}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : undefined;
  } catch {
    return undefined;
  }
}

/** Resident memory of a process now, in MB. */
export const rssMb = (pid: number) => memoriaMb(pid, 'VmRSS');
/** Peak resident memory of a process since it started (the kernel's high-water mark), in MB. */
export const picoDeRssMb = (pid: number) => memoriaMb(pid, 'VmHWM');

/** busy and total CPU seconds of the whole machine (all cores). */
export function cpuDaMaquina(): { ocupado: number; total: number } | undefined {
  try {
    const linha = readFileSync('/proc/stat', 'utf8').split('\n')[0];
    const v = linha.trim().split(/\s+/).slice(1).map(Number);
    const total = v.reduce((a, b) => a + b, 0);
    const ocioso = (v[3] ?? 0) + (v[4] ?? 0); // idle + iowait
    return { ocupado: (total - ocioso) / TICKS_POR_SEGUNDO, total: total / TICKS_POR_SEGUNDO };
  } catch {
    return undefined;
  }
}

/** pids whose command name is one of `nomes` (e.g. the MariaDB server). */
export function pidsPeloNome(nomes: string[]): number[] {
  const pids: number[] = [];
  try {
    for (const d of readdirSync('/proc')) {
      if (!/^\d+$/.test(d)) continue;
      try {
        const comm = readFileSync(`/proc/${d}/comm`, 'utf8').trim();
        if (nomes.includes(comm)) pids.push(Number(d));
      } catch {
        // gone meanwhile
      }
    }
  } catch {
    // no /proc
  }
  return pids;
}

/** The database's and Redis's processes on this machine, read once: they outlive any run. */
export const PIDS_DO_BANCO = pidsPeloNome(['mariadbd', 'mysqld']);
export const PIDS_DO_REDIS = pidsPeloNome(['redis-server']);

/** user + system CPU seconds of several processes together, or undefined for none. */
export function cpuDosProcessos(pids: number[]): number | undefined {
  return pids.length ? pids.reduce((t, p) => t + (cpuDoProcesso(p) ?? 0), 0) : undefined;
}

export interface AmostraDeCpu {
  servidor?: number;
  gerador: number;
  banco?: number;
  redis?: number;
  maquina?: { ocupado: number; total: number };
  em: number;
}

export function amostrarCpu(pidServidor: number): AmostraDeCpu {
  const u = process.cpuUsage();
  return {
    servidor: cpuDoProcesso(pidServidor),
    gerador: (u.user + u.system) / 1e6,
    banco: cpuDosProcessos(PIDS_DO_BANCO),
    redis: cpuDosProcessos(PIDS_DO_REDIS),
    maquina: cpuDaMaquina(),
    em: performance.now(),
  };
}

/** Server CPU per answered request (µs) between two samples: steadier than req/s when others share the machine. */
export function usPorRequisicao(a: AmostraDeCpu, b: AmostraDeCpu, requisicoes: number): number | undefined {
  if (a.servidor === undefined || b.servidor === undefined || requisicoes <= 0) return undefined;
  return ((b.servidor - a.servidor) * 1e6) / requisicoes;
}

/** CPU seconds the measured processes (server, generator, database, Redis) used between two samples. */
function nossos(a: AmostraDeCpu, b: AmostraDeCpu): number {
  const d = (x?: number, y?: number) => (y ?? 0) - (x ?? 0);
  return d(a.servidor, b.servidor) + d(a.gerador, b.gerador) + d(a.banco, b.banco) + d(a.redis, b.redis);
}

/** CPU use between two samples, in percent of one core (the machine: percent of all cores). */
export function usoDeCpu(a: AmostraDeCpu, b: AmostraDeCpu) {
  const seg = (b.em - a.em) / 1000;
  const pct = (x?: number, y?: number) => (x === undefined || y === undefined ? undefined : (100 * (y - x)) / seg);
  return {
    servidor: pct(a.servidor, b.servidor),
    gerador: pct(a.gerador, b.gerador),
    banco: pct(a.banco, b.banco),
    redis: pct(a.redis, b.redis),
    maquina:
      a.maquina && b.maquina && b.maquina.total > a.maquina.total
        ? (100 * (b.maquina.ocupado - a.maquina.ocupado)) / (b.maquina.total - a.maquina.total)
        : undefined,
    /** busy CPU of everything else on the machine (other users' work), in percent of one core */
    outros:
      a.maquina && b.maquina && a.servidor !== undefined && b.servidor !== undefined
        ? Math.max(0, (100 * (b.maquina.ocupado - a.maquina.ocupado - nossos(a, b))) / seg)
        : undefined,
  };
}

/** Busy share of all cores over `ms` (undefined without /proc). */
export async function ocupacaoDaMaquina(ms: number): Promise<number | undefined> {
  const a = cpuDaMaquina();
  await new Promise((r) => setTimeout(r, ms));
  const b = cpuDaMaquina();
  if (!a || !b || b.total <= a.total) return undefined;
  return (100 * (b.ocupado - a.ocupado)) / (b.total - a.total);
}

/** What `medirComCpu` reads of a load's result (autocannon's, or bench/carga-ritmada's, whose `respondidas` counts its warm-up too). */
interface ResultadoDeCarga {
  requests: { total: number };
  respondidas?: number;
}

/** A load run against a server, with who was busy during it and the server's CPU per answer. */
export interface CargaComCpu<R extends ResultadoDeCarga = autocannon.Result> {
  r: R;
  cpu: ReturnType<typeof usoDeCpu>;
  usPorReq?: number;
}

/** Runs `carga` (a load generator against the server `pid`), sampling the CPU before and after it. */
export async function medirComCpu<R extends ResultadoDeCarga>(pid: number, carga: () => Promise<R>): Promise<CargaComCpu<R>> {
  const antes = amostrarCpu(pid);
  const r = await carga();
  const depois = amostrarCpu(pid);
  return { r, cpu: usoDeCpu(antes, depois), usPorReq: usPorRequisicao(antes, depois, r.respondidas ?? r.requests.total) };
}

/** Who was busy during a run, in one line; `unidade` names what the server answered (a request, an event). */
export function cpuDaCarga({ cpu, usPorReq }: CargaComCpu<ResultadoDeCarga>, unidade: string): string {
  return (
    `CPU: server ${fpct(cpu.servidor)} (${usPorReq === undefined ? '-' : f0(usPorReq)} µs per ${unidade}), ` +
    `load generator ${fpct(cpu.gerador)}, database ${fpct(cpu.banco)}, redis ${fpct(cpu.redis)}, others ${fpct(cpu.outros)}`
  );
}
