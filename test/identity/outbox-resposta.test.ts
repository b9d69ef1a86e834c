import { AddressInfo } from 'node:net';
import nock from 'nock';
import { esperarAte } from '../helpers/espera';
import { identityDe } from '../helpers/identity';
import { servidorQueLeOCorpo } from '../helpers/http';
import { iniciarSuite, SuiteDeTeste } from '../helpers/suite';

/**
 * The outbox does not read the hub's 202: it lets go of its body, so the connection is not held
 * until the answer is collected as garbage (fetch keeps it open while a body is unread). Here a hub
 * whose 202 never ends its body: each publication held one connection open, for good.
 */

// node's own http: nock's interception stands between client and server (no real connections)
nock.restore();

const aceitas: string[] = [];
const hub = servidorQueLeOCorpo((bruto, _req, res) => {
  aceitas.push(JSON.parse(bruto).dados.id);
  res.writeHead(202, { 'content-type': 'application/json' });
  res.write('{"entregas": 0, "mais": "');
});
const abertas = () => new Promise<number>((r, f) => hub.getConnections((err, n) => (err ? f(err) : r(n))));

let suite: SuiteDeTeste;

beforeAll(async () => {
  await new Promise<void>((resolve) => hub.listen(0, '127.0.0.1', resolve));
  suite = await iniciarSuite(['identity'], { env: { HUB_URL: `http://127.0.0.1:${(hub.address() as AddressInfo).port}` } });
});
afterAll(async () => {
  await suite.encerrar();
  hub.closeAllConnections();
  await new Promise((resolve) => hub.close(resolve));
});

test("the hub's 202 is let go of: publications that got one hold no connection open", async () => {
  const id = identityDe(suite.url.identity);
  const usuarios: { id: string }[] = [];
  for (let i = 0; i < 3; i++) usuarios.push(await id.criarUsuario({ senha: undefined, perfil: 'colaborador' }));
  await esperarAte(() => usuarios.every((u) => aceitas.includes(u.id)), 'the three events at the hub');
  // the initial master's event is published too: every one of them let go of
  await esperarAte(async () => (await abertas()) === 0, 'no connection left open at the hub', 5000);
});
