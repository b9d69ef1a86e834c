import { config } from '../../config';
import { encerrar } from '../../lib/lifecycle';
import { esperarRedis, redis, umaVez } from '../../lib/redis';

/*
 * umaVez (lib/redis.ts): a call's mark says em-andamento while it runs, for at most a minute, and
 * a failure removes only its own mark. Once the mark lapsed, a copy may have been taken and have
 * marked the key itself: that mark stays.
 */

beforeAll(() => esperarRedis());
afterAll(() => encerrar());

const chave = () => `${config().queuePrefix}:teste:marca:${Math.random().toString(36).slice(2)}`;

test("a call that fails removes its own mark, so a retry runs", async () => {
  const k = chave();
  await expect(umaVez(k, 60_000, () => 'repetida', async () => Promise.reject(new Error('falhou')))).rejects.toThrow('falhou');
  expect(await redis('produtor').exists(k)).toBe(0);
  expect(await umaVez(k, 60_000, () => 'repetida', async () => 'feita')).toBe('feita');
  expect(await redis('produtor').get(k)).toBe('feito');
});

test("a call that fails after its mark lapsed and another copy marked the key leaves that copy's mark alone", async () => {
  const k = chave();
  let falhar!: () => void;
  const chamada = umaVez(k, 60_000, () => 'repetida', () => new Promise<string>((_, rejeitar) => (falhar = () => rejeitar(new Error('falhou')))));
  // the mark lapsed meanwhile, and a copy taken since recorded the event
  while (!(await redis('produtor').exists(k))) await new Promise((r) => setTimeout(r, 5));
  await redis('produtor').set(k, 'feito', 'PX', 60_000);
  falhar();
  await expect(chamada).rejects.toThrow('falhou');
  expect(await redis('produtor').get(k)).toBe('feito');
  expect(await umaVez(k, 60_000, (estado) => `repetida (${estado})`, async () => 'de novo')).toBe('repetida (feito)');
});
