import dgram from 'node:dgram';
import net from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * A DNS server on loopback (UDP) for the SSRF guard's tests: answers A and AAAA queries from a
 * table of names, NXDOMAIN for the rest, and never answers a name in `silenciosos` (a DNS server
 * behind a black hole). Counts the queries it gets.
 */
export interface ServidorDns {
  endereco: string;
  consultas: string[];
  fechar(): Promise<void>;
}

export async function iniciarServidorDns(nomes: Record<string, string[]>, silenciosos: string[] = []): Promise<ServidorDns> {
  const socket = dgram.createSocket('udp4');
  const consultas: string[] = [];
  socket.on('message', (pergunta, remetente) => {
    // header (12 bytes), then the question: labels until a zero byte, QTYPE, QCLASS
    let i = 12;
    const rotulos: string[] = [];
    while (pergunta[i] !== 0) {
      rotulos.push(pergunta.subarray(i + 1, i + 1 + pergunta[i]).toString('ascii'));
      i += pergunta[i] + 1;
    }
    const fimDaPergunta = i + 5;
    const tipo = pergunta.readUInt16BE(i + 1);
    const nome = rotulos.join('.').toLowerCase();
    consultas.push(`${nome} ${tipo === 28 ? 'AAAA' : tipo === 1 ? 'A' : tipo}`);
    if (silenciosos.includes(nome)) return;
    const conhecido = nome in nomes;
    const enderecos = (nomes[nome] ?? []).filter((e) => net.isIP(e) === (tipo === 28 ? 6 : tipo === 1 ? 4 : -1));
    const respostas = enderecos.map((e) => {
      const dados = Buffer.from(ipaddr.parse(e).toByteArray());
      const r = Buffer.alloc(12);
      r.writeUInt16BE(0xc00c, 0); // the name: a pointer to the question's
      r.writeUInt16BE(tipo, 2);
      r.writeUInt16BE(1, 4); // IN
      r.writeUInt32BE(60, 6); // TTL
      r.writeUInt16BE(dados.length, 10);
      return Buffer.concat([r, dados]);
    });
    const cabecalho = Buffer.alloc(12);
    pergunta.copy(cabecalho, 0, 0, 2); // the query's id
    cabecalho.writeUInt16BE(conhecido ? 0x8180 : 0x8183, 2); // answer, recursion; NXDOMAIN for an unknown name
    cabecalho.writeUInt16BE(1, 4);
    cabecalho.writeUInt16BE(respostas.length, 6);
    socket.send(Buffer.concat([cabecalho, pergunta.subarray(12, fimDaPergunta), ...respostas]), remetente.port, remetente.address);
  });
  await new Promise<void>((r) => socket.bind(0, '127.0.0.1', r));
  return {
    endereco: `127.0.0.1:${socket.address().port}`,
    consultas,
    fechar: () => new Promise((r) => socket.close(() => r())),
  };
}
