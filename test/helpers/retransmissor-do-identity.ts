import http from 'node:http';
import { AddressInfo } from 'node:net';
import { config } from '../../config';

/**
 * Identity as a service under test reaches it (the hub, the intranet), at its configured address,
 * through a local relay started by the test (a load balancer in front of identity, in effect)
 * that records what the service asks and that the test can break, on every route or on the
 * reading of one application by its id, or have leave applications out of its listings (identity
 * read while it changed) or out of identity altogether (an application gone from it, and back).
 */

/** Passing through, dropping connections, an error, refusing tokens on /aplicativo, holding answers, or late. */
type Modo = 'normal' | 'fora' | 'erro' | 'recusa' | 'lento' | 'atrasado';

interface Pedido {
  metodo: string;
  caminho: string;
  autorizacao?: string;
  corpo: string;
}

/**
 * One request to identity on a connection of its own, closed after it (no keep-alive pool left
 * open when the file ends, as fetch's would be).
 */
function repassar(url: string, metodo: string, headers: Record<string, string>, corpo: string) {
  return new Promise<{ status: number; tipo?: string; corpo: Buffer }>((resolve, reject) => {
    const pedido = http.request(url, { method: metodo, headers, agent: false }, async (r) => {
      const partes: Buffer[] = [];
      for await (const p of r) partes.push(p as Buffer);
      resolve({ status: r.statusCode!, tipo: r.headers['content-type'], corpo: Buffer.concat(partes) });
    });
    pedido.on('error', reject);
    pedido.end(corpo || undefined);
  });
}

function retransmissor(destino: string) {
  let modoGeral: Modo = 'normal';
  /** for GET /aplicativo/{id} alone, unless normal */
  let modoPorId: Modo = 'normal';
  const pedidos: Pedido[] = [];
  /** identity applications gone, as far as the hub can tell: left out of the listings, 404 by id */
  const escondidos = new Set<string>();
  /** identity applications left out of the listings only (as a page read while identity changed would) */
  const perdidos = new Set<string>();
  /** identity applications listed twice (as offset pages read while one was added before them would) */
  const repetidos = new Set<string>();
  const presas: http.ServerResponse[] = [];
  const server = http.createServer(async (req, res) => {
    const partes: Buffer[] = [];
    for await (const p of req) partes.push(p as Buffer);
    const corpo = Buffer.concat(partes).toString('utf8');
    pedidos.push({ metodo: req.method!, caminho: req.url!, autorizacao: req.headers.authorization, corpo });
    const porId = req.method === 'GET' ? /^\/aplicativo\/([^/?]+)$/.exec(req.url!)?.[1] : undefined;
    const modo = porId && modoPorId !== 'normal' ? modoPorId : modoGeral;
    if (modo === 'fora') return req.socket.destroy();
    if (modo === 'erro') return res.writeHead(503, { 'content-type': 'application/json' }).end('{}');
    if (modo === 'recusa' && req.url!.startsWith('/aplicativo')) return res.writeHead(401, { 'content-type': 'application/json' }).end('{}');
    if (modo === 'lento') return void presas.push(res);
    if (modo === 'atrasado') await new Promise((r) => setTimeout(r, 400));
    if (porId && escondidos.has(porId)) {
      const problema = { title: 'Não encontrado', status: 404, detail: 'Aplicativo não encontrado.' };
      return res.writeHead(404, { 'content-type': 'application/problem+json' }).end(JSON.stringify(problema));
    }
    const headers: Record<string, string> = { accept: 'application/json' };
    if (req.headers.authorization) headers.authorization = req.headers.authorization;
    if (req.headers['content-type']) headers['content-type'] = req.headers['content-type'];
    const resposta = await repassar(destino + req.url, req.method!, headers, corpo);
    res.writeHead(resposta.status, { 'content-type': resposta.tipo ?? 'application/json' });
    let devolver = resposta.corpo;
    if ((escondidos.size || perdidos.size || repetidos.size) && resposta.status < 300 && /^\/aplicativo\?/.test(req.url!)) {
      const pagina = JSON.parse(devolver.toString('utf8'));
      const itens = pagina.itens
        .filter((a: { id: string }) => !escondidos.has(a.id) && !perdidos.has(a.id))
        .flatMap((a: { id: string }) => (repetidos.has(a.id) ? [a, a] : [a]));
      devolver = Buffer.from(JSON.stringify({ ...pagina, itens, total: pagina.total - (pagina.itens.length - itens.length) }));
    }
    res.end(devolver);
  });
  return {
    server,
    pedidos,
    mudar(novo: Modo) {
      modoGeral = novo;
    },
    /** breaks (or, back to normal, restores) GET /aplicativo/{id} alone */
    mudarPorId(novo: Modo) {
      modoPorId = novo;
    },
    /** answers what was held back, as an identity that finally gives up */
    soltar() {
      presas.splice(0).forEach((r) => r.writeHead(503).end());
    },
    quantasPresas: () => presas.length,
    escondidos,
    perdidos,
    repetidos,
  };
}

/**
 * A relay in front of identity at `destino`, listening, and from now on identity's address for
 * the services: tokens carry it as issuer and the syncs call it. Token keys were fetched from
 * identity itself, so tokens keep verifying, as they would while a service holds identity's keys.
 */
export async function identityPorRetransmissor(destino: string) {
  const relay = retransmissor(destino);
  await new Promise<void>((r) => relay.server.listen(0, '127.0.0.1', r));
  const endereco = `http://127.0.0.1:${(relay.server.address() as AddressInfo).port}`;
  config().servicos.identity.url = endereco;
  return {
    ...relay,
    endereco,
    /** answers what was held back, then stops */
    async fechar() {
      relay.soltar();
      relay.server.closeAllConnections();
      await new Promise((r) => relay.server.close(r));
    },
  };
}
