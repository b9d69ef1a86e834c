import { QueryTypes } from 'sequelize';
import { PRAZO_DA_CONTAGEM_S } from '../../api/leads/contagem';
import * as database from '../../lib/database';
import { banco, novaConexao } from '../../lib/database';
import { esperarProblema } from '../helpers/http';
import { novaGeracaoDosDados } from '../../api/leads/geracao';
import { fila } from '../../queues/fila';
import { filaLeadsContagem } from '../../queues/leads-contagem';
import { SuiteDeTeste } from '../helpers/suite';
import { Cadastro, esperados, Leads, leadsComCadastro, Visao } from './apoio-empresas';

/*
 * APIs and workers run apart (`suite api leads` without `suite worker leads-contagem`): the count
 * of GET /api/empresas has no job taker at all. The listing counts in its own process instead of
 * waiting the whole wait for an estimate (SPEC 4.2 rule 4: estimado only past the cap or the time
 * limit), and leaves no job behind in Redis.
 */

let suite: SuiteDeTeste;
let leads: Leads;
let cadastro: Cadastro;
let master: string;

beforeAll(async () => {
  ({ suite, leads, cadastro, master } = await leadsComCadastro(3, { workers: false }));
  await novaGeracaoDosDados();
});
afterAll(() => suite.encerrar());

test('with no worker of leads-contagem the listing counts itself: exact total, well within the wait, no job queued', async () => {
  const p = ({ e }: Visao) => e.uf === 'MG';
  const inicio = Date.now();
  const res = await leads.listar(master, { uf: 'MG' });
  const duracao = Date.now() - inicio;
  expect(res.status).toBe(200);
  expect(res.body).toEqual(expect.objectContaining({ total: esperados(cadastro, p).length, estimado: false }));
  expect(duracao).toBeLessThan(PRAZO_DA_CONTAGEM_S * 1000);
  const jobs = await fila(filaLeadsContagem).getJobCounts('waiting', 'active', 'prioritized', 'delayed', 'completed', 'failed');
  expect(Object.values(jobs).every((n) => n === 0)).toBe(true);

  // and the count it made is cached like the job's: the next listing finds it
  const outra = await leads.listar(master, { uf: 'MG' });
  expect(outra.body).toEqual(res.body);
});

test('listings at once with the same filters share the one count this process makes', async () => {
  await novaGeracaoDosDados();
  // the count held a moment, as a count of real data takes: the three listings, parsed and
  // authorized one after another, all arrive while it runs (over three rows it could end before
  // the last one came, which would then rightly count again)
  const lerDemorado = database.lerDemorado;
  const leitura = jest.spyOn(database, 'lerDemorado').mockImplementation(async (...args: Parameters<typeof lerDemorado>) => {
    if (/COUNT\(\*\) AS total/.test(String(args[1]))) await new Promise((r) => setTimeout(r, 500));
    return lerDemorado(...args);
  });
  try {
    const respostas = await Promise.all([leads.listar(master, { uf: 'RJ' }), leads.listar(master, { uf: 'rj' }), leads.listar(master, { uf: 'RJ' })]);
    expect(respostas.map((r) => r.status)).toEqual([200, 200, 200]);
    expect(new Set(respostas.map((r) => r.body.total)).size).toBe(1);
    expect(leitura.mock.calls.filter(([, sql]) => /COUNT\(\*\) AS total/.test(String(sql)))).toHaveLength(1);
  } finally {
    leitura.mockRestore();
  }
});

test('a count the database refuses for any other reason (a temporary table full, say) answers 503 as through the queue, not 500', async () => {
  await novaGeracaoDosDados();
  const lerDemorado = database.lerDemorado;
  const leitura = jest.spyOn(database, 'lerDemorado').mockImplementation(async (...args: Parameters<typeof lerDemorado>) => {
    if (/COUNT\(\*\) AS total/.test(String(args[1]))) throw Object.assign(new Error("The table '#sql-temptable' is full"), { errno: 1114, code: 'ER_RECORD_FILE_FULL' });
    return lerDemorado(...args);
  });
  try {
    const problema = esperarProblema(await leads.listar(master, { uf: 'MG' }), 503);
    expect(problema.detail).not.toMatch(/temptable|full/i);
  } finally {
    leitura.mockRestore();
  }
});

test('a read another connection stops (KILL QUERY, as the import\'s swap does to reads that hold it up) answers 503, not 500', async () => {
  await novaGeracaoDosDados();
  const trava = await novaConexao('leads');
  await trava.query('LOCK TABLES estabelecimento WRITE');
  let pedido: ReturnType<typeof leads.listar> | undefined;
  try {
    pedido = leads.listar(master, { uf: 'SP' });
    pedido.catch(() => undefined);
    let ids: { id: number }[] = [];
    for (let i = 0; i < 200 && !ids.length; i++) {
      await new Promise((r) => setTimeout(r, 25));
      ids = await banco('leads').query<{ id: number }>(
        `SELECT ID AS id FROM information_schema.PROCESSLIST WHERE DB = DATABASE() AND ID <> CONNECTION_ID() AND INFO LIKE '%FROM estabelecimento%'`,
        { type: QueryTypes.SELECT },
      );
    }
    expect(ids.length).toBeGreaterThan(0);
    for (const { id } of ids) await banco('leads').query(`KILL QUERY ${Number(id)}`);
  } finally {
    await trava.query('UNLOCK TABLES');
    await trava.end();
  }
  const problema = esperarProblema(await pedido!, 503);
  expect(problema.detail).not.toMatch(/interrupted|KILL|SELECT/i);
});
