import { AddressInfo } from 'node:net';
import { enviar, varrer } from '../../api/identity/outbox';
import { banco } from '../../lib/database';
import { EventoPendente } from '../../models/identity';
import { fila } from '../../queues/fila';
import { filaIdentityOutbox } from '../../queues/identity-outbox';
import { identityDe } from '../helpers/identity';
import { comRelogioAdiantado } from '../helpers/relogio';
import { servidorQueLeOCorpo } from '../helpers/http';
import { iniciarSuite, SuiteDeTeste } from '../helpers/suite';

/**
 * A collaborator's events reach the hub in the order they happened, also when they were stored by
 * identity processes whose clocks disagree: the order comes from the database, not from the clock
 * of the process that made the change. The sweep, too, judges an event's age by the database's
 * clock. No worker runs here: the test sends and sweeps by hand.
 */

const recebidos: any[] = [];
const hub = servidorQueLeOCorpo((bruto, _req, res) => {
  recebidos.push(JSON.parse(bruto));
  res.writeHead(202, { 'content-type': 'application/json' }).end('{}');
});

let suite: SuiteDeTeste;
let id: ReturnType<typeof identityDe>;
beforeAll(async () => {
  await new Promise<void>((resolve) => hub.listen(0, '127.0.0.1', resolve));
  suite = await iniciarSuite(['identity'], { workers: false, env: { HUB_URL: `http://127.0.0.1:${(hub.address() as AddressInfo).port}` } });
  id = identityDe(suite.url.identity);
});
afterAll(async () => {
  await suite.encerrar();
  hub.closeAllConnections();
  await new Promise((resolve) => hub.close(resolve));
});

test('two quick changes made by two identity processes, the first with its clock five minutes ahead, reach the hub in the order they were made', async () => {
  const admin = await id.admin();
  const u = await id.criarUsuario({ senha: undefined });
  const mudar = (nome: string) => id.api.patch(`/usuario/${u.id}`, { token: admin, body: { nome } });

  expect((await comRelogioAdiantado(5 * 60_000, () => mudar('Primeiro Nome'))).status).toBe(200);
  expect((await mudar('Segundo Nome')).status).toBe(200);

  const eventos = await EventoPendente.findAll({ where: { colaborador_id: u.id } });
  const segundo = eventos.find((e) => e.dados.nome === 'Segundo Nome')!;
  // the job of the later change runs first: it sends the earlier ones before its own
  expect(await enviar(segundo.id)).toBe('enviado');

  const doUsuario = recebidos.filter((r) => r.dados.id === u.id).map((r) => `${r.tipo} ${r.dados.nome}`);
  expect(doUsuario).toEqual([`colaborador.criado ${u.nome}`, 'colaborador.atualizado Primeiro Nome', 'colaborador.atualizado Segundo Nome']);
  for (const e of eventos) expect(await enviar(e.id)).toBe('ja_enviado');
});

test('an event stored by a process whose clock runs five minutes ahead, and never enqueued, is swept 30 s after it was stored by the database\'s clock, by a process whose clock runs behind too', async () => {
  const admin = await id.admin();
  const u = await id.criarUsuario({ senha: undefined });
  const res = await comRelogioAdiantado(5 * 60_000, () => id.api.patch(`/usuario/${u.id}`, { token: admin, body: { nome: 'Nome Adiantado' } }));
  expect(res.status).toBe(200);
  const evento = (await EventoPendente.findAll({ where: { colaborador_id: u.id } })).find((e) => e.dados.nome === 'Nome Adiantado')!;
  // its job lost (Redis out of reach when the change was made): only the sweep brings it back
  await fila(filaIdentityOutbox).remove(evento.id);
  const idade = async () => {
    const [[{ segundos }]] = (await banco('identity').query('SELECT TIMESTAMPDIFF(SECOND, criado_em, UTC_TIMESTAMP(3)) AS segundos FROM evento_pendente WHERE id = ?', {
      replacements: [evento.id],
    })) as [{ segundos: number }[], unknown];
    return Number(segundos);
  };
  expect(await idade()).toBeGreaterThanOrEqual(0);
  expect(await idade()).toBeLessThan(5);

  await comRelogioAdiantado(-5 * 60_000, varrer);
  expect(await fila(filaIdentityOutbox).getJob(evento.id)).toBeUndefined();
  // 31 s later by the database's clock (without waiting them)
  await banco('identity').query('UPDATE evento_pendente SET criado_em = criado_em - INTERVAL 31 SECOND WHERE id = ?', { replacements: [evento.id] });
  await comRelogioAdiantado(-5 * 60_000, varrer);
  expect(await fila(filaIdentityOutbox).getJob(evento.id)).toBeDefined();
});
