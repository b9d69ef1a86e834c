import { randomUUID } from 'node:crypto';
import { varrer } from '../../api/identity/outbox';
import { QueryTypes } from 'sequelize';
import { banco } from '../../lib/database';
import { EventoPendente, MIGRACOES_IDENTITY } from '../../models/identity';
import { fila } from '../../queues/fila';
import { filaIdentityOutbox } from '../../queues/identity-outbox';
import { iniciarSuite, SuiteDeTeste } from '../helpers/suite';

/**
 * The sweep reaches every unsent event within a bounded number of runs, also when more events than
 * one run takes are unsent with their jobs retrying (a long outage of the hub): an event stored
 * after them without a job (Redis down at the change) used to wait for the whole backlog to be
 * sent. No worker runs here: jobs stay where the test leaves them.
 */

let suite: SuiteDeTeste;
beforeAll(async () => {
  suite = await iniciarSuite(['identity'], { workers: false });
});
afterAll(() => suite.encerrar());

/** `quantos` unsent events of distinct collaborators, stored `minutos` ago (older than the sweep's 30 s). */
async function guardar(quantos: number, minutos: number): Promise<string[]> {
  const eventos = await EventoPendente.bulkCreate(
    Array.from({ length: quantos }, () => {
      const colaborador = randomUUID();
      return { tipo: 'colaborador.atualizado', versao: 1, dados: { id: colaborador }, colaborador_id: colaborador, criado_em: new Date() };
    }),
  );
  const ids = eventos.map((e) => e.id);
  await banco('identity').query('UPDATE evento_pendente SET criado_em = UTC_TIMESTAMP(3) - INTERVAL ? MINUTE WHERE id IN (?)', { replacements: [minutos, ids] });
  return ids;
}

const comJob = async (ids: string[]) => (await Promise.all(ids.map((i) => fila(filaIdentityOutbox).getJob(i)))).filter(Boolean).length;

test('with more retrying events than a run takes, an event stored later without a job is enqueued within two runs, and the walk then starts over', async () => {
  const q = fila(filaIdentityOutbox);
  // the backlog: 1,000 events whose jobs back off (the hub down), the oldest of the table
  const emEspera = await guardar(1000, 60);
  await q.addBulk(emEspera.map((id) => ({ name: 'enviar', data: { id }, opts: { jobId: id, delay: 3_600_000 } })));
  // stored after them while Redis was out of reach: no job
  const esquecidos = await guardar(5, 10);
  expect(await comJob(esquecidos)).toBe(0);

  // the initial master's event too may be old enough: at most one more than the backlog
  for (let run = 0; run < 2; run++) await varrer();
  expect(await comJob(esquecidos)).toBe(5);
  // the retrying jobs were left as they were, waiting for their back-off
  expect(await q.getJobState(emEspera[0])).toBe('delayed');

  // the end reached, the next run starts from the first unsent event again: one whose job is
  // lost since the walk passed it is not left until a new walk happens to come by
  await q.remove(emEspera[0]);
  await varrer();
  expect(await q.getJobState(emEspera[0])).not.toBe('unknown');
});

test('a run reads one page of unsent events by the index on (enviado_em, sequencia), not every unsent event sorted', async () => {
  // mostly sent events, as a table in use holds, so the plan is the one it would get
  const enviados = await guardar(3000, 120);
  await banco('identity').query('UPDATE evento_pendente SET enviado_em = UTC_TIMESTAMP(3) WHERE id IN (?)', { replacements: [enviados] });
  await banco('identity').query('ANALYZE TABLE evento_pendente');
  const [plano] = await banco('identity').query<{ key: string; Extra?: string }>(
    `EXPLAIN SELECT id, sequencia FROM evento_pendente
      WHERE enviado_em IS NULL AND sequencia > 0 AND criado_em < UTC_TIMESTAMP(3) - INTERVAL 30 SECOND
      ORDER BY sequencia LIMIT 1000`,
    { type: QueryTypes.SELECT },
  );
  expect(plano.key).toBe('evento_pendente_nao_enviado_por_sequencia');
  expect(String(plano.Extra ?? '')).not.toContain('filesort');
  // run again (a stop after its one statement, before it was recorded), it changes nothing
  await MIGRACOES_IDENTITY.find((m) => m.name === '0007-identity-varredura-por-sequencia')!.up(banco('identity').getQueryInterface());
});
