import { CacheComPrazo } from '../../lib/cache';

/** The in-process cache of permissions, tokens and hub contracts (lib/cache.ts). */
describe('CacheComPrazo', () => {
  test('a value loaded once is served until its term ends', async () => {
    let agora = 1_000;
    const real = Date.now;
    Date.now = () => agora;
    try {
      const cache = new CacheComPrazo<string, number>(() => 100);
      let cargas = 0;
      const carregar = async () => ++cargas;
      expect(await cache.obterOuCarregar('a', carregar)).toBe(1);
      agora += 99;
      expect(await cache.obterOuCarregar('a', carregar)).toBe(1);
      agora += 1;
      expect(await cache.obterOuCarregar('a', carregar)).toBe(2);
    } finally {
      Date.now = real;
    }
  });

  test('a load answering undefined is not kept: the next caller loads again', async () => {
    const cache = new CacheComPrazo<string, number | null | undefined>(() => 60_000);
    let cargas = 0;
    expect(await cache.obterOuCarregar('nenhum', async () => (cargas++, undefined))).toBeUndefined();
    expect(await cache.obterOuCarregar('nenhum', async () => (cargas++, undefined))).toBeUndefined();
    expect(cargas).toBe(2);
    expect(await cache.obterOuCarregar('nulo', async () => (cargas++, null))).toBeNull();
    expect(await cache.obterOuCarregar('nulo', async () => (cargas++, null))).toBeNull();
    expect(cargas).toBe(3);
  });

  test('a load that began before the entry was forgotten is not stored: the change it missed takes effect at once', async () => {
    const cache = new CacheComPrazo<string, string>(() => 60_000);
    let soltar!: () => void;
    const lenta = cache.obterOuCarregar('pessoa', () => new Promise<string>((ok) => (soltar = () => ok('permissões antigas'))));
    cache.esquecer('pessoa'); // the profile changed while the old permissions were being read
    soltar();
    expect(await lenta).toBe('permissões antigas'); // that caller saw the old ones, as it asked before the change
    expect(cache.obter('pessoa')).toBeUndefined();
    expect(await cache.obterOuCarregar('pessoa', async () => 'permissões novas')).toBe('permissões novas');
  });
  test('a shared load: callers asking while it runs get the same one, and one that failed is loaded again by the next caller', async () => {
    const cache = new CacheComPrazo<string, Promise<number>>(() => 60_000);
    let cargas = 0;
    let soltar!: () => void;
    const carregar = () => new Promise<number>((ok, falha) => ((soltar = () => (cargas === 1 ? falha(new Error('fora')) : ok(cargas))), cargas++));
    const [a, b] = [cache.compartilhar('x', carregar), cache.compartilhar('x', carregar)];
    expect(a).toBe(b);
    soltar();
    await expect(a).rejects.toThrow('fora');
    const c = cache.compartilhar('x', carregar);
    soltar();
    expect(await c).toBe(2);
    expect(await cache.compartilhar('x', carregar)).toBe(2);
    expect(cargas).toBe(2);
  });
});
