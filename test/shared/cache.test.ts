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
});
