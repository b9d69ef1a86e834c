import { iniciarSuite, SuiteDeTeste } from '../helpers/suite';
import { identityDe } from '../helpers/identity';

let suite: SuiteDeTeste;
beforeAll(async () => {
  suite = await iniciarSuite(['identity', 'intranet']);
});
afterAll(() => suite.encerrar());

test('admin logs in and reads own record', async () => {
  const id = identityDe(suite.url.identity);
  const token = await id.admin();
  const lista = await id.api.get('/usuario', { token });
  expect(lista.status).toBe(200);
  expect(lista.body.total).toBe(1);
});
