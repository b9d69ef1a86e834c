import dns from 'node:dns';
import net from 'node:net';
import ipaddr from 'ipaddr.js';
import { logger } from './logger';

const log = logger('destino-seguro');

const NAT64_CONHECIDO = ipaddr.IPv6.parseCIDR('64:ff9b::/96');

/**
 * The SSRF guard of outgoing HTTP to addresses someone else chose (a subscriber's URL, an
 * attachment's address): only ordinary public unicast addresses pass, judged by IANA's
 * special-purpose registries as ipaddr.js keeps them (private, loopback, link-local, CGNAT,
 * multicast, reserved, documentation, benchmarking...). An IPv6 address that carries an IPv4 one
 * (mapped, NAT64, 6to4) is judged by the IPv4 address it reaches. The check is made on the address
 * the socket actually connects to (in its DNS lookup), so a name that changes between check and
 * use cannot slip through.
 */
export function enderecoPrivado(endereco: string): boolean {
  if (!ipaddr.isValid(endereco)) return true;
  const ip = ipaddr.parse(endereco);
  if (ip.kind() === 'ipv4') return ip.range() !== 'unicast';
  const v6 = ip as ipaddr.IPv6;
  // ::/96 (unspecified, loopback and the deprecated IPv4-compatible form): nothing public lives there
  if (v6.parts.slice(0, 6).every((p) => p === 0)) return true;
  const b = v6.toByteArray();
  const ipv4Privado = (inicio: number) => new ipaddr.IPv4(b.slice(inicio, inicio + 4)).range() !== 'unicast';
  switch (v6.range()) {
    case 'ipv4Mapped':
    case 'rfc6145':
      return ipv4Privado(12);
    case 'rfc6052':
      // the well-known NAT64 prefix holds the IPv4 address in its last 32 bits; in the local-use
      // 64:ff9b:1::/48 the operator places it anywhere, so nothing there counts as public
      return v6.match(NAT64_CONHECIDO) ? ipv4Privado(12) : true;
    case '6to4':
      return ipv4Privado(2);
    default:
      return v6.range() !== 'unicast';
  }
}

export class DestinoBloqueado extends Error {}

/** A URL written with a private IP literal: refused before any connection. */
export function ipLiteralPrivado(url: URL): boolean {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  return net.isIP(host) !== 0 && enderecoPrivado(host);
}

/** `lookup` for http(s).request: resolves as usual and refuses a private answer. */
export const lookupProtegido: net.LookupFunction = (host, opcoes, callback) => {
  dns.lookup(host, { ...opcoes, all: true }, (err, enderecos) => {
    if (err) return (callback as any)(err);
    const lista = enderecos as dns.LookupAddress[];
    const privado = lista.find((e) => enderecoPrivado(e.address));
    if (privado) {
      // the address stays in the log: the message reaches whoever reads the delivery, and which
      // private address a name resolves to tells them about the network behind the suite
      log.warn({ host, endereco: privado.address }, 'destino em endereço privado recusado');
      return (callback as any)(new DestinoBloqueado('destino em endereço privado recusado'));
    }
    if ((opcoes as dns.LookupOptions).all) return (callback as any)(null, lista);
    (callback as any)(null, lista[0].address, lista[0].family);
  });
};
