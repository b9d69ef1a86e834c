import path from 'node:path';
import { config } from '../../config';
import { prepararIdentity } from '../../api/identity/preparar';
import { esquecerTokenDoServico, tokenDoServico } from '../../api/shared/token-do-servico';
import { Aplicativo } from '../../models/identity';
import { identityDe } from '../helpers/identity';
import type { Registro } from '../helpers/registros';
import { iniciarSuite, SuiteDeTeste } from '../helpers/suite';

const mockRegistros: Registro[] = [];
jest.mock('../../lib/logger', () => jest.requireActual('../helpers/registros').loggerQueRegistra('credenciais', ['error'], () => mockRegistros));

/**
 * A suite service's own application (DESIGN §3) whose secret is renewed at identity
 * (POST /aplicativo/{id}/segredo) can no longer get tokens until its settings carry the new secret:
 * the refusal is an error naming where the service read its credentials, logged once however
 * often the service asks meanwhile, and the new secret works as soon as it is set.
 */

let suite: SuiteDeTeste;
let id: ReturnType<typeof identityDe>;

beforeAll(async () => {
  // LOCALHOST: the start registers the suite's applications and keeps their credentials in DATA_DIR
  suite = await iniciarSuite(['identity'], { workers: false });
  id = identityDe(suite.url.identity);
});
afterAll(() => suite.encerrar());
beforeEach(() => mockRegistros.splice(0));

async function renovar(servico: string): Promise<{ id: string; client_secret: string }> {
  const app = await Aplicativo.findOne({ where: { servico_da_suite: servico } });
  const res = await id.api.post(`/aplicativo/${app!.id}/segredo`, { token: await id.admin() });
  expect(res.status).toBe(200);
  return res.body;
}

test('a secret renewed at identity: the service is refused with an error naming SALES_CLIENT_ID/SALES_CLIENT_SECRET, logged once, and the new secret works once set', async () => {
  const primeiro = await renovar('sales');
  Object.assign(config().servicos.sales, { clientId: primeiro.id, clientSecret: primeiro.client_secret });
  expect(await tokenDoServico('sales')).toEqual(expect.any(String));

  const segundo = await renovar('sales');
  // the token held lasts its hour; the next one is asked with the old secret
  esquecerTokenDoServico('sales');
  for (let i = 0; i < 3; i++) await expect(tokenDoServico('sales')).rejects.toThrow(/sales service's credentials: the secret in SALES_CLIENT_ID\/SALES_CLIENT_SECRET /);
  expect(mockRegistros).toHaveLength(1);
  const [campos] = mockRegistros[0].args as [Record<string, unknown>];
  expect(campos).toMatchObject({ servico: 'sales', client_id: primeiro.id, configuracao: 'SALES_CLIENT_ID/SALES_CLIENT_SECRET' });
  expect(JSON.stringify(mockRegistros[0].args)).not.toContain(primeiro.client_secret);

  config().servicos.sales.clientSecret = segundo.client_secret;
  expect(await tokenDoServico('sales')).toEqual(expect.any(String));
});

test('in LOCALHOST the error names the credentials file, and a restart of identity registers the service again', async () => {
  await renovar('hub');
  const arquivo = path.resolve(config().dataDir, `${config().dbPrefix}-credenciais.json`);
  await expect(tokenDoServico('hub')).rejects.toThrow(`the secret in ${arquivo} (written by identity's start) is not the application's current one`);
  expect((mockRegistros[0].args[0] as Record<string, unknown>).configuracao).toBe(`${arquivo} (written by identity's start)`);

  await prepararIdentity();
  expect(await tokenDoServico('hub')).toEqual(expect.any(String));
});

test('a refused token is forgotten only while it is the one held: a newer one, asked for meanwhile by another call, stays', async () => {
  const token = await tokenDoServico('hub');
  const pedidos = jest.spyOn(globalThis, 'fetch');
  try {
    esquecerTokenDoServico('hub', `${token}-anterior`);
    expect(await tokenDoServico('hub')).toBe(token);
    expect(pedidos).not.toHaveBeenCalled();
    esquecerTokenDoServico('hub', token);
    expect(await tokenDoServico('hub')).toEqual(expect.any(String));
    expect(pedidos).toHaveBeenCalledTimes(1);
  } finally {
    pedidos.mockRestore();
  }
});

test('a token is reused even at the shortest lifetime identity allows (60 s): the service asks for the next one with a quarter of it left', async () => {
  const segundos = config().identity.tokenAplicativoSegundos;
  config().identity.tokenAplicativoSegundos = 60;
  const pedidos = jest.spyOn(globalThis, 'fetch');
  try {
    esquecerTokenDoServico('hub');
    const token = await tokenDoServico('hub');
    expect(await tokenDoServico('hub')).toBe(token);
    expect(pedidos).toHaveBeenCalledTimes(1);
  } finally {
    pedidos.mockRestore();
    config().identity.tokenAplicativoSegundos = segundos;
  }
});

test('callers at once share one token request: one call to identity, one token for all; a refusal is logged once for all of them', async () => {
  const chamadas = jest.spyOn(globalThis, 'fetch');
  const pedidosDeToken = () => chamadas.mock.calls.filter(([url]) => String(url).endsWith('/auth/token')).length;
  try {
    esquecerTokenDoServico('intranet');
    const tokens = await Promise.all(Array.from({ length: 6 }, () => tokenDoServico('intranet')));
    expect(new Set(tokens).size).toBe(1);
    expect(tokens[0]).toEqual(expect.any(String));
    expect(pedidosDeToken()).toBe(1);

    // the secret renewed at identity: six callers at once, one refusal logged
    await renovar('intranet');
    esquecerTokenDoServico('intranet');
    const recusas = await Promise.allSettled(Array.from({ length: 6 }, () => tokenDoServico('intranet')));
    expect(recusas.every((r) => r.status === 'rejected')).toBe(true);
    expect(pedidosDeToken()).toBe(2);
    expect(mockRegistros).toHaveLength(1);
  } finally {
    chamadas.mockRestore();
  }
});
