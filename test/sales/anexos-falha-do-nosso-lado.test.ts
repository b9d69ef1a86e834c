import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import http from 'node:http';
import { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import nock from 'nock';
import { copiarAnexo } from '../../api/sales/anexos';
import { esquecerTokenDoServico } from '../../api/shared/token-do-servico';
import { config } from '../../config';
import { banco } from '../../lib/database';
import { Aplicativo } from '../../models/identity';
import { AnexoDaMensagem } from '../../models/sales';
import { fila } from '../../queues/fila';
import { filaSalesAnexo, TENTATIVAS_DE_COPIA } from '../../queues/sales-anexo';
import { esperarAte } from '../helpers/espera';
import type { Registro } from '../helpers/registros';
import { anexosNesteArquivo, CHAT, eventoDeMensagem, idDoSuporte } from './apoio';

const mockRegistros: Registro[] = [];
jest.mock('../../lib/logger', () => jest.requireActual('../helpers/registros').loggerQueRegistra('sales-anexo', ['error'], () => mockRegistros));

/**
 * SPEC 4.6 rule 7 (a failed copy is retried every 30 minutes, up to 5 more times) counts the
 * failures of the attachment: its download, file storage refusing the file. A failure of the
 * suite's own side (the sales application's secret renewed at identity and not yet set, identity
 * or file storage out of reach or failing) puts the copy off on the same schedule without spending
 * an attempt, logged as an error naming the cause: an outage delays copies instead of losing them.
 */

const t = anexosNesteArquivo();
beforeEach(() => mockRegistros.splice(0));

/** A PDF the chat platform serves at `caminho` for as long as the test runs; answers how many times it was downloaded. */
function pdfNoChat(caminho: string): () => number {
  let downloads = 0;
  nock(CHAT)
    .persist()
    .get(caminho)
    .reply(200, () => (downloads++, Buffer.from(`%PDF-${caminho}`)), { 'content-type': 'application/pdf' });
  return () => downloads;
}

/** A message with one attachment at `endereco`; answers the attachment's record. */
async function anexoEm(endereco: string, o: { sistema?: { id: string; token: string } } = {}) {
  const r = await t.s.registrar(o.sistema ?? t.sistema, eventoDeMensagem({ conversa: idDoSuporte(), conteudo: 'segue', anexos: [{ id: idDoSuporte(), data_url: endereco, file_type: 'file' }] }));
  return (await AnexoDaMensagem.findOne({ where: { conversa_id: r.conversa_id } }))!;
}

/** The same, its job taken out of the queue before a worker runs it: the test copies it. */
async function anexoForaDaFila(endereco: string, o: { sistema?: { id: string; token: string } } = {}) {
  const q = fila(filaSalesAnexo);
  await q.pause();
  try {
    const anexo = await anexoEm(endereco, o);
    await q.remove(anexo.id);
    return anexo;
  } finally {
    await q.resume();
  }
}

const estado = async (id: string) => {
  const a = (await AnexoDaMensagem.findByPk(id))!;
  return { tentativas: a.tentativas, copiado: a.arquivo_id !== null, ultimo_erro: a.ultimo_erro };
};

/** A local server, listening; answers its origin. */
async function escutar(servidor: http.Server): Promise<string> {
  await new Promise<void>((r) => servidor.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(servidor.address() as AddressInfo).port}`;
}
const fechar = async (servidor: http.Server) => {
  servidor.closeAllConnections();
  await new Promise((r) => servidor.close(r));
};

/** An address where nothing listens (a port just released). */
async function enderecoFechado(): Promise<string> {
  const servidor = http.createServer();
  const origem = await escutar(servidor);
  await fechar(servidor);
  return origem;
}

/** `url` of a service, changed while `agir` runs. */
async function comEndereco<T>(servico: 'files' | 'identity', url: string, agir: () => Promise<T>): Promise<T> {
  const antes = config().servicos[servico].url;
  config().servicos[servico].url = url;
  try {
    return await agir();
  } finally {
    config().servicos[servico].url = antes;
  }
}

test("identity refusing the sales application's credentials (its secret renewed, not yet set): the copy waits on the same schedule, spending no attempt however long, says why, and is copied once the secret is set", async () => {
  const aplicativo = (await Aplicativo.findOne({ where: { servico_da_suite: 'sales' } }))!;
  const renovar = async () => {
    const res = await t.s.identity.api.post(`/aplicativo/${aplicativo.id}/segredo`, { token: await t.s.admin() });
    expect(res.status).toBe(200);
    return res.body.client_secret as string;
  };
  // the service's secret is set as outside LOCALHOST (SALES_CLIENT_SECRET), then renewed at identity
  Object.assign(config().servicos.sales, { clientId: aplicativo.id, clientSecret: await renovar() });
  const renovado = await renovar();
  // the token already held lasts its hour: the next copies ask for one with the old secret
  esquecerTokenDoServico('sales');

  const downloads = pdfNoChat('/rails/active_storage/recusa/contrato.pdf');
  const anexo = await anexoEm(`${CHAT}/rails/active_storage/recusa/contrato.pdf`);
  const q = fila(filaSalesAnexo);
  const runs = () => mockRegistros.filter((r) => (r.args[0] as { anexo_id?: string }).anexo_id === anexo.id);
  try {
    // more runs than the six attempts SPEC allows the attachment
    await esperarAte(() => runs().length > TENTATIVAS_DE_COPIA, 'runs past the six attempts');
    // looked at between runs: the queue paused, its run under way over
    await q.pause();
    await esperarAte(async () => (await q.getJobState(anexo.id)) !== 'active', 'the run under way over');
    expect(await estado(anexo.id)).toEqual({ tentativas: 0, copiado: false, ultimo_erro: expect.stringContaining("identity refused the sales service's credentials") });
    expect((await q.getJob(anexo.id))!.attemptsMade).toBe(0);
    // the dashboard shows why it waits, and so does the log, once per run, naming the attachment
    const { logs } = await q.getJobLogs(anexo.id);
    expect(logs.length).toBeGreaterThanOrEqual(TENTATIVAS_DE_COPIA);
    expect(logs[0]).toContain("identity refused the sales service's credentials");
    expect(runs()[0].args[0]).toMatchObject({ erro: expect.stringContaining('SALES_CLIENT_ID/SALES_CLIENT_SECRET') });
    // the token is asked for first: the chat platform is not asked for the attachment every run for nothing
    expect(downloads()).toBe(0);
  } finally {
    await q.resume();
    // the operator sets the new secret (README, "Renewing a suite service's secret")
    config().servicos.sales.clientSecret = renovado;
  }
  const copiado = await esperarAte(async () => {
    const e = await estado(anexo.id);
    return e.copiado && e;
  }, 'the copy once the secret is set');
  expect(copiado).toEqual({ tentativas: 1, copiado: true, ultimo_erro: null });
  expect(downloads()).toBe(1);
});

test('identity or file storage out of reach, or file storage failing (5xx): the copy is put off, its attempt given back, and copied once they answer', async () => {
  const downloads = pdfNoChat('/rails/active_storage/fora/nota.pdf');
  const anexo = await anexoForaDaFila(`${CHAT}/rails/active_storage/fora/nota.pdf`);

  esquecerTokenDoServico('sales');
  const semIdentity = await comEndereco('identity', await enderecoFechado(), () => copiarAnexo(anexo.id));
  expect(semIdentity).toEqual({ estado: 'adiada', motivo: expect.stringMatching(/^no token for the sales application: fetch failed \(connect ECONNREFUSED /) });
  // no token, no download: the chat platform is not asked for an attachment that cannot be stored
  expect(downloads()).toBe(0);

  const semFiles = await comEndereco('files', await enderecoFechado(), () => copiarAnexo(anexo.id));
  expect(semFiles).toEqual({ estado: 'adiada', motivo: expect.stringMatching(/^file storage out of reach: fetch failed \(connect ECONNREFUSED /) });

  const falhando = http.createServer((req, res) => req.resume().on('end', () => res.writeHead(503).end()));
  try {
    expect(await comEndereco('files', await escutar(falhando), () => copiarAnexo(anexo.id))).toEqual({ estado: 'adiada', motivo: 'file storage answered 503 to the upload' });
  } finally {
    await fechar(falhando);
  }
  expect(await estado(anexo.id)).toEqual({ tentativas: 0, copiado: false, ultimo_erro: 'file storage answered 503 to the upload' });
  expect(mockRegistros.map((r) => (r.args[0] as { anexo_id: string }).anexo_id)).toEqual([anexo.id, anexo.id, anexo.id]);

  expect(await copiarAnexo(anexo.id)).toEqual({ estado: 'copiado' });
  expect(await estado(anexo.id)).toEqual({ tentativas: 1, copiado: true, ultimo_erro: null });
});

/** `coluna` of the attachment set `intervalo` before now, on the database's clock. */
const envelhecer = (id: string, coluna: 'criado_em' | 'adiada_desde', intervalo: string) =>
  banco('sales').query(`UPDATE anexo_da_mensagem SET ${coluna} = UTC_TIMESTAMP(3) - INTERVAL ${intervalo} WHERE id = ?`, { replacements: [id] });
const adiadaDesde = async (id: string) => (await AnexoDaMensagem.findByPk(id))!.adiada_desde;
const semFiles = async (id: string) => comEndereco('files', await enderecoFechado(), () => copiarAnexo(id));

test('past SALES_ANEXO_ADIAMENTO_MAXIMO_MS (7 days) since the copy was first put off, a failure of our side spends its attempt like its own, so no copy waits for good', async () => {
  nock(CHAT).persist().get('/rails/active_storage/antigo/nota.pdf').reply(200, Buffer.from('%PDF-antigo'), { 'content-type': 'application/pdf' });
  const anexo = await anexoForaDaFila(`${CHAT}/rails/active_storage/antigo/nota.pdf`);
  expect(config().sales.anexoAdiamentoMaximoMs).toBe(7 * 24 * 3600_000);

  expect(await semFiles(anexo.id)).toEqual({ estado: 'adiada', motivo: expect.stringContaining('file storage out of reach') });
  expect(await adiadaDesde(anexo.id)).not.toBeNull();

  // put off six days and 23 hours ago: still put off, the series counted from its first put-off
  await envelhecer(anexo.id, 'adiada_desde', '167 HOUR');
  const primeira = await adiadaDesde(anexo.id);
  expect(await semFiles(anexo.id)).toEqual({ estado: 'adiada', motivo: expect.stringContaining('file storage out of reach') });
  expect(await estado(anexo.id)).toMatchObject({ tentativas: 0 });
  expect(await adiadaDesde(anexo.id)).toEqual(primeira);

  // past the week: the same failure spends the attempt, and says so
  await envelhecer(anexo.id, 'adiada_desde', '169 HOUR');
  await expect(semFiles(anexo.id)).rejects.toThrow('file storage out of reach');
  expect(await estado(anexo.id)).toEqual({ tentativas: 1, copiado: false, ultimo_erro: expect.stringContaining('file storage out of reach') });
  await expect(semFiles(anexo.id)).rejects.toThrow('file storage out of reach');
  expect((await estado(anexo.id)).tentativas).toBe(2);
  expect(mockRegistros.map((r) => r.args[1])).toEqual([
    expect.stringContaining('adiada'),
    expect.stringContaining('adiada'),
    expect.stringContaining('SALES_ANEXO_ADIAMENTO_MAXIMO_MS'),
    expect.stringContaining('SALES_ANEXO_ADIAMENTO_MAXIMO_MS'),
  ]);

  // a longer setting puts it off again
  const maximo = config().sales.anexoAdiamentoMaximoMs;
  config().sales.anexoAdiamentoMaximoMs = 30 * 24 * 3600_000;
  try {
    expect(await semFiles(anexo.id)).toEqual({ estado: 'adiada', motivo: expect.any(String) });
  } finally {
    config().sales.anexoAdiamentoMaximoMs = maximo;
  }
  expect((await estado(anexo.id)).tentativas).toBe(2);
  expect(await copiarAnexo(anexo.id)).toEqual({ estado: 'copiado' });
});

test('an attachment recorded a month ago, re-armed by hand (tentativas back to 0): a failure of our side puts its copy off, no attempt spent', async () => {
  nock(CHAT).persist().get('/rails/active_storage/rearmado/nota.pdf').reply(200, Buffer.from('%PDF-rearmado'), { 'content-type': 'application/pdf' });
  const anexo = await anexoForaDaFila(`${CHAT}/rails/active_storage/rearmado/nota.pdf`);
  await envelhecer(anexo.id, 'criado_em', '30 DAY');
  await AnexoDaMensagem.update({ tentativas: 0 }, { where: { id: anexo.id } });

  expect(await semFiles(anexo.id)).toEqual({ estado: 'adiada', motivo: expect.stringContaining('file storage out of reach') });
  expect((await estado(anexo.id)).tentativas).toBe(0);
  expect(await copiarAnexo(anexo.id)).toEqual({ estado: 'copiado' });
});

test('a copy whose last attempt a failure of our side spent past the week is given up: re-armed by hand, it is put off anew', async () => {
  nock(CHAT).persist().get('/rails/active_storage/esgotado/nota.pdf').reply(200, Buffer.from('%PDF-esgotado'), { 'content-type': 'application/pdf' });
  const anexo = await anexoForaDaFila(`${CHAT}/rails/active_storage/esgotado/nota.pdf`);
  expect(await semFiles(anexo.id)).toEqual({ estado: 'adiada', motivo: expect.any(String) });
  await envelhecer(anexo.id, 'adiada_desde', '8 DAY');
  await AnexoDaMensagem.update({ tentativas: TENTATIVAS_DE_COPIA - 1 }, { where: { id: anexo.id } });

  await expect(semFiles(anexo.id)).rejects.toThrow('file storage out of reach');
  expect((await estado(anexo.id)).tentativas).toBe(TENTATIVAS_DE_COPIA);
  expect(await adiadaDesde(anexo.id)).toBeNull();
  // given up without a file: its key is listed for clean-up
  expect(await banco('sales').query('SELECT chave FROM chave_a_apagar WHERE chave = ?', { replacements: [`anexo-${anexo.id}`], type: 'SELECT' })).toHaveLength(1);

  await AnexoDaMensagem.update({ tentativas: 0 }, { where: { id: anexo.id } });
  expect(await semFiles(anexo.id)).toEqual({ estado: 'adiada', motivo: expect.any(String) });
  expect((await estado(anexo.id)).tentativas).toBe(0);
});

test("the copy made, or failed on the attachment's own, ends its put-off series: the next failure of our side starts the week again", async () => {
  // the chat platform answers an error to the second download, the first copy's put off on our side
  let downloads = 0;
  nock(CHAT)
    .persist()
    .get('/rails/active_storage/serie/nota.pdf')
    .reply(() => (++downloads === 2 ? [503] : [200, Buffer.from('%PDF-serie'), { 'content-type': 'application/pdf' }]));
  const anexo = await anexoForaDaFila(`${CHAT}/rails/active_storage/serie/nota.pdf`);

  expect(await semFiles(anexo.id)).toEqual({ estado: 'adiada', motivo: expect.any(String) });
  expect(await adiadaDesde(anexo.id)).not.toBeNull();
  await envelhecer(anexo.id, 'adiada_desde', '8 DAY');
  // the download answering 503: the attachment's own failure
  await expect(copiarAnexo(anexo.id)).rejects.toThrow("the attachment's address answered 503");
  expect(await adiadaDesde(anexo.id)).toBeNull();

  // put off again, not past the week: a new series
  expect(await semFiles(anexo.id)).toEqual({ estado: 'adiada', motivo: expect.any(String) });
  expect((await estado(anexo.id)).tentativas).toBe(1);
  expect(await adiadaDesde(anexo.id)).not.toBeNull();

  expect(await copiarAnexo(anexo.id)).toEqual({ estado: 'copiado' });
  expect(await adiadaDesde(anexo.id)).toBeNull();
});

test('no credentials configured for the sales application (outside LOCALHOST, SALES_CLIENT_SECRET is optional) is no outage: the copy spends its attempts as before, instead of waiting for good', async () => {
  nock(CHAT).persist().get('/rails/active_storage/sem-credenciais/nota.pdf').reply(200, Buffer.from('%PDF-sem'), { 'content-type': 'application/pdf' });
  const anexo = await anexoForaDaFila(`${CHAT}/rails/active_storage/sem-credenciais/nota.pdf`);
  const c = config();
  const antes = { ambiente: c.ambiente, clientId: c.servicos.sales.clientId, clientSecret: c.servicos.sales.clientSecret };
  Object.assign(c, { ambiente: 'SANDBOX' });
  Object.assign(c.servicos.sales, { clientId: undefined, clientSecret: undefined });
  esquecerTokenDoServico('sales');
  try {
    await expect(copiarAnexo(anexo.id)).rejects.toThrow('the sales application has no credentials');
    await expect(copiarAnexo(anexo.id)).rejects.toThrow('the sales application has no credentials');
  } finally {
    Object.assign(c, { ambiente: antes.ambiente });
    Object.assign(c.servicos.sales, { clientId: antes.clientId, clientSecret: antes.clientSecret });
  }
  expect(await estado(anexo.id)).toEqual({ tentativas: 2, copiado: false, ultimo_erro: expect.stringContaining('SALES_CLIENT_ID / SALES_CLIENT_SECRET') });
  // an ordinary failure: no error line of a copy put off
  expect(mockRegistros).toHaveLength(0);
});

test('in LOCALHOST, credentials not written yet (identity, which writes them as it starts, not started) are ours: the copy is put off, no attempt spent', async () => {
  nock(CHAT).persist().get('/rails/active_storage/antes-do-identity/nota.pdf').reply(200, Buffer.from('%PDF-antes'), { 'content-type': 'application/pdf' });
  const anexo = await anexoForaDaFila(`${CHAT}/rails/active_storage/antes-do-identity/nota.pdf`);
  const c = config();
  const antes = { ambiente: c.ambiente, dataDir: c.dataDir, clientId: c.servicos.sales.clientId, clientSecret: c.servicos.sales.clientSecret };
  // a data folder with no credentials file in it: identity has written none there
  Object.assign(c, { ambiente: 'LOCALHOST', dataDir: mkdtempSync(path.join(tmpdir(), 'sem-credenciais-')) });
  Object.assign(c.servicos.sales, { clientId: undefined, clientSecret: undefined });
  esquecerTokenDoServico('sales');
  try {
    expect(await copiarAnexo(anexo.id)).toEqual({ estado: 'adiada', motivo: expect.stringContaining('identity writes them as it starts') });
  } finally {
    Object.assign(c, { ambiente: antes.ambiente, dataDir: antes.dataDir });
    Object.assign(c.servicos.sales, { clientId: antes.clientId, clientSecret: antes.clientSecret });
  }
  expect((await estado(anexo.id)).tentativas).toBe(0);
});

test("the attachment's own failures spend their attempts as before, between runs put off on our side: a download answering an error or breaking off", async () => {
  // the chat platform: an error at the first request, an answer broken off at the third, else the bytes whole
  const bytes = randomBytes(512 * 1024);
  let pedidos = 0;
  const plataforma = http.createServer((_req, res) => {
    pedidos++;
    if (pedidos === 1) return res.writeHead(503).end();
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(bytes.length) });
    if (pedidos === 3) return res.write(bytes.subarray(0, 64 * 1024), () => res.socket!.destroy());
    res.end(bytes);
  });
  const origem = await escutar(plataforma);
  try {
    const proprio = await t.s.criarSistema('suporte', { url: origem, conta_id: 1 });
    const anexo = await anexoForaDaFila(`${origem}/rails/active_storage/proprio/dados.bin`, { sistema: proprio });

    await expect(copiarAnexo(anexo.id)).rejects.toThrow("the attachment's address answered 503");
    expect((await estado(anexo.id)).tentativas).toBe(1);

    // file storage out of reach: no attempt
    expect(await comEndereco('files', await enderecoFechado(), () => copiarAnexo(anexo.id))).toEqual({ estado: 'adiada', motivo: expect.any(String) });
    expect((await estado(anexo.id)).tentativas).toBe(1);

    // the download breaking off fails the upload reading it: the attachment's failure still
    await expect(copiarAnexo(anexo.id)).rejects.toThrow();
    expect((await estado(anexo.id)).tentativas).toBe(2);

    // (file storage refusing the file as too large stops the copy at once: anexos-grande-demais.test.ts)
    expect(await copiarAnexo(anexo.id)).toEqual({ estado: 'copiado' });
    expect(await estado(anexo.id)).toEqual({ tentativas: 3, copiado: true, ultimo_erro: null });
    // only the run put off on our side was logged as an error
    expect(mockRegistros).toHaveLength(1);
  } finally {
    await fechar(plataforma);
  }
});

test('a system switched off for now (ativo false) is not called: its copies wait, no attempt spent, and are copied once it is active again', async () => {
  const downloads = pdfNoChat('/rails/active_storage/pausado/nota.pdf');
  const pausado = await t.s.criarSistema('suporte', { url: CHAT, conta_id: 1, token_api: 'token-do-pausado' });
  const anexo = await anexoForaDaFila(`${CHAT}/rails/active_storage/pausado/nota.pdf`, { sistema: pausado });
  const ativar = async (ativo: boolean) => expect((await t.s.api.patch(`/config_system/${pausado.id}`, { token: await t.s.admin(), body: { ativo } })).status).toBe(200);
  await ativar(false);
  for (let vez = 0; vez < TENTATIVAS_DE_COPIA + 1; vez++) {
    expect(await copiarAnexo(anexo.id)).toEqual({ estado: 'adiada', motivo: expect.stringContaining('system is inactive') });
  }
  expect(await estado(anexo.id)).toEqual({ tentativas: 0, copiado: false, ultimo_erro: expect.stringContaining('system is inactive') });
  expect(downloads()).toBe(0);
  await ativar(true);
  expect(await copiarAnexo(anexo.id)).toEqual({ estado: 'copiado' });
  expect(await estado(anexo.id)).toEqual({ tentativas: 1, copiado: true, ultimo_erro: null });
  expect(downloads()).toBe(1);
});

test('a copy that fails lets go of its download at once, not at the end of its two minutes', async () => {
  let fechada = false;
  const plataforma = http.createServer((req, res) => {
    req.socket.on('close', () => (fechada = true));
    // an attachment large enough to be under way when the copy fails
    res.writeHead(200, { 'content-type': 'video/mp4', 'content-length': String(64 * 1024 * 1024) });
    res.write(randomBytes(1024 * 1024));
  });
  const origem = await escutar(plataforma);
  try {
    const proprio = await t.s.criarSistema('suporte', { url: origem, conta_id: 1 });
    const anexo = await anexoForaDaFila(`${origem}/rails/active_storage/grande/video.mp4`, { sistema: proprio });
    expect(await comEndereco('files', await enderecoFechado(), () => copiarAnexo(anexo.id))).toEqual({ estado: 'adiada', motivo: expect.any(String) });
    await esperarAte(() => fechada, 'the download let go', 2000);
  } finally {
    await fechar(plataforma);
  }
});
