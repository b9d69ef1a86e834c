import http from 'node:http';
import { AddressInfo } from 'node:net';
import { Job, Worker } from 'bullmq';
import nock from 'nock';
import { copiarAnexo, esperaAntesDaCopia, retomarCopiasEsgotadas, varrerAnexos } from '../../api/sales/anexos';
import { config } from '../../config';
import { processarSalesAnexo } from '../../jobs/sales-anexo';
import { banco } from '../../lib/database';
import { novaConexaoRedis } from '../../lib/redis';
import { AnexoDaMensagem } from '../../models/sales';
import { fecharWorker, fila, iniciarWorker } from '../../queues/fila';
import { filaSalesAnexo, TENTATIVAS_DE_COPIA } from '../../queues/sales-anexo';
import { dormir, esperarAte } from '../helpers/espera';
import { anexosNesteArquivo, CHAT, eventoDeMensagem, idDoSuporte } from './apoio';

/**
 * SPEC 4.6 rule 7 (a failed copy is retried every 30 minutes, up to 5 more times) when a worker
 * dies mid-copy: its attempt stays counted, and a job the queue brings back at once (moved back to
 * waiting as stalled) or the sweep adds again waits what is left of the interval since that
 * attempt began, instead of trying again at once. Copies are retried ESPERA_MS apart here; no
 * worker runs unless a test starts one.
 */

const ESPERA_MS = 4000;

const t = anexosNesteArquivo({ workers: false, env: { SALES_ANEXO_RETRY_MS: String(ESPERA_MS) } });

/** A message with one attachment at `endereco`, its copy's job waiting in the queue; answers the attachment. */
async function anexoEm(endereco: string, o: { sistema?: { id: string; token: string } } = {}) {
  const r = await t.s.registrar(o.sistema ?? t.sistema, eventoDeMensagem({ conversa: idDoSuporte(), conteudo: 'segue', anexos: [{ id: idDoSuporte(), data_url: endereco, file_type: 'file' }] }));
  return (await AnexoDaMensagem.findOne({ where: { conversa_id: r.conversa_id } }))!;
}

/** The same, its job taken out of the queue: the test copies it, or adds the job itself. */
async function anexoForaDaFila(endereco: string) {
  const anexo = await anexoEm(endereco);
  await fila(filaSalesAnexo).remove(anexo.id);
  return anexo;
}

/** The suite's copy worker, its stalled check every 300 ms (30 s by default): a dead worker's job is taken up within a second. */
const workerVivo = () => iniciarWorker({ ...filaSalesAnexo, opcoesDoWorker: { ...filaSalesAnexo.opcoesDoWorker, stalledInterval: 300 } }, processarSalesAnexo);

/** An address where nothing listens (a port just released). */
async function enderecoFechado(): Promise<string> {
  const servidor = http.createServer();
  await new Promise<void>((r) => servidor.listen(0, '127.0.0.1', r));
  const { port } = servidor.address() as AddressInfo;
  await new Promise((r) => servidor.close(r));
  return `http://127.0.0.1:${port}`;
}

const copiado = (id: string) =>
  esperarAte(async () => {
    const a = await AnexoDaMensagem.findByPk(id);
    return a?.arquivo_id && a;
  }, 'the copy made', 20_000);

test('a worker dies mid-copy: its job, taken up again as stalled, waits what is left of the interval since that attempt began, and the next attempt copies it', async () => {
  // the chat platform: the first download hangs (the worker dies in it), the next ones are served
  const pedidos: number[] = [];
  const pendentes: http.ServerResponse[] = [];
  const plataforma = http.createServer((_req, res) => {
    pedidos.push(Date.now());
    if (pedidos.length === 1) return void pendentes.push(res);
    res.writeHead(200, { 'content-type': 'application/pdf' }).end('%PDF-queda');
  });
  await new Promise<void>((r) => plataforma.listen(0, '127.0.0.1', r));
  const origem = `http://127.0.0.1:${(plataforma.address() as AddressInfo).port}`;
  const conexaoDoMorto = novaConexaoRedis('worker', 'teste-worker-morto');
  let morto: Worker | undefined;
  let vivo: Worker | undefined;
  let primeiraCopia: Promise<unknown> = Promise.resolve();
  try {
    const proprio = await t.s.criarSistema('suporte', { url: origem, conta_id: 1 });
    const anexo = await anexoEm(`${origem}/rails/active_storage/queda/nota.pdf`, { sistema: proprio });
    // a worker whose lock lapses a second after its process is gone (the stalled check, which the
    // queue's workers run at most once per interval between them all, as often as the next one's)
    morto = new Worker(filaSalesAnexo.nome, (job: Job, token?: string, sinal?: AbortSignal) => (primeiraCopia = processarSalesAnexo(job, token, sinal)), {
      connection: conexaoDoMorto,
      prefix: config().queuePrefix,
      lockDuration: 1000,
      stalledInterval: 300,
    });
    morto.on('error', () => undefined);
    await esperarAte(() => pedidos.length === 1, 'the first attempt downloading');
    // the process dies: nothing of it reaches Redis again, its attempt stays counted
    await morto.close(true);
    conexaoDoMorto.disconnect();
    expect(await AnexoDaMensagem.findByPk(anexo.id)).toMatchObject({ tentativas: 1, arquivo_id: null, ultimo_erro: null });

    vivo = workerVivo();
    await esperarAte(async () => (await fila(filaSalesAnexo).getJobState(anexo.id)) === 'delayed', 'the stalled job taken up and put off', 10_000);
    expect(pedidos).toHaveLength(1);
    const copia = await copiado(anexo.id);
    expect(pedidos).toHaveLength(2);
    // the interval counts from the first attempt's start, which came before its download (a token,
    // the attachment's reads: well under a second); at once, it would be a few hundred ms
    expect(pedidos[1] - pedidos[0]).toBeGreaterThanOrEqual(ESPERA_MS - 1000);
    expect(copia.tentativas).toBe(2);
    const { logs } = await fila(filaSalesAnexo).getJobLogs(anexo.id);
    expect(logs).toEqual([expect.stringContaining('o intervalo entre tentativas ainda não passou')]);
  } finally {
    if (vivo) await fecharWorker(vivo);
    await morto?.close(true);
    // the dead worker's copy, still running in this process, is let go
    for (const res of pendentes) res.socket?.destroy();
    await primeiraCopia.catch(() => undefined);
    plataforma.closeAllConnections();
    await new Promise((r) => plataforma.close(r));
  }
});

test('a copy added again by the sweep (its job lost, or failed after stalling twice) waits what is left of the interval too; one whose attempts a crash spent ends at once, never a seventh', async () => {
  const antes = config().sales.anexoRetryMs;
  // the sweep takes a copy a minute after its last change: with 30 minutes between attempts, the
  // rest of them is left; here 70 s, the last attempt 61 s ago
  config().sales.anexoRetryMs = 70_000;
  let vivo: Worker | undefined;
  try {
    const esquecido = await anexoForaDaFila(`${CHAT}/rails/active_storage/queda/varrido.pdf`);
    await banco('sales').query(
      `UPDATE anexo_da_mensagem SET tentativas = 2, ultima_tentativa_em = UTC_TIMESTAMP(3) - INTERVAL 61 SECOND,
          atualizado_em = UTC_TIMESTAMP(3) - INTERVAL 61 SECOND WHERE id = ?`,
      { replacements: [esquecido.id] },
    );
    // on its last attempt when the worker died: the job the queue brings back finds it spent
    const gasto = await anexoForaDaFila(`${CHAT}/rails/active_storage/queda/gasto.pdf`);
    await banco('sales').query('UPDATE anexo_da_mensagem SET tentativas = ?, ultima_tentativa_em = UTC_TIMESTAMP(3) WHERE id = ?', {
      replacements: [TENTATIVAS_DE_COPIA, gasto.id],
    });
    let baixado = 0;
    nock(CHAT)
      .get('/rails/active_storage/queda/varrido.pdf')
      .reply(200, () => ((baixado = Date.now()), '%PDF-varrido'), { 'content-type': 'application/pdf' });
    const gastoBaixado = nock(CHAT).get('/rails/active_storage/queda/gasto.pdf').reply(200, '%PDF-gasto', { 'content-type': 'application/pdf' });

    vivo = workerVivo();
    const q = fila(filaSalesAnexo);
    await q.add('copiar', { anexo_id: gasto.id }, { jobId: gasto.id });
    // what is left of the interval as the sweep runs (9 s at the UPDATE, less the set-up since),
    // read after this clock: however long the reading takes, the job is put off past `varrido + restante`
    const varrido = Date.now();
    const restante = await esperaAntesDaCopia(esquecido.id);
    expect(restante).toBeGreaterThan(1000);
    expect(await varrerAnexos()).toBeGreaterThanOrEqual(1);
    expect(await esperarAte(async () => (await q.getJob(gasto.id))?.returnvalue, 'the spent copy ended')).toBe('esgotado');
    expect(gastoBaixado.isDone()).toBe(false);
    expect(await AnexoDaMensagem.findByPk(gasto.id)).toMatchObject({ tentativas: TENTATIVAS_DE_COPIA, arquivo_id: null });

    await esperarAte(async () => (await q.getJobState(esquecido.id)) === 'delayed', 'the swept job put off', 10_000);
    const copia = await copiado(esquecido.id);
    // put off by what was left, not run at once (the clocks read to the millisecond)
    expect(baixado - varrido).toBeGreaterThanOrEqual(restante - 5);
    expect(copia.tentativas).toBe(3);
  } finally {
    config().sales.anexoRetryMs = antes;
    if (vivo) await fecharWorker(vivo);
  }
});

test('the wait counts from the last attempt counted: none before the first, nor after an attempt given back (a shutdown, a failure of our side) or a re-arming, nor for a copy that may not run again', async () => {
  const anexo = await anexoForaDaFila(`${CHAT}/rails/active_storage/queda/espera.pdf`);
  expect(await esperaAntesDaCopia(anexo.id)).toBe(0);

  nock(CHAT).get('/rails/active_storage/queda/espera.pdf').reply(503);
  await expect(copiarAnexo(anexo.id)).rejects.toThrow('503');
  const espera = await esperaAntesDaCopia(anexo.id);
  expect(espera).toBeGreaterThan(ESPERA_MS - 1000);
  expect(espera).toBeLessThanOrEqual(ESPERA_MS);

  // the next attempt cut by a shutdown: given back, it leaves no wait (it began once none was owed)
  await dormir(espera);
  nock(CHAT).get('/rails/active_storage/queda/espera.pdf').delay(5000).reply(200, '%PDF', { 'content-type': 'application/pdf' });
  const encerramento = new AbortController();
  const cortada = copiarAnexo(anexo.id, undefined, encerramento.signal);
  await esperarAte(async () => (await AnexoDaMensagem.findByPk(anexo.id))!.tentativas === 2, 'the second attempt under way');
  encerramento.abort(new Error('encerramento do processo'));
  expect(await cortada).toEqual({ estado: 'interrompido' });
  expect(await AnexoDaMensagem.findByPk(anexo.id)).toMatchObject({ tentativas: 1, ultima_tentativa_em: null });
  expect(await esperaAntesDaCopia(anexo.id)).toBe(0);

  // file storage out of reach: put off, its attempt given back, no wait of the copy's own (its job is delayed instead)
  nock(CHAT).get('/rails/active_storage/queda/espera.pdf').reply(200, '%PDF', { 'content-type': 'application/pdf' });
  const urlDoFiles = config().servicos.files.url;
  config().servicos.files.url = await enderecoFechado();
  try {
    expect(await copiarAnexo(anexo.id)).toEqual({ estado: 'adiada', motivo: expect.stringContaining('file storage out of reach') });
  } finally {
    config().servicos.files.url = urlDoFiles;
  }
  expect(await esperaAntesDaCopia(anexo.id)).toBe(0);

  // spent (a crash on its last attempt), then re-armed
  await banco('sales').query('UPDATE anexo_da_mensagem SET tentativas = ?, ultima_tentativa_em = UTC_TIMESTAMP(3) WHERE id = ?', {
    replacements: [TENTATIVAS_DE_COPIA, anexo.id],
  });
  expect(await esperaAntesDaCopia(anexo.id)).toBe(0);
  expect(await retomarCopiasEsgotadas(anexo.conversa_id)).toBe(1);
  expect(await AnexoDaMensagem.findByPk(anexo.id)).toMatchObject({ tentativas: 0, ultima_tentativa_em: null });
  expect(await esperaAntesDaCopia(anexo.id)).toBe(0);
  await fila(filaSalesAnexo).remove(anexo.id);
});
