import net, { AddressInfo } from 'node:net';
import nock from 'nock';
import { resolvedorDeNomes } from '../../lib/destino-seguro';
import { iniciarServidorDns, ServidorDns } from '../helpers/dns';
import { iniciarSuite, SuiteDeTeste } from '../helpers/suite';
import { hubDe, Hub, iniciarReceptor, Receptor } from './apoio-entregas';

/**
 * With the SSRF guard on, HUB_REDES_PERMITIDAS lets an internal subscriber through (here the
 * loopback's IPv4 range, on the ports of the subscriber and of a bare TCP server) and nothing else
 * private. Names are resolved by the hub's own resolver (lib/destino-seguro.ts), pointed here at a
 * DNS server on loopback.
 */

// the subscriber's names are not loopback's: nock's net-connect filter would stop them before the guard
nock.restore();

let suite: SuiteDeTeste;
let hub: Hub;
let receptor: Receptor;
/** A subscriber on a loopback port the allowance leaves out. */
let fora: Receptor;
let dns: ServidorDns;
/** Accepts connections and drops them, counting. */
let tcp: net.Server;
let conexoes = 0;
const servidoresDoSistema = resolvedorDeNomes.getServers();

beforeAll(async () => {
  dns = await iniciarServidorDns({ 'interno.exemplo': ['127.0.0.1'], 'vizinho.exemplo': ['10.9.0.1'] });
  resolvedorDeNomes.setServers([dns.endereco]);
  receptor = await iniciarReceptor();
  fora = await iniciarReceptor();
  tcp = net.createServer((s) => {
    conexoes++;
    s.destroy();
  });
  await new Promise<void>((r) => tcp.listen(0, '127.0.0.1', r));
  const redes = `127.0.0.0/8:${receptor.porta},127.0.0.0/8:${(tcp.address() as AddressInfo).port}`;
  suite = await iniciarSuite(['identity', 'hub'], {
    env: { HUB_RETRY_SCHEDULE_MS: '50', HUB_PERMITIR_DESTINOS_PRIVADOS: 'false', HUB_REDES_PERMITIDAS: redes },
  });
  hub = hubDe(suite);
});
afterAll(async () => {
  resolvedorDeNomes.setServers(servidoresDoSistema);
  await receptor?.fechar();
  await fora?.fechar();
  await new Promise((r) => tcp?.close(r));
  await suite?.encerrar();
  await dns?.fechar();
});

test.each([
  ['an IP literal in the allowed network', () => `http://127.0.0.1:${receptor.porta}/literal`],
  ['localhost (its IPv4 address)', () => `http://localhost:${receptor.porta}/localhost`],
])('%s is delivered', async (_caso, url) => {
  const c = await hub.cenario({ url_de_destino: url(), maximo_de_tentativas: 1 });
  const { id } = await c.publicar();
  const final = await hub.esperarSituacao((await hub.entregaDoEvento(c.assinatura.id, id)).id, 'entregue');
  expect(final.historico).toEqual([expect.objectContaining({ status_http: 200, erro: null })]);
  expect(receptor.recebidas.filter((r) => r.corpo?.id === id)).toHaveLength(1);
});

// a name other than localhost must be https (SPEC 4.3 rule 7), and no certificate of a test server
// would be trusted: the attempt to interno.exemplo reaching the socket on 127.0.0.1 shows it passed
test('a name whose DNS answer is in the allowed network is connected to', async () => {
  const antes = conexoes;
  const c = await hub.cenario({ url_de_destino: `https://interno.exemplo:${(tcp.address() as AddressInfo).port}/nome`, maximo_de_tentativas: 1 });
  const { id } = await c.publicar();
  const final = await hub.esperarSituacao((await hub.entregaDoEvento(c.assinatura.id, id)).id, 'fila_de_erro');
  expect(final.historico).toEqual([expect.objectContaining({ status_http: null, erro: expect.stringMatching(/^falha de conexão/) })]);
  expect(conexoes).toBeGreaterThan(antes);
  expect(dns.consultas).toContain('interno.exemplo A');
});

test.each([
  ['an IP literal outside it', () => `http://[::1]:${receptor.porta}/fora`, () => receptor],
  ['a name whose DNS answer is outside it', () => `https://vizinho.exemplo:${receptor.porta}/fora`, () => receptor],
  ['an IP literal in it, on a port it does not name', () => `http://127.0.0.1:${fora.porta}/outra-porta`, () => fora],
  ['localhost, on a port it does not name', () => `http://localhost:${fora.porta}/outra-porta`, () => fora],
])('%s is still refused', async (_caso, url, destino) => {
  const c = await hub.cenario({ url_de_destino: url(), maximo_de_tentativas: 1 });
  const { id } = await c.publicar();
  const final = await hub.esperarSituacao((await hub.entregaDoEvento(c.assinatura.id, id)).id, 'fila_de_erro');
  expect(final.historico).toEqual([expect.objectContaining({ status_http: null, erro: 'destino em endereço privado recusado' })]);
  expect(destino().recebidas.filter((r) => r.corpo?.id === id)).toHaveLength(0);
});
