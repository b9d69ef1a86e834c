import { ChildProcess } from 'node:child_process';
import { esperarProblema } from '../helpers/http';
import { esperarAte } from '../helpers/espera';
import { comandoDaSuite } from '../helpers/processo';
import { iniciarSuite, SuiteDeTeste } from '../helpers/suite';
import * as filas from '../../queues/fila';
import { chaveDoToken, eventosDaFila, fila, tokenDaFila } from '../../queues/fila';
import { redis } from '../../lib/redis';
import { filaIntranetColaboradorSync } from '../../queues/intranet-colaborador-sync';
import { Colaborador } from '../../models/intranet';
import { Intranet, intranetDe } from './apoio';

/**
 * The API and the sync's worker in processes apart (`suite api` and `suite worker`): what the
 * worker's sync changes reaches the API's cached permissions too.
 */
let suite: SuiteDeTeste;
let it: Intranet;
let worker: ChildProcess | undefined;
const saida: string[] = [];

beforeAll(async () => {
  suite = await iniciarSuite(['identity', 'intranet'], { workers: false });
  it = intranetDe(suite);
  const q = fila(filaIntranetColaboradorSync);
  const antes = (await q.getWorkers()).length;
  worker = comandoDaSuite(['worker', filaIntranetColaboradorSync.nome], {
    ...process.env,
    IDENTITY_URL: suite.url.identity,
    INTRANET_URL: suite.url.intranet,
    LOG_LEVEL: 'warn',
  });
  worker.stdout!.on('data', (d) => saida.push(String(d)));
  worker.stderr!.on('data', (d) => saida.push(String(d)));
  try {
    await esperarAte(async () => worker!.exitCode === null && (await q.getWorkers()).length > antes, 'the sync worker connected', 45_000);
  } catch (err) {
    throw new Error(`${(err as Error).message}; output: ${saida.join('').slice(-2000)}`);
  }
}, 60_000);

afterAll(async () => {
  if (worker && worker.exitCode === null) {
    const fim = new Promise((r) => worker!.once('exit', r));
    worker.kill('SIGTERM');
    await fim;
  }
  await suite?.encerrar();
});

test("a person refused before a master's listing registered them reads at once after it, though the sync ran in a worker process apart", async () => {
  const { usuario, token } = await it.identity.criarUsuarioLogado();
  // not registered yet: refused, and the refusal cached in this API process
  esperarProblema(await it.api.get('/colaborador/filtro', { token }), 403);
  expect(await Colaborador.findOne({ where: { auth_id: usuario.id } })).toBeNull();
  // the master's listing waits for the worker's sync, which registers the person with `Acesso inicial`
  await it.sincronizar();
  expect(await it.colaboradorDe(usuario)).toBeDefined();
  expect((await it.api.get('/colaborador/filtro', { token })).status).toBe(200);
});

test("the listing's wait failing once the sync has finished (the finished job already removed when its end is read) still forgets this process's cached refusals", async () => {
  const { usuario, token } = await it.identity.criarUsuarioLogado();
  esperarProblema(await it.api.get('/colaborador/filtro', { token }), 403);
  const real = filas.esperarFimDoJob;
  const espiao = jest.spyOn(filas, 'esperarFimDoJob').mockImplementationOnce(async (...args) => {
    await real(...args);
    throw new Error('job sincronizar removido antes de seu fim ser lido');
  });
  try {
    await it.sincronizar();
    expect(espiao).toHaveBeenCalledTimes(1);
  } finally {
    espiao.mockRestore();
  }
  expect(await it.colaboradorDe(usuario)).toBeDefined();
  expect((await it.api.get('/colaborador/filtro', { token })).status).toBe(200);
});

test("a sync no listing of this process waited for (another API process's listing asked for it) drops this process's cached refusals as it completes", async () => {
  const { usuario, token } = await it.identity.criarUsuarioLogado();
  esperarProblema(await it.api.get('/colaborador/filtro', { token }), 403);
  // as another API process's master listing asks for it: the master's token apart, the shared job
  await tokenDaFila.guardar(filaIntranetColaboradorSync, await it.identity.admin());
  const eventos = eventosDaFila(filaIntranetColaboradorSync);
  const concluida = new Promise((resolve) => eventos.once('completed', resolve));
  await fila(filaIntranetColaboradorSync).add('sincronizar', {}, { jobId: 'sincronizar' });
  await concluida;
  expect(await Colaborador.findOne({ where: { auth_id: usuario.id } })).not.toBeNull();
  expect((await it.api.get('/colaborador/filtro', { token })).status).toBe(200);
});

test("a sync that fails, whose writes may be partly in, drops this process's cached permissions too", async () => {
  const { usuario, token } = await it.identity.criarUsuarioLogado();
  await it.sincronizar();
  expect((await it.api.get('/colaborador/filtro', { token })).status).toBe(200);
  // a write of the failing sync's, before it failed: the person's profile taken away
  await Colaborador.update({ perfil_acesso_id: null }, { where: { auth_id: usuario.id } });
  expect((await it.api.get('/colaborador/filtro', { token })).status).toBe(200);
  // no master's token for it: the sync fails
  await redis().del(chaveDoToken(filaIntranetColaboradorSync));
  const eventos = eventosDaFila(filaIntranetColaboradorSync);
  const falhou = new Promise((resolve) => eventos.once('failed', resolve));
  await fila(filaIntranetColaboradorSync).add('sincronizar', {}, { jobId: 'sincronizar' });
  await falhou;
  esperarProblema(await it.api.get('/colaborador/filtro', { token }), 403);
});
