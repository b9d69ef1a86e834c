import IORedis from 'ioredis';
import { guardaTitulares } from '../../api/identity/titulares';
import { config } from '../../config';
import { fila } from '../../queues/fila';
import { filaIdentityOutbox } from '../../queues/identity-outbox';
import { banco } from '../../lib/database';
import { esperarAte } from '../helpers/espera';
import { identityDe } from '../helpers/identity';
import { iniciarSuite, SuiteDeTeste } from '../helpers/suite';
import { proximoSegundo } from './apoio';

/**
 * Identity checks each token's holder on every call (docs/decisoes.md, Identity) from rows kept in
 * the process (api/identity/titulares.ts): a change made through identity is seen at once, here and,
 * by a Redis message, in every other identity process; a process that lost its subscription to
 * those messages keeps nothing from before.
 */

let suite: SuiteDeTeste;
let id: ReturnType<typeof identityDe>;
let redis: IORedis;

const canal = () => `${config().queuePrefix}:identity:titulares`;
/** A non-master reads their own user: 200 while identity takes the token, 401 once its holder is gone. */
const lerASiMesmo = (u: { usuario: { id: string }; token: string }) => id.api.get(`/usuario/${u.usuario.id}`, { token: u.token });
/**
 * A change made behind identity's back, as another identity process would commit it (no message of
 * its own): the user's tokens cut off, as a new password does. The route itself still finds the user.
 */
const cortarTokensAMao = (usuarioId: string) =>
  banco('identity').query('UPDATE usuario SET tokens_validos_desde = NOW(3) + INTERVAL 1 MINUTE WHERE id = ?', { replacements: [usuarioId] });

/** This process subscribed, Redis's answer read: it keeps holders from now on. */
const assinado = () => esperarAte(guardaTitulares, 'subscription to the holders channel');

beforeAll(async () => {
  suite = await iniciarSuite(['identity'], { workers: false });
  id = identityDe(suite.url.identity);
  redis = new IORedis(config().redisUrl);
  await id.admin();
});
afterAll(async () => {
  redis.disconnect();
  await suite.encerrar();
});

/**
 * A logged user whose holder this process keeps, then has its tokens cut by hand: still taken, the
 * kept row answering (what makes the tests below able to fail).
 */
async function guardadoECortadoAMao() {
  const u = await id.criarUsuarioLogado();
  await assinado();
  expect((await lerASiMesmo(u)).status).toBe(200);
  await cortarTokensAMao(u.usuario.id);
  expect((await lerASiMesmo(u)).status).toBe(200);
  return u;
}

test('a holder once read is kept: a row changed by hand, with no message, is not seen yet', async () => {
  await guardadoECortadoAMao();
});

test("another identity process's message makes this one read the holder again", async () => {
  const u = await guardadoECortadoAMao();
  await redis.publish(canal(), `usuario:${u.usuario.id}`);
  await esperarAte(async () => (await lerASiMesmo(u)).status === 401, 'the token cut off refused');
});

test('a change through identity is seen here at once, and sent to the other processes', async () => {
  const app = await id.criarAplicativo();
  const outro = await id.criarUsuarioLogado();
  await assinado();
  const ouvinte = new IORedis(config().redisUrl);
  try {
    const recebidas: string[] = [];
    ouvinte.on('message', (_c: string, m: string) => recebidas.push(m));
    await ouvinte.subscribe(canal());
    expect((await id.api.get('/aplicativo', { token: app.token })).status).toBe(200);
    expect((await lerASiMesmo(outro)).status).toBe(200);

    // a token of the renewal's own second is taken (docs/decisoes.md): the renewal comes in the next
    await proximoSegundo();
    expect((await id.api.post(`/aplicativo/${app.id}/segredo`, { token: await id.admin() })).status).toBe(200);
    // no wait: the answer left after this process forgot the application
    expect((await id.api.get('/aplicativo', { token: app.token })).status).toBe(401);
    expect((await id.api.del(`/usuario/${outro.usuario.id}`, { token: await id.admin() })).status).toBe(204);
    expect((await lerASiMesmo(outro)).status).toBe(401);
    await esperarAte(() => recebidas.length >= 2, 'both changes told on the channel');
    expect(recebidas).toEqual([`aplicativo:${app.id}`, `usuario:${outro.usuario.id}`]);
  } finally {
    ouvinte.disconnect();
  }
});

test("a user's change cuts the old token off at once, before its event is queued (a slow Redis holds the answer up to seconds, not the cut)", async () => {
  const u = await id.criarUsuarioLogado();
  await assinado();
  expect((await lerASiMesmo(u)).status).toBe(200);
  const admin = await id.admin();
  await proximoSegundo();
  // the event's queue that never answers: the change's answer waits for it (a bounded time)
  const filaDoOutbox = fila(filaIdentityOutbox);
  const espera = jest.spyOn(filaDoOutbox, 'addBulk').mockImplementation(() => new Promise(() => undefined));
  try {
    // a new password (the cut) with a new name (the event collaborators see)
    const troca = id.api.patch(`/usuario/${u.usuario.id}`, { token: admin, body: { nome: 'Outro Nome', senha: 'outra-senha-bem-longa-1' } });
    await esperarAte(() => espera.mock.calls.length > 0, 'the change committed, its event on its way');
    expect((await lerASiMesmo(u)).status).toBe(401);
    expect((await troca).status).toBe(200);
  } finally {
    espera.mockRestore();
  }
});

test('a process whose subscription fell forgets what it kept: a message it may have missed changes nothing', async () => {
  const u = await guardadoECortadoAMao();
  // this process's subscription, found by its name, is dropped by Redis
  const daqui = async () => [...String(await redis.call('CLIENT', 'LIST', 'TYPE', 'pubsub')).matchAll(new RegExp(`id=(\\d+) .*name=identity:titulares:${process.pid} `, 'g'))].map((m) => m[1]);
  const [antiga] = await daqui();
  expect(antiga).toBeDefined();
  await redis.call('CLIENT', 'KILL', 'ID', antiga);
  // subscribed again on a new connection: nothing kept from before
  await esperarAte(async () => (await daqui()).some((id) => id !== antiga) && guardaTitulares(), 'subscribed again');
  expect((await lerASiMesmo(u)).status).toBe(401);
});
