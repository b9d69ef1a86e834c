import { identityPorRetransmissor } from '../helpers/retransmissor-do-identity';
import { iniciarSuite, SuiteDeTeste } from '../helpers/suite';
import { Intranet, intranetDe, unico } from './apoio';

/**
 * SPEC 4.5 rule 2 and DESIGN §3: the sync before a master's listing must not stop the listing
 * when identity is down or slow. The suite reaches identity at its configured address through a
 * local relay that the tests can break (test/helpers/retransmissor-do-identity.ts).
 */

const ESPERA_MS = 800;
let suite: SuiteDeTeste;
let it: Intranet;
let relay: Awaited<ReturnType<typeof identityPorRetransmissor>>;

beforeAll(async () => {
  suite = await iniciarSuite(['identity', 'intranet'], { env: { ACESSO_ESPERA_SYNC_MS: String(ESPERA_MS) } });
  relay = await identityPorRetransmissor(suite.url.identity);
  it = intranetDe(suite);
});
afterAll(async () => {
  await relay.fechar();
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
