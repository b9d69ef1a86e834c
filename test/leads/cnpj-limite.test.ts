import { importarCnpj } from '../../api/leads/importacao';
import { chaveDoCliente, contagemPorEndereco } from '../../api/shared/limite';
import { cliente, esperarProblema, Resposta } from '../helpers/http';
import { iniciarSuite, SuiteDeTeste } from '../helpers/suite';
import { cnpjValido, diretorios, escreverMes, linhaDeEstabelecimento } from './apoio';

/**
 * DESIGN §6 and §10: GET /api/cnpj/{cnpj} is public and limited per client address
 * (LEADS_CNPJ_LIMITE_POR_MINUTO, Redis), 429 with Retry-After past the limit. Set to 3 here. The
 * service trusts X-Forwarded-For from a loopback proxy (TRUST_PROXY), which lets each test speak
 * from an address of its own.
 */

let suite: SuiteDeTeste;
let api: ReturnType<typeof cliente>;
const dirs = diretorios();
const CNPJ = cnpjValido('445566770001');
const AUSENTE = cnpjValido('445566770002');

beforeAll(async () => {
  suite = await iniciarSuite(['identity', 'leads'], { workers: false, env: { LEADS_CNPJ_LIMITE_POR_MINUTO: '3' } });
  api = cliente(suite.url.leads);
  await importarCnpj(await escreverMes(dirs.novo(), { estabelecimentos: [linhaDeEstabelecimento({ cnpj: CNPJ })] }));
});
afterAll(async () => {
  dirs.apagar();
  await suite?.encerrar();
});

let ultimoOcteto = 10;
/** A documentation address (RFC 5737) no other test uses. */
const novoEndereco = () => ({ 'x-forwarded-for': `198.51.100.${ultimoOcteto++}` });
const buscar = (cnpj: string, headers: Record<string, string>) => api.get(`/api/cnpj/${cnpj}`, { headers });

function esperarLimite(res: Resposta) {
  const problema = esperarProblema(res, 429);
  const segundos = Number(res.headers.get('retry-after'));
  expect(Number.isInteger(segundos)).toBe(true);
  expect(segundos).toBeGreaterThanOrEqual(1);
  expect(segundos).toBeLessThanOrEqual(60);
  // one client's refusal, never kept by a cache for the next caller (RFC 6585: not stored)
  expect(res.headers.get('cache-control')).toBeNull();
  return problema;
}

// first in the file: the first request the service answers
test('the first lookup after the service starts is counted in Redis, where every process reads the count', async () => {
  const endereco = novoEndereco();
  expect((await buscar(CNPJ, endereco)).status).toBe(200);
  const contagem = await contagemPorEndereco('leads-cnpj', 3, 60, 'limites')().get(endereco['x-forwarded-for']);
  expect(contagem?.consumedPoints).toBe(1);
});

test('the 4th lookup from the same address within a minute answers 429 with Retry-After, as problem+json', async () => {
  const endereco = novoEndereco();
  const statuses = [];
  for (let i = 0; i < 3; i++) statuses.push((await buscar(CNPJ, endereco)).status);
  expect(statuses).toEqual([200, 200, 200]);
  esperarLimite(await buscar(CNPJ, endereco));
});

test('every call counts, whatever it answers: three 400s and 404s use the limit up, and past it a bad CNPJ answers 429 too', async () => {
  const endereco = novoEndereco();
  esperarProblema(await buscar('123', endereco), 400);
  esperarProblema(await buscar(AUSENTE, endereco), 404);
  esperarProblema(await buscar(`${CNPJ.slice(0, 13)}${(Number(CNPJ[13]) + 1) % 10}`, endereco), 400);
  esperarLimite(await buscar(CNPJ, endereco));
  esperarLimite(await buscar('123', endereco));
});

test('the count is per client address: another address still gets the record', async () => {
  const esgotado = novoEndereco();
  for (let i = 0; i < 3; i++) await buscar(CNPJ, esgotado);
  esperarLimite(await buscar(CNPJ, esgotado));
  const res = await buscar(CNPJ, novoEndereco());
  expect(res.status).toBe(200);
  expect(res.body.cnpj).toBe(CNPJ);
});

test('the count is kept in Redis, shared by every process: what another process counted refuses this one', async () => {
  const endereco = novoEndereco();
  // the same count as another process of the service would make it: its own limiter object
  const deOutroProcesso = contagemPorEndereco('leads-cnpj', 3, 60, 'limites')();
  for (let i = 0; i < 3; i++) await deOutroProcesso.consume(endereco['x-forwarded-for']);
  esperarLimite(await buscar(CNPJ, endereco));
  expect((await buscar(CNPJ, novoEndereco())).status).toBe(200);
});

test('other routes of the service are not limited by it', async () => {
  const endereco = novoEndereco();
  for (let i = 0; i < 3; i++) await buscar(CNPJ, endereco);
  esperarLimite(await buscar(CNPJ, endereco));
  for (let i = 0; i < 5; i++) expect((await api.get('/saude', { headers: endereco })).status).toBe(200);
});

test('an IPv6 client counts by its /64: new addresses of the same network share the limit, another network has its own', async () => {
  // documentation prefix (RFC 3849)
  const de = (endereco: string) => ({ 'x-forwarded-for': endereco });
  const statuses = [];
  for (const endereco of ['2001:db8:7:1::1', '2001:db8:7:1:a:b:c:d', '2001:db8:7:1:ffff:ffff:ffff:fffe']) statuses.push((await buscar(CNPJ, de(endereco))).status);
  expect(statuses).toEqual([200, 200, 200]);
  esperarLimite(await buscar(CNPJ, de('2001:db8:7:1:1234::9')));
  expect((await buscar(CNPJ, de('2001:db8:7:2::1'))).status).toBe(200);
});

test('an IPv4 address written as IPv6 is that IPv4 client', () => {
  expect(chaveDoCliente('::ffff:198.51.100.7')).toBe('198.51.100.7');
  expect(chaveDoCliente('198.51.100.7')).toBe('198.51.100.7');
  expect(chaveDoCliente('2001:DB8:0:1::5')).toBe(chaveDoCliente('2001:db8::1:0:0:0:9'));
});
