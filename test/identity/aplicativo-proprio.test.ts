import { prepararIdentity } from '../../api/identity/preparar';
import { config } from '../../config';
import { Aplicativo } from '../../models/identity';
import type { Registro } from '../helpers/registros';
import { iniciarSuite, SuiteDeTeste } from '../helpers/suite';

const mockRegistros: Registro[] = [];
jest.mock('../../lib/logger', () => jest.requireActual('../helpers/registros').loggerQueRegistra('identity', ['error'], () => mockRegistros));

/**
 * Outside LOCALHOST a master creates identity's own application after the first start, and
 * IDENTITY_CLIENT_ID names it; until then the `colaborador.*` events are stored, unsent. Each start
 * says so as an error.
 */

let suite: SuiteDeTeste;
beforeAll(async () => {
  suite = await iniciarSuite(['identity'], { workers: false });
});
afterAll(() => suite.encerrar());

const semAplicativo = () => mockRegistros.filter((r) => r.nivel === 'error' && /não tem aplicativo próprio/.test(String(r.args[1])));

test('outside LOCALHOST a start with no application of identity its own, or IDENTITY_CLIENT_ID naming none, logs an error; with one named by IDENTITY_CLIENT_ID, none', async () => {
  const proprio = (await Aplicativo.findOne({ where: { servico_da_suite: 'identity' } }))!;
  const servicos = config().servicos.identity;
  const original = { clientId: servicos.clientId, ambiente: config().ambiente };
  Object.assign(config(), { ambiente: 'PRODUCTION' });
  try {
    await Aplicativo.update({ servico_da_suite: null }, { where: { id: proprio.id } });
    servicos.clientId = undefined;
    mockRegistros.length = 0;
    await prepararIdentity();
    expect(semAplicativo()).toEqual([{ nivel: 'error', args: [{ configuracao: 'IDENTITY_CLIENT_ID' }, expect.stringContaining('colaborador.*')] }]);

    // an id that names no application (mistyped, deleted) while another is still marked: the
    // events are sent with the one named, so they are unsent all the same
    await Aplicativo.update({ servico_da_suite: 'identity' }, { where: { id: proprio.id } });
    servicos.clientId = '00000000-0000-4000-8000-000000000000';
    mockRegistros.length = 0;
    await prepararIdentity();
    expect(semAplicativo()).toHaveLength(1);

    // the operator names it: the start marks it, and says nothing more
    servicos.clientId = proprio.id;
    mockRegistros.length = 0;
    await prepararIdentity();
    expect(semAplicativo()).toEqual([]);
    expect((await Aplicativo.findByPk(proprio.id))!.servico_da_suite).toBe('identity');
  } finally {
    Object.assign(config(), { ambiente: original.ambiente });
    servicos.clientId = original.clientId;
    await Aplicativo.update({ servico_da_suite: 'identity' }, { where: { id: proprio.id } });
  }
});
