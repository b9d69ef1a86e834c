import { randomUUID } from 'node:crypto';
import { Job } from 'bullmq';
import { purgarEventosEnviados, ResultadoDaPurgaDoOutbox } from '../../api/identity/outbox';
import { config } from '../../config';
import { processarIdentityOutbox } from '../../jobs/identity-outbox';
import { agendarRepetiveis } from '../../lib/runner';
import { EventoPendente } from '../../models/identity';
import { fila } from '../../queues/fila';
import { filaIdentityOutbox, INTERVALO_DA_PURGA_MS } from '../../queues/identity-outbox';
import { iniciarSuite, SuiteDeTeste } from '../helpers/suite';

/**
 * Retention of the outbox: events the hub accepted more than IDENTITY_OUTBOX_RETENCAO_DIAS ago
 * (they hold the whole user, names and e-mails) are deleted by a repeatable job, in batches;
 * unsent ones stay, whatever their age, and so does the table's newest row, which keeps the
 * events' counter from ever going back. No worker runs here: the purge is called by hand.
 */

let suite: SuiteDeTeste;
beforeAll(async () => {
  suite = await iniciarSuite(['identity'], { workers: false, env: { IDENTITY_OUTBOX_RETENCAO_DIAS: '7' } });
});
afterAll(() => suite.encerrar());
beforeEach(() => EventoPendente.destroy({ where: {} }));

/**
 * `quantos` events stored `diasAtras` days ago, sent `enviadoHaDias` days ago (null: unsent), in
 * one insert: their `sequencia` follows the order of the calls.
 */
async function guardar(quantos: number, diasAtras: number, enviadoHaDias: number | null): Promise<string[]> {
  const eventos = await EventoPendente.bulkCreate(
    Array.from({ length: quantos }, () => {
      const colaborador = randomUUID();
      return {
        tipo: 'colaborador.atualizado',
        versao: 1,
        dados: { id: colaborador, nome: 'Alguém', email: `${colaborador}@empresa.test` },
        colaborador_id: colaborador,
        criado_em: new Date(Date.now() - diasAtras * 86_400_000),
        enviado_em: enviadoHaDias === null ? null : new Date(Date.now() - enviadoHaDias * 86_400_000),
      };
    }),
  );
  return eventos.map((e) => e.id);
}

const restantes = async () => new Set((await EventoPendente.findAll({ attributes: ['id'] })).map((e) => e.id));

test('events sent more than the period ago are deleted in batches, the count reported after each; unsent and recently sent ones stay', async () => {
  const velhos = await guardar(2100, 45, 40);
  const semEnvio = await guardar(3, 400, null);
  const recentes = await guardar(4, 20, 20);
  // sent after an outage: stored long ago, accepted within the period
  const tardios = await guardar(2, 60, 1);

  const progresso: ResultadoDaPurgaDoOutbox[] = [];
  expect(await purgarEventosEnviados(30, { aoProgredir: (r) => progresso.push(r) })).toEqual({ apagados: 2100 });
  expect(progresso).toEqual([{ apagados: 1000 }, { apagados: 2000 }, { apagados: 2100 }]);
  const ficaram = await restantes();
  expect(velhos.filter((id) => ficaram.has(id))).toEqual([]);
  expect(ficaram).toEqual(new Set([...semEnvio, ...recentes, ...tardios]));

  // nothing left past the period: a purge again deletes nothing
  expect(await purgarEventosEnviados(30)).toEqual({ apagados: 0 });
});

test("the table's newest row stays whatever its age, so the counter of `sequencia` cannot start over; the next purge takes it once a newer one exists", async () => {
  await guardar(5, 90, 90);
  const [maisNovo] = await guardar(1, 90, 90);
  expect(await purgarEventosEnviados(30)).toEqual({ apagados: 5 });
  expect(await restantes()).toEqual(new Set([maisNovo]));

  const [seguinte] = await guardar(1, 0, null);
  const ordem = await EventoPendente.findAll({ attributes: ['id', 'sequencia'], order: [['sequencia', 'ASC']] });
  expect(ordem.map((e) => e.id)).toEqual([maisNovo, seguinte]);
  expect(await purgarEventosEnviados(30)).toEqual({ apagados: 1 });
  expect(await restantes()).toEqual(new Set([seguinte]));
});

test('a shutdown stops the purge between two batches; the next one goes on', async () => {
  await guardar(2500, 40, 40);
  await guardar(1, 0, null);
  const parar = new AbortController();
  const resultado = await purgarEventosEnviados(30, { sinal: parar.signal, aoProgredir: () => parar.abort() });
  expect(resultado).toEqual({ apagados: 1000, interrompida: true });
  expect(await EventoPendente.count()).toBe(1501);
  expect(await purgarEventosEnviados(30)).toEqual({ apagados: 1500 });
});

test('the queue schedules `purgar` hourly (run once, as every repeatable job), and its job purges by IDENTITY_OUTBOX_RETENCAO_DIAS, the count on the dashboard', async () => {
  expect(config().identity.outboxRetencaoDias).toBe(7);
  await agendarRepetiveis();
  const agendados = await fila(filaIdentityOutbox).getJobSchedulers();
  expect(agendados.find((a) => a.key === 'purgar')).toMatchObject({ every: INTERVALO_DA_PURGA_MS, template: { opts: { attempts: 1 } } });

  const passados = await guardar(3, 10, 10);
  const dentro = await guardar(2, 5, 5);
  await guardar(1, 0, null);
  const progresso: object[] = [];
  const job = { name: 'purgar', data: {}, updateProgress: async (p: object) => void progresso.push(p) } as unknown as Job;
  expect(await processarIdentityOutbox(job)).toEqual({ apagados: 3 });
  expect(progresso).toEqual([{ apagados: 3 }]);
  const ficaram = await restantes();
  expect(passados.some((id) => ficaram.has(id))).toBe(false);
  expect(dentro.every((id) => ficaram.has(id))).toBe(true);
});
