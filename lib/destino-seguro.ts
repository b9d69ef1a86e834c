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

/**
 * A range of addresses an operator lets through the guard (`10.20.0.0/16`, `fd00:1::/64`), on
 * every port, or with a third element on that port only (`10.20.0.0/16:8443`).
 */
export type Rede = [ipaddr.IPv4 | ipaddr.IPv6, number, number?];

/** The port a URL reaches: its own, or its scheme's. */
const portaDaUrl = (url: URL): number => Number(url.port) || (url.protocol === 'https:' ? 443 : 80);

/**
 * Names are resolved by c-ares, asking the DNS servers of resolv.conf, and not by the system's
 * getaddrinfo: that runs on libuv's thread pool (4 threads), which WebCrypto's signing and file
 * access share, so a few names whose DNS never answers would stall every delivery of the process.
 * Answers are cached for their TTL by c-ares itself (its query cache, on by default since 1.23,
 * at most an hour); a server that does not answer is given up on after 1.5 s and
 * a second try of 3 s. /etc/hosts is not read (a name there would mostly be private).
 * Exported so tests can point it at a DNS server of their own.
 */
export const resolvedorDeNomes = new dns.promises.Resolver({ timeout: 1500, tries: 2 });

/** RFC 6761: every `localhost` name is the loopback, whatever a DNS server says. */
const ehLocalhost = (host: string) => /(^|\.)localhost\.?$/i.test(host);

/**
 * IPv4 first; a name that has no IPv4 address (ENODATA) is reached over IPv6. One that does not
 * exist or whose DNS does not answer is not asked again for IPv6: it would only double the wait.
 */
async function resolver(resolvedor: dns.promises.Resolver, host: string, familia: number | undefined): Promise<dns.LookupAddress[]> {
  if (ehLocalhost(host)) {
    const loopback = [{ address: '127.0.0.1', family: 4 }, { address: '::1', family: 6 }];
    return loopback.filter((e) => !familia || e.family === familia);
  }
  if (familia !== 6) {
    try {
      return (await resolvedor.resolve4(host)).map((address) => ({ address, family: 4 }));
    } catch (err) {
      if (familia === 4 || (err as NodeJS.ErrnoException).code !== dns.NODATA) throw err;
    }
  }
  return (await resolvedor.resolve6(host)).map((address) => ({ address, family: 6 }));
}

export interface GuardaDeDestino {
  /** A URL written with an IP literal the guard refuses: refused before any connection. */
  recusaLiteral(url: URL): boolean;
  /**
   * `lookup` for http(s).request of `url`: resolves the name and hands over only the addresses the
   * guard lets through to that URL's port.
   */
  lookupPara(url: URL): net.LookupFunction;
}

/**
 * The guard, letting through the private addresses in `redesPermitidas` (an internal subscriber, say),
 * on the port a network names if it names one, and no other. An address is matched in the form it
 * reaches: an IPv4-mapped IPv6 as its IPv4.
 */
export function guardaDeDestino(redesPermitidas: Rede[] = [], resolvedor = resolvedorDeNomes): GuardaDeDestino {
  const permitido = (endereco: string, porta: number) => {
    if (!redesPermitidas.length || !ipaddr.isValid(endereco)) return false;
    const ip = ipaddr.process(endereco);
    return redesPermitidas.some(([rede, bits, daRede]) => rede.kind() === ip.kind() && ip.match(rede, bits) && (daRede === undefined || daRede === porta));
  };
  const recusado = (endereco: string, porta: number) => enderecoPrivado(endereco) && !permitido(endereco, porta);
  return {
    recusaLiteral(url) {
      const host = url.hostname.replace(/^\[|\]$/g, '');
      return net.isIP(host) !== 0 && recusado(host, portaDaUrl(url));
    },
    lookupPara: (url) => (host, opcoes, callback) => {
      const porta = portaDaUrl(url);
      const resposta = callback as (err: Error | null, endereco?: string | dns.LookupAddress[], familia?: number) => void;
      const familia = opcoes.family === 'IPv4' ? 4 : opcoes.family === 'IPv6' ? 6 : (opcoes.family as number | undefined);
      resolver(resolvedor, host, familia).then(
        (lista) => {
          // only the addresses that pass reach the socket (localhost's ::1 stays out when only
          // 127.0.0.0/8 is allowed); a name none of whose addresses pass is refused
          const aceitos = lista.filter((e) => !recusado(e.address, porta));
          if (!aceitos.length) {
            // the address stays in the log: the message reaches whoever reads the delivery, and which
            // private address a name resolves to tells them about the network behind the suite
            log.warn({ host, endereco: lista[0].address, porta }, 'destino em endereço privado recusado');
            return resposta(new DestinoBloqueado('destino em endereço privado recusado'));
          }
          if (opcoes.all) return resposta(null, aceitos);
          resposta(null, aceitos[0].address, aceitos[0].family);
        },
        (err: Error) => resposta(err),
      );
    },
  };
}
