import { Job } from 'bullmq';
import { config } from '../../config';
import {
  DefinicaoDeFila,
  esperarFimDoJob,
  eventosDaFila,
  FalhaEsperada,
  fecharWorker,
  fila,
  iniciarWorker,
  PILHAS_POR_JOB,
  progressoEspacado,
  progressoNoPainel,
  reenfileirar,
  REVISAO_DO_ESTADO,
} from '../../queues/fila';
import * as lifecycle from '../../lib/lifecycle';
import { encerrar } from '../../lib/lifecycle';
import { agendarRepetiveis, iniciarWorkers, manterRepetiveis } from '../../lib/runner';
import { FILAS } from '../../queues';
import { filaFilesLimpeza } from '../../queues/files-limpeza';
import { INTERVALO_DA_RETENCAO_MS } from '../../queues/hub-retencao';
import { filaIdentityOutbox } from '../../queues/identity-outbox';
import { redis } from '../../lib/redis';
import { dormir, esperarAte } from '../helpers/espera';
import { limparDados } from '../helpers/suite';

/**
 * A worker's shutdown (queues/fila.ts, fecharWorker) within SHUTDOWN_GRACE_MS (2 s in tests): its
 * jobs get half of it to end, then the abort signal and a quarter more; a job that ignores the
 * signal is left behind rather than holding the process past its grace period. A job the worker
 * was already fetching as it paused is followed like the others.
 */

let n = 0;
const definicao = (): DefinicaoDeFila => ({
  nome: `teste-encerramento-${n++}`,
  servico: 'identity',
  descricao: 'fila de teste',
  opcoesDosJobs: { attempts: 1, removeOnComplete: false, removeOnFail: false },
});

afterAll(async () => {
  await encerrar();
  // the test queues' keys (this file's prefix) go too, and the database a worker of a service's
  // queue opened
  await limparDados(['files']);
});

/** A processor that starts, says so, and ends when `fim` resolves (or on the abort signal, when it listens). */
function processadorControlado(ouveOSinal: boolean) {
  let comecou!: () => void;
  const comecado = new Promise<void>((r) => (comecou = r));
  let terminar!: () => void;
  const fim = new Promise<void>((r) => (terminar = r));
  const processador = (_job: Job, _token?: string, sinal?: AbortSignal) =>
    new Promise<string>((resolve, reject) => {
      comecou();
      if (ouveOSinal) sinal?.addEventListener('abort', () => reject(new Error(`interrompido: ${String(sinal.reason)}`)));
      void fim.then(() => resolve('feito'));
    });
  return { processador, comecado, terminar };
}

/** A worker of a queue of its own, running one job of processadorControlado. */
async function umJobEmCurso(ouveOSinal: boolean) {
  const def = definicao();
  const c = processadorControlado(ouveOSinal);
  const worker = iniciarWorker(def, c.processador);
  const job = await fila(def).add('x', {});
  await c.comecado;
  return { def, c, worker, job };
}

async function medir(f: () => Promise<unknown>): Promise<number> {
  const inicio = Date.now();
  await f();
  return Date.now() - inicio;
}

test('a job that ends within the grace period is recorded completed, and the worker then closes', async () => {
  const { c, worker, job } = await umJobEmCurso(false);
  setTimeout(c.terminar, 300);
  const ms = await medir(() => fecharWorker(worker));
  // with the job's end, not at the grace's
  expect(ms).toBeLessThan(config().shutdownGraceMs * 0.9);
  expect(await job.getState()).toBe('completed');
  expect(worker.closing).toBeTruthy();
});

test('a job still running at half the grace period gets the abort signal: one that listens fails with the reason, and nothing waits past the period', async () => {
  const { def, worker, job } = await umJobEmCurso(true);
  const ms = await medir(() => fecharWorker(worker));
  expect(ms).toBeGreaterThanOrEqual(config().shutdownGraceMs / 2 - 50);
  expect(ms).toBeLessThan(config().shutdownGraceMs);
  expect(await job.getState()).toBe('failed');
  expect((await Job.fromId(fila(def), job.id!))!.failedReason).toMatch(/interrompido: encerramento do processo/);
});

test('a job that ignores the signal is left behind (its lock lapses, BullMQ hands it back): the worker still closes within the grace period', async () => {
  const { c, worker, job } = await umJobEmCurso(false);
  const ms = await medir(() => fecharWorker(worker));
  // at most: pause and close a quarter each, the waits three quarters; here pause and close are quick
  expect(ms).toBeLessThan(config().shutdownGraceMs * 1.5);
  expect(await job.getState()).toBe('active');
  c.terminar();
});

// Whether the worker's free slot takes the job added as it pauses is a race this test cannot
// force: it checks the invariant both ways (the fetch-and-stop path is the one it exists for).
test('a job added as the shutdown begins is never left active: either not taken (waiting), or taken, waited for and stopped', async () => {
  const def = { ...definicao(), opcoesDoWorker: { concurrency: 2 } };
  const iniciados: string[] = [];
  // the first job ends on its own soon; any other runs until the abort signal
  const processador = (job: Job, _token?: string, sinal?: AbortSignal) =>
    new Promise((resolve, reject) => {
      iniciados.push(job.name);
      if (job.name === 'primeiro') setTimeout(resolve, 300);
      sinal?.addEventListener('abort', () => reject(new Error('interrompido')));
    });
  const worker = iniciarWorker(def, processador);
  const primeiro = await fila(def).add('primeiro', {});
  while (!iniciados.length) await new Promise((r) => setTimeout(r, 10));
  // the worker's second slot is waiting for a job when the shutdown begins, and one arrives
  const fechando = fecharWorker(worker);
  const segundo = await fila(def).add('segundo', {});
  await fechando;
  expect(await primeiro.getState()).toBe('completed');
  // not taken (still waiting), or taken and stopped: never left active
  expect(['waiting', 'failed']).toContain(await segundo.getState());
  expect(iniciados.includes('segundo') ? await segundo.getState() : 'failed').toBe('failed');
});

describe('reenfileirar: a sweep adding again the jobs of records still undone', () => {
  test('a failed job of that id (kept, so a plain add is ignored) is replaced; a waiting one is left as it is', async () => {
    const def = definicao();
    const q = fila(def);
    const worker = iniciarWorker(def, async () => {
      throw new Error('falha de propósito');
    });
    await q.add('x', { vez: 1 }, { jobId: 'registro-1' });
    // read from the job's state, not the queue's events: what is tested is the sweep's add
    await esperarAte(async () => (await q.getJobState('registro-1')) === 'failed', 'o job falhar');
    await fecharWorker(worker);
    // what BullMQ does with a plain add of the same id: nothing
    await q.add('x', { vez: 2 }, { jobId: 'registro-1' });
    expect((await q.getJob('registro-1'))!.data).toEqual({ vez: 1 });

    await q.add('x', { vez: 1 }, { jobId: 'registro-2' });
    await reenfileirar(def, [
      { name: 'x', data: { vez: 3 }, opts: { jobId: 'registro-1' } },
      { name: 'x', data: { vez: 3 }, opts: { jobId: 'registro-2' } },
    ]);
    const [um, dois] = [(await q.getJob('registro-1'))!, (await q.getJob('registro-2'))!];
    expect({ estado: await um.getState(), dados: um.data }).toEqual({ estado: 'waiting', dados: { vez: 3 } });
    expect({ estado: await dois.getState(), dados: dois.data }).toEqual({ estado: 'waiting', dados: { vez: 1 } });
  });

  test('a delayed job is left delayed by a sweep, and promoted to run now, keeping its data, when asked (promoverAdiados)', async () => {
    const def = definicao();
    const q = fila(def);
    const jobs = (ids: string[]) => ids.map((jobId) => ({ name: 'x', data: { vez: 2 }, opts: { jobId } }));
    await q.add('x', { vez: 1 }, { jobId: 'adiado-1', delay: 10 * 60_000 });
    await q.add('x', { vez: 1 }, { jobId: 'adiado-2', delay: 10 * 60_000 });
    await reenfileirar(def, jobs(['adiado-1']));
    expect(await q.getJobState('adiado-1')).toBe('delayed');

    await reenfileirar(def, jobs(['adiado-1', 'novo']), { promoverAdiados: true });
    const [adiado, outro, novo] = [(await q.getJob('adiado-1'))!, (await q.getJob('adiado-2'))!, (await q.getJob('novo'))!];
    // promoted, not replaced: the job keeps its data
    expect({ estado: await adiado.getState(), dados: adiado.data }).toEqual({ estado: 'waiting', dados: { vez: 1 } });
    expect(await outro.getState()).toBe('delayed');
    expect({ estado: await novo.getState(), dados: novo.data }).toEqual({ estado: 'waiting', dados: { vez: 2 } });
  });
});

test('progressoEspacado writes a job’s progress at most once per interval: a short job writes none, a long one shows how far it got', async () => {
  const escritos: object[] = [];
  const job = { updateProgress: async (p: object) => void escritos.push(p) } as unknown as Job;
  const reportar = progressoEspacado(job, 200);
  reportar({ feitas: 1 });
  reportar({ feitas: 2 });
  expect(escritos).toEqual([]);
  await new Promise((r) => setTimeout(r, 250));
  reportar({ feitas: 3 });
  reportar({ feitas: 4 });
  expect(escritos).toEqual([{ feitas: 3 }]);
});

test('a report that says how far its job got carries `progress`, 0 to 100, which Bull Board draws on the job card', async () => {
  const escritos: object[] = [];
  const reportar = progressoNoPainel({ updateProgress: async (p: object) => void escritos.push(p) } as unknown as Job);
  for (const r of [{ fase: 'carga', percentual: 42 }, { feitas: 1, de: 3 }, { apagados: 5, de: 5 }, { vistas: 0, de: 0 }, { bytes: 10, total: null }, { bytes: 600, total: 500 }, { entregas: 3, eventos: 1 }]) {
    reportar(r);
  }
  expect(escritos).toEqual([
    { fase: 'carga', percentual: 42, progress: 42 },
    { feitas: 1, de: 3, progress: 33 },
    { apagados: 5, de: 5, progress: 100 },
    { vistas: 0, de: 0 },
    { bytes: 10, total: null },
    { bytes: 600, total: 500, progress: 100 },
    { entregas: 3, eventos: 1 },
  ]);
});

/** Every schedule of the suite's queues: its queue, key, interval and its jobs' options. */
async function agendados() {
  const porFila = await Promise.all(
    FILAS.map(async (f) => (await fila(f).getJobSchedulers()).map((a) => ({ fila: f.nome, chave: a.key, cadaMs: a.every, opts: a.template?.opts }))),
  );
  return porFila.flat();
}

/** Every schedule of the suite's queues, as `queue key`. */
const agendamentos = async () => (await agendados()).map((a) => `${a.fila} ${a.chave}`).sort();

test("repeatable jobs run once, not with their queue's retries: the next run is the retry (an outbox sweep would otherwise retry for days)", async () => {
  await agendarRepetiveis();
  const todos = await agendados();
  // every schedule of agendarRepetiveis, named, so the check below cannot pass over a missing one
  // (a schedule added later is checked by it too, without being listed here)
  expect(await agendamentos()).toEqual(
    expect.arrayContaining([
      'identity-outbox varrer',
      'identity-outbox purgar',
      'hub-retencao purgar',
      'hub-retencao varrer',
      'hub-contagem compactar',
      'sales-transferencia transferir',
      'sales-anexo varrer',
      'sales-contagem compactar',
      'files-limpeza varrer',
      'files-contagem compactar',
    ]),
  );
  for (const a of todos) expect(a.opts).toEqual(expect.objectContaining({ attempts: 1 }));
  // the hub's retention purge at its interval (DESIGN §5: no one has to call it)
  expect(todos.find((a) => a.fila === 'hub-retencao' && a.chave === 'purgar')?.cadaMs).toBe(INTERVALO_DA_RETENCAO_MS);
  // the sweep's next run, as BullMQ scheduled it
  const [proxima] = (await fila(filaIdentityOutbox).getJobs(['delayed', 'waiting', 'prioritized'])).filter((j) => j.name === 'varrer');
  expect({ tentativas: proxima?.opts.attempts, padraoDaFila: filaIdentityOutbox.opcoesDosJobs.attempts }).toEqual({ tentativas: 1, padraoDaFila: 1_000_000 });
});

async function semAgendamentos(): Promise<void> {
  for (const f of FILAS) for (const a of await fila(f).getJobSchedulers()) await fila(f).removeJobScheduler(a.key!);
}

test('a queue named twice to one worker process gets one worker, not twice its concurrency', async () => {
  const workers = await iniciarWorkers(['files-limpeza', 'files-limpeza']);
  try {
    expect(workers.map((w) => w.name)).toEqual(['files-limpeza']);
  } finally {
    for (const w of workers) await w.close();
  }
});

test("a worker process schedules its own queues' repeatable jobs only: another queue's interval is not put back by its settings", async () => {
  await semAgendamentos();
  await agendarRepetiveis(['sales-anexo', 'files-limpeza']);
  expect(await agendamentos()).toEqual(['files-limpeza varrer', 'sales-anexo varrer']);
});

test('a schedule lost (Redis back empty, removed from the dashboard) is put back by the workers running, within their interval, no restart needed', async () => {
  await semAgendamentos();
  const parar = await manterRepetiveis(['files-limpeza'], 150);
  try {
    expect(await agendamentos()).toEqual(['files-limpeza varrer']);
    await fila(filaFilesLimpeza).removeJobScheduler('varrer');
    expect(await agendamentos()).toEqual([]);
    await esperarAte(async () => (await agendamentos()).length > 0, 'the schedule put back', 5_000);
    expect(await agendamentos()).toEqual(['files-limpeza varrer']);
    // with its next run queued, as BullMQ keeps it
    const agendamento = await fila(filaFilesLimpeza).getJobScheduler('varrer');
    expect((await fila(filaFilesLimpeza).getJob(`repeat:varrer:${agendamento!.next}`))?.name).toBe('varrer');
  } finally {
    await parar();
  }
});

test('scheduled again unchanged, as the workers do every 5 minutes, a schedule keeps its next run: no extra run, no run pushed back', async () => {
  await semAgendamentos();
  const q = fila(filaFilesLimpeza);
  await agendarRepetiveis(['files-limpeza']);
  const { next: proxima } = (await q.getJobScheduler('varrer'))!;
  const jobs = async () => (await q.getJobs(['waiting', 'delayed', 'prioritized'])).map((j) => j.id).sort();
  const antes = await jobs();
  await agendarRepetiveis(['files-limpeza']);
  expect((await q.getJobScheduler('varrer'))!.next).toBe(proxima);
  expect((await q.getJob(`repeat:varrer:${proxima}`))?.name).toBe('varrer');
  expect(await jobs()).toEqual(antes);
});

test('a job failing attempt after attempt keeps the stacks of its last failures only (the outbox retries for days)', async () => {
  const def = { ...definicao(), opcoesDosJobs: { attempts: PILHAS_POR_JOB + 3, removeOnComplete: false, removeOnFail: false } };
  let tentativas = 0;
  const worker = iniciarWorker(def, async () => {
    tentativas++;
    throw new Error(`falha ${tentativas}`);
  });
  try {
    const job = await fila(def).add('falhar', {});
    await esperarAte(async () => (await job.getState()) === 'failed', 'the job failed for good');
    const guardado = (await fila(def).getJob(job.id!))!;
    expect(tentativas).toBe(PILHAS_POR_JOB + 3);
    expect((guardado.stacktrace ?? []).map((p) => p.split('\n')[0])).toEqual(
      Array.from({ length: PILHAS_POR_JOB }, (_, i) => `Error: falha ${i + 4}`),
    );
  } finally {
    await fecharWorker(worker);
  }
});

test("a job failing with an expected outcome (FalhaEsperada: a subscriber refusing) keeps each failure's message, not a stack", async () => {
  const def = { ...definicao(), opcoesDosJobs: { attempts: 3, removeOnComplete: false, removeOnFail: false } };
  let tentativas = 0;
  const worker = iniciarWorker(def, async () => {
    tentativas++;
    throw new FalhaEsperada(`recusada ${tentativas}`);
  });
  try {
    const job = await fila(def).add('recusar', {});
    await esperarAte(async () => (await job.getState()) === 'failed', 'the job failed for good');
    const guardado = (await fila(def).getJob(job.id!))!;
    expect(guardado.stacktrace).toEqual(['recusada 1', 'recusada 2', 'recusada 3']);
    expect(guardado.failedReason).toBe('recusada 3');
  } finally {
    await fecharWorker(worker);
  }
});

describe('esperarFimDoJob: a bounded wait for a job to end', () => {
  const semRemover = () => definicao();
  const removendo = (): DefinicaoDeFila => ({ ...definicao(), opcoesDosJobs: { attempts: 1, removeOnComplete: true, removeOnFail: true } });
  const processar = async (job: Job) => {
    if (job.data.falhar) throw new Error('falhou de propósito');
    return { dobro: job.data.n * 2 };
  };
  /** A worker of `def` whose jobs end only once `soltar` is called. */
  const workerRetido = (def: DefinicaoDeFila) => {
    let soltar!: () => void;
    const solto = new Promise<void>((r) => (soltar = r));
    const worker = iniciarWorker(def, async (job) => {
      await solto;
      return processar(job);
    });
    return { worker, soltar };
  };

  /** Until the queue's event stream is being read (its blocking XREAD sent): an event before it would go unheard. */
  const eventosSendoLidos = async (def: DefinicaoDeFila) => {
    const nome = (fila(def) as unknown as { clientName(sufixo: string): string }).clientName(':qe');
    await esperarAte(
      async () => String(await redis('produtor').client('LIST')).split('\n').some((l) => l.includes(` name=${nome} `) && l.includes(' cmd=xread')),
      "the queue's events read",
    );
  };

  test('a job ending during the wait: its return value, or its failure with the reason', async () => {
    const def = removendo();
    // the jobs end only once both waits have begun: removed as they end, they are heard, not read
    const { worker, soltar } = workerRetido(def);
    try {
      await fila(def).add('x', { n: 21 }, { jobId: 'um' });
      await fila(def).add('x', { falhar: true }, { jobId: 'dois' });
      const um = esperarFimDoJob(fila(def), 'um', eventosDaFila(def), 10_000);
      const dois = esperarFimDoJob(fila(def), 'dois', eventosDaFila(def), 10_000);
      await eventosSendoLidos(def);
      soltar();
      await expect(um).resolves.toEqual({ dobro: 42 });
      await expect(dois).rejects.toThrow('falhou de propósito');
    } finally {
      await fecharWorker(worker);
    }
  });

  test('a job that ended before the wait: read from the job kept, or refused when it is gone', async () => {
    const def = semRemover();
    const worker = iniciarWorker(def, processar);
    const outra = removendo();
    const workerDaOutra = iniciarWorker(outra, processar);
    try {
      const feito = await fila(def).add('x', { n: 5 });
      const falho = await fila(def).add('x', { falhar: true });
      const removido = await fila(outra).add('x', { n: 1 });
      await esperarAte(async () => (await feito.getState()) === 'completed' && (await falho.getState()) === 'failed', 'os dois jobs no fim');
      await esperarAte(async () => (await removido.getState()) === 'unknown', 'o job removido');
      await expect(esperarFimDoJob(fila(def), feito.id!, eventosDaFila(def), 10_000)).resolves.toEqual({ dobro: 10 });
      await expect(esperarFimDoJob(fila(def), falho.id!, eventosDaFila(def), 10_000)).rejects.toThrow('falhou de propósito');
      await expect(esperarFimDoJob(fila(outra), removido.id!, eventosDaFila(outra), 10_000)).rejects.toThrow(/removido/);
    } finally {
      await fecharWorker(worker);
      await fecharWorker(workerDaOutra);
    }
  });

  test('an end the events never told (a QueueEvents that began reading after it) is read from the job now and then', async () => {
    const def = semRemover();
    const surda = semRemover();
    const antes = REVISAO_DO_ESTADO.ms;
    REVISAO_DO_ESTADO.ms = 200;
    const { worker, soltar } = workerRetido(def);
    try {
      await fila(def).add('x', { n: 4 }, { jobId: 'ouvido-por-ninguem' });
      // another queue's events: this job's end is never heard there
      const espera = esperarFimDoJob(fila(def), 'ouvido-por-ninguem', eventosDaFila(surda), 10_000);
      await dormir(300);
      soltar();
      await expect(espera).resolves.toEqual({ dobro: 8 });
    } finally {
      REVISAO_DO_ESTADO.ms = antes;
      await fecharWorker(worker);
    }
  });

  test("Redis failing as it reads the job's state rejects the wait at once (BullMQ's own left the error unhandled, which ends the process, and waited out its time)", async () => {
    const def = semRemover();
    await fila(def).add('x', { n: 1 }, { jobId: 'parado' });
    const espiao = jest.spyOn(fila(def), 'getJobState').mockRejectedValueOnce(new Error('Command timed out'));
    try {
      const ms = await medir(() => expect(esperarFimDoJob(fila(def), 'parado', eventosDaFila(def), 5_000)).rejects.toThrow('Command timed out'));
      expect(ms).toBeLessThan(2_000);
      expect(espiao).toHaveBeenCalledTimes(1);
    } finally {
      espiao.mockRestore();
    }
  });

  test('a job that does not end in time: the wait is refused at its deadline, its listeners and shutdown hook gone', async () => {
    const def = semRemover();
    // a worker of the queue here, its jobs never taken: the wait takes a shutdown hook
    const worker = iniciarWorker(def, processar);
    await worker.pause(true);
    const real = lifecycle.aoComecarOEncerramento;
    const largados: jest.Mock[] = [];
    const gancho = jest.spyOn(lifecycle, 'aoComecarOEncerramento').mockImplementation((agir) => {
      const largar = jest.fn(real(agir));
      largados.push(largar);
      return largar;
    });
    try {
      await fila(def).add('x', { n: 1 }, { jobId: 'sem-worker' });
      const eventos = eventosDaFila(def);
      const ms = await medir(() => expect(esperarFimDoJob(fila(def), 'sem-worker', eventos, 300)).rejects.toThrow(/sem fim em 300 ms/));
      expect(ms).toBeGreaterThanOrEqual(290);
      expect(eventos.listenerCount('completed:sem-worker')).toBe(0);
      expect(eventos.listenerCount('failed:sem-worker')).toBe(0);
      expect(largados).toHaveLength(1);
      expect(largados[0]).toHaveBeenCalledTimes(1);
    } finally {
      gancho.mockRestore();
      await fecharWorker(worker);
    }
  });

  // last of the file: it closes what the file opened, as afterAll does
  test("the process's shutdown beginning ends at once a bounded wait on a queue it works (its workers pause then); an unbounded one (import-cnpj's) and one on a queue worked elsewhere go on", async () => {
    const def = semRemover();
    const alheia = semRemover();
    // this process's worker, paused: its job waits, as the shutdown's pause leaves it
    const worker = iniciarWorker(def, processar);
    await worker.pause(true);
    await fila(def).add('x', { n: 1 }, { jobId: 'na-parada' });
    await fila(alheia).add('x', { n: 1 }, { jobId: 'de-outro-processo' });
    const limitada = esperarFimDoJob(fila(def), 'na-parada', eventosDaFila(def), 10_000);
    const daAlheia = esperarFimDoJob(fila(alheia), 'de-outro-processo', eventosDaFila(alheia), 1_500).catch((err: Error) => err.message);
    let semLimite: unknown = 'esperando';
    void esperarFimDoJob(fila(def), 'na-parada', eventosDaFila(def)).catch((err: Error) => (semLimite = err.message));
    await dormir(100);
    const encerrando = encerrar();
    const ms = await medir(() => expect(limitada).rejects.toThrow('encerramento do processo'));
    // at the shutdown's beginning, not at the grace's end (2 s) nor the wait's own (10 s)
    expect(ms).toBeLessThan(config().shutdownGraceMs * 0.9);
    expect(await daAlheia).toMatch(/sem fim em 1500 ms/);
    expect(semLimite).toBe('esperando');
    await encerrando;
  });
});
