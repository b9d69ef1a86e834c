import crypto from 'node:crypto';
import { HASHES_NA_ESPERA, HASHES_SIMULTANEOS, senhaConfere } from '../../api/identity/senhas';
import { esperarProblema, Resposta } from '../helpers/http';
import { ADMIN, identityDe } from '../helpers/identity';
import { iniciarSuite, SuiteDeTeste } from '../helpers/suite';

/**
 * DESIGN §10 rate limits: IDENTITY_LOGIN_LIMITE_POR_MINUTO per client address on /auth/login and
 * on /auth/token, each route with a budget of its own, 429 with Retry-After past it. Set to 3 here. The service trusts X-Forwarded-For from
 * a loopback proxy, which lets each test speak from an address of its own.
 */

let suite: SuiteDeTeste;
let id: ReturnType<typeof identityDe>;

beforeAll(async () => {
  // no outbox worker: only outbox.test.ts has a hub to publish colaborador events to
  suite = await iniciarSuite(['identity'], { workers: false, env: { IDENTITY_LOGIN_LIMITE_POR_MINUTO: '3' } });
  id = identityDe(suite.url.identity);
});
afterAll(() => suite.encerrar());

let ultimoOcteto = 10;
/** A documentation address (RFC 5737) no other test uses. */
const novoEndereco = () => ({ 'x-forwarded-for': `203.0.113.${ultimoOcteto++}` });
const login = (body: unknown, headers?: Record<string, string>) => id.api.post('/auth/login', { body, headers });
/** A login that fails: a new e-mail each time, so that no lock of an unknown e-mail (five failures) answers 423 before the limit does. */
let tentativas = 0;
const errada = () => ({ email: `ninguem-${++tentativas}@suite.test`, senha: 'Senha-Errada-1' });

function esperarLimite(res: Resposta) {
  esperarProblema(res, 429);
  const segundos = Number(res.headers.get('retry-after'));
  expect(Number.isInteger(segundos)).toBe(true);
  expect(segundos).toBeGreaterThanOrEqual(1);
  expect(segundos).toBeLessThanOrEqual(60);
}

test('the 4th login from the same address within a minute answers 429 with Retry-After, as problem+json', async () => {
  const statuses = [];
  for (let i = 0; i < 3; i++) statuses.push((await login(errada())).status);
  expect(statuses).toEqual([401, 401, 401]);
  esperarLimite(await login(errada()));
});

test('past the limit even the right credentials answer 429 (the limit comes first)', async () => {
  const endereco = novoEndereco();
  for (let i = 0; i < 3; i++) await login({}, endereco);
  esperarLimite(await login(ADMIN, endereco));
});

test('the count is per client address: another address still logs in', async () => {
  const esgotado = novoEndereco();
  for (let i = 0; i < 4; i++) await login({}, esgotado);
  esperarLimite(await login(ADMIN, esgotado));
  const res = await login(ADMIN, novoEndereco());
  expect(res.status).toBe(200);
});

test('POST /auth/token is limited as well', async () => {
  const endereco = novoEndereco();
  const token = (headers: Record<string, string>) => id.api.post('/auth/token', { body: { client_id: 'x', client_secret: 'y' }, headers });
  const statuses = [];
  for (let i = 0; i < 3; i++) statuses.push((await token(endereco)).status);
  expect(statuses).toEqual([401, 401, 401]);
  esperarLimite(await token(endereco));
});

test('/auth/login and /auth/token count apart: a spent login budget leaves the application token available', async () => {
  const endereco = novoEndereco();
  for (let i = 0; i < 3; i++) await login(errada(), endereco);
  esperarLimite(await login(errada(), endereco));
  const app = await id.api.post('/auth/token', { body: { client_id: 'x', client_secret: 'y' }, headers: endereco });
  expect(app.status).toBe(401);
});

test('other routes are not limited by it', async () => {
  const endereco = novoEndereco();
  for (let i = 0; i < 4; i++) await login({}, endereco);
  esperarLimite(await login({}, endereco));
  for (let i = 0; i < 5; i++) {
    expect((await id.api.get('/.well-known/jwks.json', { headers: endereco })).status).toBe(200);
  }
});

test('password hashes run two at a time in the process; past 32 waiting, a hash is refused and the login answers 429 with Retry-After', async () => {
  let emCurso = 0;
  let maximo = 0;
  // the hashes are held until released, so the places stay taken while the login is tried
  const retidos: (() => void)[] = [];
  const original = crypto.scrypt;
  const espiao = jest.spyOn(crypto, 'scrypt').mockImplementation(((...args: unknown[]) => {
    emCurso++;
    maximo = Math.max(maximo, emCurso);
    const pronto = args.pop() as (err: Error | null, chave: Buffer) => void;
    retidos.push(() =>
      (original as (...a: unknown[]) => void)(...args, (err: Error | null, chave: Buffer) => {
        emCurso--;
        pronto(err, chave);
      }),
    );
  }) as typeof crypto.scrypt);
  try {
    const checagens = Promise.allSettled(Array.from({ length: HASHES_SIMULTANEOS + HASHES_NA_ESPERA + 6 }, () => senhaConfere('Uma-Senha-1', null)));
    // every place taken: a login now is refused before its password is checked
    esperarLimite(await login(errada(), novoEndereco()));
    while (emCurso > 0 || retidos.length) {
      retidos.splice(0).forEach((liberar) => liberar());
      await new Promise((r) => setTimeout(r, 5));
    }
    const recusadas = (await checagens).filter((r) => r.status === 'rejected');
    expect(recusadas).toHaveLength(6);
    for (const r of recusadas) expect((r as PromiseRejectedResult).reason).toMatchObject({ tipo: 'limite_excedido', retryAfterSegundos: 1 });
    expect(maximo).toBe(HASHES_SIMULTANEOS);
  } finally {
    espiao.mockRestore();
  }
  // the places given back: a login goes through to its password check again
  esperarProblema(await login(errada(), novoEndereco()), 401);
});
