import nock from 'nock';
import { enderecoPrivado } from '../../lib/destino-seguro';
import { dormir, hubNesteArquivo } from './apoio-entregas';

/**
 * SSRF guard (DESIGN §5): destinations that resolve to private, loopback or link-local addresses
 * are refused unless allowed in config, and the check is made on the resolved address at send
 * time. LOCALHOST allows them by default; this file turns the guard on
 * (HUB_PERMITIR_DESTINOS_PRIVADOS=false), so a subscriber on localhost is never reached.
 */

const t = hubNesteArquivo({ env: { HUB_PERMITIR_DESTINOS_PRIVADOS: 'false' } });
afterAll(() => nock.cleanAll());

describe('enderecoPrivado', () => {
  test.each([
    '10.0.0.1',
    '10.255.255.255',
    '172.16.0.1',
    '172.31.255.254',
    '192.168.0.1',
    '192.168.255.255',
    '127.0.0.1',
    '127.9.9.9',
    '169.254.169.254',
    '0.0.0.0',
    '100.64.0.1',
    '::1',
    '::',
    'fe80::1',
    'fc00::1',
    'fd12:3456::1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '::ffff:10.0.0.1',
    '::ffff:169.254.169.254',
    // reserved, documentation and benchmarking ranges
    '192.0.0.1',
    '192.0.2.1',
    '198.18.0.1',
    '198.19.255.254',
    '203.0.113.5',
    '255.255.255.255',
    '2001:db8::1',
    'fec0::1',
    // IPv6 forms that reach an IPv4 address are judged by it: NAT64, 6to4, the IPv4-compatible form
    '64:ff9b::a9fe:a9fe',
    '64:ff9b::a00:1',
    // the local-use NAT64 prefix: the operator chooses where the IPv4 address sits
    '64:ff9b:1:a9fe:a9:fe00:808:808',
    '2002:7f00:1::',
    '2002:c0a8:101::1',
    '::a9fe:a9fe',
    'not an address',
  ])('%s is private, loopback, link-local or reserved', (endereco) => {
    expect(enderecoPrivado(endereco)).toBe(true);
  });

  test.each(['8.8.8.8', '1.1.1.1', '172.15.255.255', '172.32.0.1', '192.169.0.1', '11.0.0.1', '2001:4860:4860::8888', '::ffff:8.8.8.8', '64:ff9b::808:808', '2002:808:808::1'])(
    '%s is public',
    (endereco) => {
      expect(enderecoPrivado(endereco)).toBe(false);
    },
  );
});

describe('deliveries with the guard on', () => {
  test('a subscription to http://localhost is still accepted (SPEC 4.3 rule 7): the guard acts at send time', async () => {
    const c = await t.hub.cenario({ url_de_destino: t.receptor.url('/aceita') });
    expect(c.assinatura.url_de_destino).toBe(t.receptor.url('/aceita'));
  });

  test('a delivery to localhost fails each attempt saying the private address was refused, and the subscriber gets nothing', async () => {
    const c = await t.hub.cenario({ url_de_destino: t.receptor.url('/nome'), maximo_de_tentativas: 2 });
    const { id } = await c.publicar();
    const final = await t.hub.esperarSituacao((await t.hub.entregaDoEvento(c.assinatura.id, id)).id, 'fila_de_erro');
    // the address it resolved to is not shown (it would map the network behind the hub)
    expect(final.ultimo_erro).toBe('destino em endereço privado recusado');
    const recusada = (numero: number) => expect.objectContaining({ numero, status_http: null, resposta: null, erro: final.ultimo_erro });
    expect(final.historico).toEqual([recusada(1), recusada(2)]);
    await dormir(100);
    expect(t.receptor.recebidas).toHaveLength(0);
  });

  test('an address written as an IP (127.0.0.1, [::1]) is refused before any connection', async () => {
    const c = await t.hub.cenario({ url_de_destino: `http://127.0.0.1:${t.receptor.porta}/ip`, maximo_de_tentativas: 1 });
    const outro = await t.hub.assinar(await t.hub.aplicativo(), c.tipo.id, {
      url_de_destino: `http://[::1]:${t.receptor.porta}/ip6`,
      maximo_de_tentativas: 1,
    });
    const { id } = await c.publicar();
    for (const assinaturaId of [c.assinatura.id, outro.id]) {
      const final = await t.hub.esperarSituacao((await t.hub.entregaDoEvento(assinaturaId, id)).id, 'fila_de_erro');
      expect(final.historico).toEqual([expect.objectContaining({ status_http: null, duracao_ms: 0, erro: 'destino em endereço privado recusado' })]);
    }
    expect(t.receptor.recebidas).toHaveLength(0);
  });

  test('a public https destination is still delivered', async () => {
    const recebidos: unknown[] = [];
    const escopo = nock('https://ganchos.exemplo.com.br')
      .post('/hub', (corpo) => {
        recebidos.push(corpo);
        return true;
      })
      .reply(200, { ok: true });
    const c = await t.hub.cenario({ url_de_destino: 'https://ganchos.exemplo.com.br/hub' });
    const { id } = await c.publicar({ n: 3 });
    await t.hub.esperarSituacao((await t.hub.entregaDoEvento(c.assinatura.id, id)).id, 'entregue');
    expect(escopo.isDone()).toBe(true);
    expect(recebidos).toEqual([expect.objectContaining({ id, dados: { n: 3 } })]);
  });
});
