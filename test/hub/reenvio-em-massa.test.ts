import { randomUUID } from 'node:crypto';
import { banco, novaConexao } from '../../lib/database';
import { reenviarFalhas } from '../../api/hub/entregas';
import { fila } from '../../queues/fila';
import { filaHubEntrega } from '../../queues/hub-entrega';
import { esperarOutraConexao } from '../helpers/espera';
import { esperarAte, hubNesteArquivo } from './apoio-entregas';

/**
 * POST /assinatura/{id}/reenviar_falhas with a large error queue (a subscriber down for hours
 * leaves hundreds of thousands): the answer comes once the deliveries are pending again, without
 * waiting for their jobs, which follow a page at a time. No delivery worker runs in this file, so
 * the jobs stay in the queue to be counted.
 */
const t = hubNesteArquivo({ entregas: false });
const N = 20_000;

test(`${N} error-queue deliveries: the answer does not wait for their jobs, and every one gets its job`, async () => {
  const c = await t.hub.cenario({ url_de_destino: t.receptor.url('/massa') });
  const { id: eventoId } = await c.publicar({ n: 1 });
  await banco('hub').query(
    `INSERT INTO entrega (id, evento_id, assinatura_id, situacao, tentativas, proxima_tentativa_em, ultimo_erro, criada_em, atualizada_em)
     SELECT UUID(), ?, ?, 'fila_de_erro', 5, NULL, 'HTTP 500', NOW(3) - INTERVAL 1 HOUR, NOW(3) - INTERVAL 1 HOUR FROM seq_1_to_${N}`,
    { replacements: [eventoId, c.assinatura.id] },
  );

  const inicio = Date.now();
  const res = await t.hub.api.post(`/assinatura/${c.assinatura.id}/reenviar_falhas`, { token: await t.hub.admin() });
  const demora = Date.now() - inicio;
  expect(res.status).toBe(202);
  expect(res.body).toEqual({ reenviadas: N });
  // queuing them all in the request took 10 s and more for this many (a third of a ms each)
  expect(demora).toBeLessThan(5000);
  const [[contagem]] = (await banco('hub').query(
    `SELECT SUM(situacao = 'pendente' AND tentativas = 0 AND ultimo_erro IS NULL) AS pendentes, COUNT(*) AS todas
       FROM entrega WHERE assinatura_id = ? AND evento_id = ?`,
    { replacements: [c.assinatura.id, eventoId] },
  )) as [{ pendentes: string; todas: number }[], unknown];
  // the N seeded and the publication's own (delivered or waiting in its batch)
  expect(Number(contagem.pendentes)).toBeGreaterThanOrEqual(N);

  // read as the dashboard reads: 20,000 jobs may take a loaded Redis past a producer's 3 s deadline
  const q = fila(filaHubEntrega, 'painel');
  // counted until that many are there, then read whole (the publication's batch job may be among them)
  await esperarAte(async () => (await q.getJobCountByTypes('waiting', 'prioritized')) >= N, `${N} jobs queued`, 60_000);
  const comJob = async () => (await q.getJobs(['waiting', 'prioritized'], 0, -1)).filter((j) => j.name === 'entregar').length;
  await esperarAte(async () => (await comJob()) === N, `a job for each of the ${N}`, 60_000, 500);
}, 120_000);

test('a replay meeting the retention purge (which locks deliveries, then their subscription: the opposite order) is run again, not failed', async () => {
  const c = await t.hub.cenario({ url_de_destino: t.receptor.url('/purga') });
  const { id: eventoId } = await c.publicar({ n: 1 });
  const [falha, entregue] = [randomUUID(), randomUUID()];
  await banco('hub').query(
    `INSERT INTO entrega (id, evento_id, assinatura_id, situacao, tentativas, entregue_em, ultimo_erro, criada_em, atualizada_em) VALUES
      (?, ?, ?, 'fila_de_erro', 5, NULL, 'HTTP 500', NOW(3) - INTERVAL 40 DAY, NOW(3) - INTERVAL 40 DAY),
      (?, ?, ?, 'entregue', 1, NOW(3) - INTERVAL 40 DAY, NULL, NOW(3) - INTERVAL 40 DAY, NOW(3) - INTERVAL 40 DAY)`,
    { replacements: [falha, eventoId, c.assinatura.id, entregue, eventoId, c.assinatura.id] },
  );
  // the purge's batch, statement by statement: its deliveries locked, then the subscription's last success kept
  const purga = await novaConexao('hub');
  let res: Awaited<ReturnType<typeof t.hub.api.post>>;
  try {
    await purga.query('START TRANSACTION');
    await purga.query("SELECT id FROM entrega WHERE id IN (?) AND situacao IN ('entregue', 'fila_de_erro', 'cancelada') FOR UPDATE", [[falha, entregue]]);
    const pedido = t.hub.api.post(`/assinatura/${c.assinatura.id}/reenviar_falhas`, { token: await t.hub.admin() });
    await esperarOutraConexao(purga, 'the replay waiting on the delivery', ['UPDATE entrega FORCE INDEX (PRIMARY)%']);
    await purga.query(
      `UPDATE assinatura a JOIN (SELECT assinatura_id, MAX(entregue_em) AS ultima FROM entrega WHERE id IN (?) AND situacao = 'entregue' GROUP BY assinatura_id) x
          ON x.assinatura_id = a.id SET a.ultima_entrega_em = x.ultima WHERE a.ultima_entrega_em IS NULL OR a.ultima_entrega_em < x.ultima`,
      [[falha, entregue]],
    );
    await purga.query('COMMIT');
    res = await pedido;
  } finally {
    await purga.end();
  }
  expect(res.status).toBe(202);
  expect(res.body).toEqual({ reenviadas: 1 });
}, 60_000);

test('a replay whose later page fails answers the failure, and the pages already replayed get their jobs at once, not minutes later from the sweep', async () => {
  const c = await t.hub.cenario({ url_de_destino: t.receptor.url('/pagina-falha') });
  const { id: eventoId } = await c.publicar({ n: 1 });
  const ids = Array.from({ length: 5 }, () => randomUUID());
  await banco('hub').query(
    `INSERT INTO entrega (id, evento_id, assinatura_id, situacao, tentativas, ultimo_erro, criada_em, atualizada_em)
     VALUES ${ids.map(() => `(?, ?, ?, 'fila_de_erro', 5, 'HTTP 500', NOW(3) - INTERVAL 1 HOUR, NOW(3) - INTERVAL 1 HOUR)`).join(', ')}`,
    { replacements: ids.flatMap((id) => [id, eventoId, c.assinatura.id]) },
  );
  // the second page's transaction fails (the database out of reach for a moment, say); only the
  // replay's own are counted, whatever else of this process opens one meanwhile
  const sequelize = banco('hub');
  const transacao = sequelize.transaction.bind(sequelize);
  let chamadas = 0;
  const espiao = jest.spyOn(sequelize, 'transaction').mockImplementation(((...args: unknown[]) => {
    if (new Error().stack?.includes('reenviarFalhas') && ++chamadas === 2) return Promise.reject(new Error('falha simulada da segunda página'));
    return (transacao as (...a: unknown[]) => unknown)(...args);
  }) as typeof sequelize.transaction);
  try {
    await expect(reenviarFalhas(c.assinatura.id, 2)).rejects.toThrow('falha simulada da segunda página');
  } finally {
    espiao.mockRestore();
  }
  const [pendentes] = (await banco('hub').query(`SELECT id FROM entrega WHERE id IN (?) AND situacao = 'pendente'`, { replacements: [ids] })) as [{ id: string }[], unknown];
  expect(pendentes).toHaveLength(2);
  const q = fila(filaHubEntrega, 'painel');
  await esperarAte(async () => (await Promise.all(pendentes.map((p) => q.getJob(p.id)))).every(Boolean), 'a job for each delivery replayed before the failure', 5000);
  // the rest stays in the error queue, for a retry to take
  const [naFila] = (await banco('hub').query(`SELECT COUNT(*) AS n FROM entrega WHERE id IN (?) AND situacao = 'fila_de_erro'`, { replacements: [ids] })) as [{ n: number }[], unknown];
  expect(Number(naFila[0].n)).toBe(3);
});
