import { pbkdf2 } from 'node:crypto';
import dns from 'node:dns';
import http from 'node:http';
import { AddressInfo } from 'node:net';
import ipaddr from 'ipaddr.js';
import nock from 'nock';
import { DestinoBloqueado, GuardaDeDestino, guardaDeDestino, Rede } from '../../lib/destino-seguro';
import { iniciarServidorDns, ServidorDns } from '../helpers/dns';

/**
 * The SSRF guard's name resolution and its allowed networks (lib/destino-seguro.ts), against a DNS
 * server on loopback. The classification of addresses is tested in test/hub/entregas-ssrf.test.ts.
 */

// node's own http, so a request goes through the guard's lookup as in production
nock.restore();

let dnsServidor: ServidorDns;
let resolvedor: dns.promises.Resolver;
let alvo: http.Server;

beforeAll(async () => {
  dnsServidor = await iniciarServidorDns(
    {
      'publico.exemplo': ['93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c'],
      'so-ipv6.exemplo': ['2606:2800:21f:cb07:6820:80da:af6b:8b2c'],
      'interno.exemplo': ['10.20.0.7'],
      'misto.exemplo': ['93.184.215.14', '192.168.0.10'],
      'loopback.exemplo': ['127.0.0.1'],
    },
    ['buraco.exemplo'],
  );
  resolvedor = new dns.promises.Resolver({ timeout: 1500, tries: 1 });
  resolvedor.setServers([dnsServidor.endereco]);
  alvo = http.createServer((_req, res) => res.end('alcançado'));
  await new Promise<void>((r) => alvo.listen(0, '127.0.0.1', r));
});
afterAll(async () => {
  await dnsServidor?.fechar();
  await new Promise((r) => alvo?.close(r));
});

const redes = (...cidrs: string[]): Rede[] => cidrs.map((c) => ipaddr.parseCIDR(c));
/** A destination for lookups whose port no allowed network names. */
const QUALQUER = new URL('https://destino.exemplo/');

/** The guard's lookup of `host` for a request to `url` (its port). */
function resolver(guarda: GuardaDeDestino, host: string, opcoes: dns.LookupOptions = {}, url = QUALQUER): Promise<unknown> {
  return new Promise((resolve, reject) =>
    guarda
      .lookupPara(url)(host, opcoes, (err: Error | null, endereco: unknown, familia?: number) => (err ? reject(err) : resolve(opcoes.all ? endereco : { endereco, familia }))),
  );
}

describe('names resolved through DNS', () => {
  test('a public name resolves to its IPv4 address, first of its list', async () => {
    const guarda = guardaDeDestino([], resolvedor);
    expect(await resolver(guarda, 'publico.exemplo')).toEqual({ endereco: '93.184.215.14', familia: 4 });
    expect(await resolver(guarda, 'publico.exemplo', { all: true })).toEqual([{ address: '93.184.215.14', family: 4 }]);
  });

  test('a name with no IPv4 address is reached over IPv6, and a family asked for is the one resolved', async () => {
    const guarda = guardaDeDestino([], resolvedor);
    expect(await resolver(guarda, 'so-ipv6.exemplo')).toEqual({ endereco: '2606:2800:21f:cb07:6820:80da:af6b:8b2c', familia: 6 });
    expect(await resolver(guarda, 'publico.exemplo', { family: 6 })).toEqual({ endereco: '2606:2800:21f:cb07:6820:80da:af6b:8b2c', familia: 6 });
    await expect(resolver(guarda, 'so-ipv6.exemplo', { family: 4 })).rejects.toMatchObject({ code: 'ENODATA' });
  });

  test('a name that resolves only to private addresses is refused; among public ones, a private address is left out', async () => {
    const guarda = guardaDeDestino([], resolvedor);
    await expect(resolver(guarda, 'interno.exemplo')).rejects.toBeInstanceOf(DestinoBloqueado);
    await expect(resolver(guarda, 'loopback.exemplo', { all: true })).rejects.toThrow('destino em endereço privado recusado');
    expect(await resolver(guarda, 'misto.exemplo', { all: true })).toEqual([{ address: '93.184.215.14', family: 4 }]);
  });

  test('an unknown name fails as not found', async () => {
    await expect(resolver(guardaDeDestino([], resolvedor), 'nao-existe.exemplo')).rejects.toMatchObject({ code: 'ENOTFOUND' });
  });

  test('localhost is the loopback whatever DNS says, and no DNS server is asked', async () => {
    const antes = dnsServidor.consultas.length;
    await expect(resolver(guardaDeDestino([], resolvedor), 'localhost')).rejects.toBeInstanceOf(DestinoBloqueado);
    await expect(resolver(guardaDeDestino([], resolvedor), 'api.LOCALHOST')).rejects.toBeInstanceOf(DestinoBloqueado);
    const soIpv4 = guardaDeDestino(redes('127.0.0.0/8'), resolvedor);
    expect(await resolver(soIpv4, 'localhost', { all: true })).toEqual([{ address: '127.0.0.1', family: 4 }]);
    await expect(resolver(soIpv4, 'localhost', { family: 6 })).rejects.toBeInstanceOf(DestinoBloqueado);
    expect(dnsServidor.consultas.length).toBe(antes);
  });

  test('a DNS server that never answers fails its lookups at the resolver\'s time-out, and holds no thread of the pool meanwhile', async () => {
    const guarda = guardaDeDestino([], resolvedor);
    const inicio = Date.now();
    // more lookups than libuv's 4 threads: through getaddrinfo they would hold every one
    const pendentes = Array.from({ length: 8 }, () => resolver(guarda, 'buraco.exemplo').catch((err) => err));
    const trabalhoDoPool = await Promise.all(
      Array.from({ length: 4 }, () => new Promise<number>((r) => pbkdf2('x', 'y', 1, 32, 'sha256', () => r(Date.now() - inicio)))),
    );
    // long before the lookups' time-out: no thread of the pool waits on them
    expect(Math.max(...trabalhoDoPool)).toBeLessThan(1000);
    const erros = (await Promise.all(pendentes)) as NodeJS.ErrnoException[];
    expect(erros.map((e) => e.code)).toEqual(Array(8).fill('ETIMEOUT'));
    expect(dnsServidor.consultas).toContain('buraco.exemplo A');
    // not asked again for IPv6: that would double the wait
    expect(dnsServidor.consultas).not.toContain('buraco.exemplo AAAA');
    // one time-out (1.5 s), not two
    expect(Date.now() - inicio).toBeLessThan(2500);
  });
});

describe('allowed networks', () => {
  test('a private address in an allowed network passes, one outside it is still refused', async () => {
    const guarda = guardaDeDestino(redes('10.20.0.0/16'), resolvedor);
    expect(await resolver(guarda, 'interno.exemplo')).toEqual({ endereco: '10.20.0.7', familia: 4 });
    await expect(resolver(guardaDeDestino(redes('10.21.0.0/16'), resolvedor), 'interno.exemplo')).rejects.toBeInstanceOf(DestinoBloqueado);
  });

  test.each([
    ['http://127.0.0.1:8080/', [], true],
    ['http://127.0.0.1:8080/', ['127.0.0.0/8'], false],
    ['http://[::ffff:127.0.0.1]/', ['127.0.0.0/8'], false],
    ['http://[::1]/', ['127.0.0.0/8'], true],
    ['http://[::1]/', ['::1/128'], false],
    ['http://10.20.0.7/', ['10.20.0.0/16'], false],
    ['http://10.30.0.7/', ['10.20.0.0/16'], true],
    ['http://8.8.8.8/', [], false],
    ['http://publico.exemplo/', [], false],
  ])('an IP literal is judged before any connection: %s with %j refused: %s', (url, cidrs, recusado) => {
    expect(guardaDeDestino(redes(...(cidrs as string[])), resolvedor).recusaLiteral(new URL(url))).toBe(recusado);
  });

  test('http.request resolves through the guard: an allowed name is reached, the same name without the allowance is refused', async () => {
    const porta = (alvo.address() as AddressInfo).port;
    const url = new URL(`http://loopback.exemplo:${porta}/`);
    const pedir = (guarda: GuardaDeDestino) =>
      new Promise<string>((resolve, reject) => {
        http
          .get(url, { lookup: guarda.lookupPara(url), agent: false }, (res) => {
            let corpo = '';
            res.on('data', (p) => (corpo += p));
            res.on('end', () => resolve(corpo));
          })
          .on('error', reject);
      });
    expect(await pedir(guardaDeDestino(redes('127.0.0.0/8'), resolvedor))).toBe('alcançado');
    await expect(pedir(guardaDeDestino([], resolvedor))).rejects.toBeInstanceOf(DestinoBloqueado);
    // allowed on its port, then on another port only
    expect(await pedir(guardaDeDestino([[ipaddr.parse('127.0.0.0'), 8, porta]], resolvedor))).toBe('alcançado');
    await expect(pedir(guardaDeDestino([[ipaddr.parse('127.0.0.0'), 8, porta === 1 ? 2 : porta - 1]], resolvedor))).rejects.toBeInstanceOf(DestinoBloqueado);
  });

  test('a network that names a port lets through that port only, by name and by literal; the scheme gives the port a URL leaves out', async () => {
    const guarda = guardaDeDestino([[ipaddr.parse('10.20.0.0'), 16, 8443], [ipaddr.parse('10.20.0.0'), 16, 443]], resolvedor);
    expect(await resolver(guarda, 'interno.exemplo', {}, new URL('https://interno.exemplo:8443/'))).toEqual({ endereco: '10.20.0.7', familia: 4 });
    expect(await resolver(guarda, 'interno.exemplo', {}, new URL('https://interno.exemplo/'))).toEqual({ endereco: '10.20.0.7', familia: 4 });
    await expect(resolver(guarda, 'interno.exemplo', {}, new URL('https://interno.exemplo:6379/'))).rejects.toBeInstanceOf(DestinoBloqueado);
    await expect(resolver(guarda, 'interno.exemplo', {}, new URL('http://interno.exemplo/'))).rejects.toBeInstanceOf(DestinoBloqueado);
    expect(guarda.recusaLiteral(new URL('http://10.20.0.7:8443/'))).toBe(false);
    expect(guarda.recusaLiteral(new URL('https://10.20.0.7/'))).toBe(false);
    expect(guarda.recusaLiteral(new URL('http://10.20.0.7/'))).toBe(true);
    expect(guarda.recusaLiteral(new URL('http://10.20.0.7:22/'))).toBe(true);
    // public addresses are not the allowance's business: every port
    expect(guarda.recusaLiteral(new URL('http://8.8.8.8:22/'))).toBe(false);
  });
});
