import { Op } from 'sequelize';
import { config } from '../../config';
import { identity } from '../../api/identity';
import { prepararIdentity } from '../../api/identity/preparar';
import { publicarMastersDoAmbiente } from '../../api/identity/usuarios';
import { banco } from '../../lib/database';
import { EventoPendente, MIGRACOES_IDENTITY } from '../../models/identity';
import { fila } from '../../queues/fila';
import { filaIdentityOutbox } from '../../queues/identity-outbox';
import { identityDe } from '../helpers/identity';
import { iniciarSuite, SuiteDeTeste } from '../helpers/suite';

/**
 * DESIGN §3: `e_master` and `master_pelo_ambiente` follow MASTER_EMAILS too, and `colaborador.*`
 * events carry them. A restart with another list changes them without any change of the user, so
 * identity publishes `colaborador.atualizado` at start for each collaborator whose e-mail entered or
 * left the list since the list it published last. No worker runs: the events are read where stored.
 */

let suite: SuiteDeTeste;
let id: ReturnType<typeof identityDe>;
let admin: string;

beforeAll(async () => {
  suite = await iniciarSuite(['identity'], { workers: false, env: { MASTER_EMAILS: 'sai@suite.test, Fica@suite.test, salvo@suite.test' } });
  id = identityDe(suite.url.identity);
  admin = await id.admin();
});
afterAll(() => suite.encerrar());

const colaborador = (email: string, campos: Record<string, unknown> = {}) => id.criarUsuario({ senha: undefined, email, ...campos });

/** The last event stored so far: what a test stores comes after it. */
const ultimaSequencia = async () => ((await EventoPendente.max('sequencia')) as number | null) ?? 0;
const eventosDepois = (sequencia: number) => EventoPendente.findAll({ where: { sequencia: { [Op.gt]: sequencia } }, order: [['sequencia', 'ASC']] });

/** A restart of identity's API with this MASTER_EMAILS, as far as its start goes (lib/runner.ts iniciarApi). */
async function reiniciarCom(masterEmails: string[]): Promise<void> {
  config().identity.masterEmails = masterEmails;
  await prepararIdentity();
  await identity.aoServir!();
}

test('a restart with another MASTER_EMAILS publishes colaborador.atualizado, with the new e_master, for each collaborator whose e-mail entered or left the list', async () => {
  const sai = await colaborador('sai@suite.test');
  const fica = await colaborador('fica@suite.test');
  const entra = await colaborador('entra@suite.test');
  const salvo = await colaborador('salvo@suite.test', { e_master: true });
  const nunca = await colaborador('nunca@suite.test');
  const cliente = await colaborador('cliente@suite.test', { perfil: 'cliente' });
  const removido = await colaborador('removido@suite.test');
  expect((await id.api.del(`/usuario/${removido.id}`, { token: admin })).status).toBe(204);
  expect(sai).toMatchObject({ e_master: true, master_pelo_ambiente: true });
  const antes = await ultimaSequencia();

  await reiniciarCom(['fica@suite.test', 'entra@suite.test', 'cliente@suite.test', 'removido@suite.test']);

  const eventos = await eventosDepois(antes);
  expect(eventos.map((e) => e.tipo)).toEqual(eventos.map(() => 'colaborador.atualizado'));
  const porUsuario = new Map(eventos.map((e) => [e.dados.id as string, e.dados]));
  expect([...porUsuario.keys()].sort()).toEqual([sai.id, entra.id, salvo.id].sort());
  expect(porUsuario.get(sai.id)).toMatchObject({ e_master: false, master_pelo_ambiente: false });
  expect(porUsuario.get(entra.id)).toMatchObject({ e_master: true, master_pelo_ambiente: true });
  // master by its row still, no longer by the environment: the payload changed all the same
  expect(porUsuario.get(salvo.id)).toMatchObject({ e_master: true, master_pelo_ambiente: false });
  for (const [usuarioId, dados] of porUsuario) expect(dados).toEqual((await id.api.get(`/usuario/${usuarioId}`, { token: admin })).body);
  for (const e of eventos) expect(await fila(filaIdentityOutbox).getJob(e.id)).toBeDefined();
  expect([fica.id, nunca.id, cliente.id, removido.id].filter((u) => porUsuario.has(u))).toEqual([]);

  // started again with the same list: nothing left to tell
  await reiniciarCom(['fica@suite.test', 'entra@suite.test', 'cliente@suite.test', 'removido@suite.test']);
  expect(await eventosDepois(antes)).toHaveLength(eventos.length);
});

test('a process that serves no identity API (a worker of its queues) publishes nothing, whatever its list: the API’s list is the one its answers follow', async () => {
  await colaborador('so-na-api@suite.test');
  await reiniciarCom(['so-na-api@suite.test']);
  const antes = await ultimaSequencia();
  config().identity.masterEmails = [];
  await prepararIdentity();
  expect(await eventosDepois(antes)).toEqual([]);
  // the API started again with its list: nothing changed for subscribers, nothing to tell
  await reiniciarCom(['so-na-api@suite.test']);
  expect(await eventosDepois(antes)).toEqual([]);
});

test('identity processes starting together with a new list publish each change once', async () => {
  const u = await colaborador('juntos@suite.test');
  config().identity.masterEmails = ['juntos@suite.test'];
  const antes = await ultimaSequencia();
  const publicados = await Promise.all([1, 2, 3].map(() => publicarMastersDoAmbiente()));
  const eventos = await eventosDepois(antes);
  expect(eventos.map((e) => e.dados.id)).toContain(u.id);
  expect(eventos.filter((e) => e.dados.id === u.id)).toHaveLength(1);
  expect(publicados.reduce((a, b) => a + b)).toBe(eventos.length);
});

test('the list published last is kept in the database, each e-mail once, and migration 0005 run again keeps it', async () => {
  config().identity.masterEmails = ['b@suite.test', 'a@suite.test', 'b@suite.test'];
  await publicarMastersDoAmbiente();
  await MIGRACOES_IDENTITY.find((m) => m.name === '0005-identity-master-emails-publicados')!.up(banco('identity').getQueryInterface());
  const [linhas] = (await banco('identity').query('SELECT emails FROM master_emails_publicados')) as [{ emails: string }[], unknown];
  expect(linhas.map((l) => JSON.parse(l.emails))).toEqual([['a@suite.test', 'b@suite.test']]);
});
