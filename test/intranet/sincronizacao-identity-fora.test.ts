import http from 'node:http';
import { AddressInfo } from 'node:net';
import { config } from '../../config';
import { iniciarSuite, SuiteDeTeste } from '../helpers/suite';
import { Intranet, intranetDe, unico } from './apoio';

/**
 * SPEC 4.5 rule 2 and DESIGN §3: the sync before a master's listing must not stop the listing
 * when identity is down or slow. The suite reaches identity at its configured address through a
 * local relay started here (a load balancer in front of identity, in effect) that the tests can
 * break. Token keys were already fetched from identity itself, so tokens keep verifying, as they
 * would while the intranet holds identity's keys in cache.
 */
type Modo = 'normal' | 'fora' | 'erro' | 'lento';

function retransmissor(destino: string) {
  let modo: Modo = 'normal';
  const presas: http.ServerResponse[] = [];
  const server = http.createServer(async (req, res) => {
    if (modo === 'fora') return req.socket.destroy();
    if (modo === 'erro') return res.writeHead(503, { 'content-type': 'application/json' }).end('{}');
    if (modo === 'lento') return void presas.push(res);
    const resposta = await fetch(destino + req.url, {
      method: req.method,
      headers: { authorization: String(req.headers.authorization ?? ''), accept: 'application/json' },
    });
    res.writeHead(resposta.status, { 'content-type': resposta.headers.get('content-type') ?? 'application/json' });
    res.end(Buffer.from(await resposta.arrayBuffer()));
  });
  return {
    server,
    mudar(novo: Modo) {
      modo = novo;
    },
    /** answers what was held back, as an identity that finally gives up */
    soltar() {
      presas.splice(0).forEach((r) => r.writeHead(503).end());
    },
    quantasPresas: () => presas.length,
  };
}

const ESPERA_MS = 800;
let suite: SuiteDeTeste;
let it: Intranet;
let relay: ReturnType<typeof retransmissor>;

beforeAll(async () => {
  suite = await iniciarSuite(['identity', 'intranet'], { env: { ACESSO_ESPERA_SYNC_MS: String(ESPERA_MS) } });
  relay = retransmissor(suite.url.identity);
  await new Promise<void>((r) => relay.server.listen(0, '127.0.0.1', r));
  // from here on identity is known at the relay's address: tokens carry it as issuer and the sync calls it
  config().servicos.identity.url = `http://127.0.0.1:${(relay.server.address() as AddressInfo).port}`;
  it = intranetDe(suite);
});
afterAll(async () => {
  relay.soltar();
  await new Promise((r) => relay.server.close(r));
  await suite.encerrar();
});

describe('identity down or slow does not stop a master listing (SPEC 4.5 rule 2, DESIGN §3)', () => {
  test.each([
    ['unreachable', 'fora'],
    ['answering an error', 'erro'],
  ] as const)('identity %s: the master listing answers 200 with the local collaborators; a later listing catches up', async (_caso, modo) => {
    const tag = unico('Fora');
    const antes = await it.identity.criarUsuario({ senha: undefined, nome: `${tag} Antes` });
    await it.sincronizar();
    const depois = await it.identity.criarUsuario({ senha: undefined, nome: `${tag} Depois` });

    relay.mudar(modo);
    try {
      const pagina = await it.sincronizar({ nome: tag });
      expect(pagina.itens.map((c: any) => c.auth_id)).toEqual([antes.id]);
    } finally {
      relay.mudar('normal');
    }
    const seguinte = await it.sincronizar({ nome: tag });
    expect(seguinte.itens.map((c: any) => c.auth_id)).toEqual([antes.id, depois.id]);
  });

  test('identity slow: the listing waits a bounded time, then answers with what is local', async () => {
    const tag = unico('Lento');
    const antes = await it.identity.criarUsuario({ senha: undefined, nome: `${tag} Antes` });
    await it.sincronizar();
    const depois = await it.identity.criarUsuario({ senha: undefined, nome: `${tag} Depois` });

    relay.mudar('lento');
    const inicio = Date.now();
    try {
      const pagina = await it.sincronizar({ nome: tag });
      const demora = Date.now() - inicio;
      expect(pagina.itens.map((c: any) => c.auth_id)).toEqual([antes.id]);
      expect(relay.quantasPresas()).toBe(1); // the sync did call identity, which is still holding the answer
      expect(demora).toBeGreaterThanOrEqual(ESPERA_MS - 50);
      expect(demora).toBeLessThan(ESPERA_MS + 4000); // far below the 10 s the sync itself may take
    } finally {
      relay.mudar('normal');
      relay.soltar();
    }
    // the held job has ended (failed) by now or shortly: a new listing runs a new sync
    let seguinte: any;
    for (let i = 0; i < 20; i++) {
      seguinte = await it.sincronizar({ nome: tag });
      if (seguinte.itens.length === 2) break;
    }
    expect(seguinte.itens.map((c: any) => c.auth_id)).toEqual([antes.id, depois.id]);
  });
});
