import { iniciarSuite, SuiteDeTeste } from '../helpers/suite';
import { arquivosNoDisco, bytesAleatorios, filesDe, linhasNoBanco } from './apoio';

/**
 * How long an upload may take (FILES_PRAZO_DO_ENVIO_S, 2 s here; 1 hour by default, where Node's
 * own 5 minutes cut a 25 MiB upload on links slower than about 85 KB/s): one arriving within it is
 * stored however slowly it comes; one still arriving past it answers 408 and leaves nothing.
 */

let suite: SuiteDeTeste;
let files: ReturnType<typeof filesDe>;
let app: { id: string; token: string };

beforeAll(async () => {
  suite = await iniciarSuite(['identity', 'files'], { workers: false, env: { FILES_PRAZO_DO_ENVIO_S: '2' } });
  files = filesDe(suite);
  app = await files.novoAplicativo();
});
afterAll(() => suite.encerrar());

const pedacos = (n: number) => Array.from({ length: n }, () => bytesAleatorios(1024));

test('an upload arriving slowly but within the time allowed is stored', async () => {
  const res = await files.enviarEmPedacos(app.token, 'lento.bin', pedacos(4), 'application/octet-stream', 250);
  expect(res.status).toBe(201);
  expect(res.body.tamanho).toBe(4 * 1024);
});

test('an upload still arriving past the time allowed answers 408 and leaves nothing stored', async () => {
  const antes = { disco: arquivosNoDisco(), linhas: await linhasNoBanco() };
  const inicio = Date.now();
  const res = await files.enviarEmPedacos(app.token, 'lento-demais.bin', pedacos(40), 'application/octet-stream', 200);
  // Node answers 408 and closes; a client still writing may see the close before the answer (0)
  expect([408, 0]).toContain(res.status);
  expect(Date.now() - inicio).toBeLessThan(6000);
  // the partial file goes once the request is cut
  for (let i = 0; i < 20 && arquivosNoDisco().length !== antes.disco.length; i++) await new Promise((r) => setTimeout(r, 100));
  expect({ disco: arquivosNoDisco(), linhas: await linhasNoBanco() }).toEqual(antes);
});
