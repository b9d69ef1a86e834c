import dns from 'node:dns';
import net from 'node:net';

/**
 * The SSRF guard of outgoing HTTP to addresses someone else chose (a subscriber's URL, an
 * attachment's address): private, loopback and link-local addresses are refused, checked on the
 * address the socket actually connects to (in its DNS lookup), so a name that changes between
 * check and use cannot slip through.
 */
const BLOQUEADAS = new net.BlockList();
for (const [rede, prefixo] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.168.0.0', 16],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  BLOQUEADAS.addSubnet(rede, prefixo, 'ipv4');
}
for (const [rede, prefixo] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['ff00::', 8],
] as const) {
  BLOQUEADAS.addSubnet(rede, prefixo, 'ipv6');
}

export function enderecoPrivado(endereco: string): boolean {
  const mapeado = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(endereco);
  if (mapeado) return BLOQUEADAS.check(mapeado[1], 'ipv4');
  return BLOQUEADAS.check(endereco, net.isIPv6(endereco) ? 'ipv6' : 'ipv4');
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
    if (privado) return (callback as any)(new DestinoBloqueado(`destino em endereço privado (${privado.address}) recusado`));
    if ((opcoes as dns.LookupOptions).all) return (callback as any)(null, lista);
    (callback as any)(null, lista[0].address, lista[0].family);
  });
};
