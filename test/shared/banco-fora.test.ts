import { PRAZO_DA_PRONTIDAO_MS } from '../../api/shared/app';
import { config } from '../../config';
import { esperarAte } from '../helpers/espera';
import { cliente, esperarProblema } from '../helpers/http';
import { proxyQueCai } from '../helpers/proxy';
import { iniciarSuite, SuiteDeTeste } from '../helpers/suite';

/*
 * DESIGN §4: readiness (`/pronto`) says whether the service's database answers, liveness
 * (`/saude`) only that the process does. Here the database goes away for real: a proxy in front of
 * the real server drops every connection and refuses new ones, as a stopped server would.
 */

const real = new URL(config().mysqlUrl);
const proxy = proxyQueCai(real.hostname, Number(real.port || 3306));
let suite: SuiteDeTeste;

beforeAll(async () => {
  // MYSQL_URL through the proxy, with the real one's user and password
  const url = new URL(real);
  url.hostname = '127.0.0.1';
  url.port = String(await proxy.abrir());
  url.searchParams.delete('socketPath');
  suite = await iniciarSuite(['identity', 'leads'], { workers: false, env: { MYSQL_URL: url.toString() } });
});
afterAll(async () => {
  proxy.voltar();
  await suite?.encerrar();
  await proxy.fechar();
});

test('the database out of reach: readiness answers 503 within its deadline, liveness 200; back, readiness answers 200 again', async () => {
  const leads = cliente(suite.url.leads);
  expect((await leads.get('/pronto')).status).toBe(200);

  proxy.cair();
  try {
    const inicio = Date.now();
    const pronto = await leads.get('/pronto');
    expect(Date.now() - inicio).toBeLessThan(PRAZO_DA_PRONTIDAO_MS + 2000);
    const problema = esperarProblema(pronto, 503);
    // the answer names no part and no address; the log tells the operator
    expect(problema.detail).not.toMatch(/ECONN|127\.0\.0\.1|SELECT/);
    expect((await leads.get('/saude')).status).toBe(200);
  } finally {
    proxy.voltar();
  }
  await esperarAte(async () => (await leads.get('/pronto')).status === 200, 'readiness once the database is back');
}, 30_000);
