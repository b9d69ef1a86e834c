/**
 * A seeded generator (mulberry32): the same seed draws the same values on every run, so a test
 * that draws its data can name the seed of a failure and replay it.
 */
export function sorteio(semente: number) {
  let estado = semente >>> 0;
  const proximo = () => {
    estado = (estado + 0x6d2b79f5) >>> 0;
    let t = estado;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
  return {
    /** in [0, 1) */
    proximo,
    um: <T>(lista: readonly T[]): T => lista[Math.floor(proximo() * lista.length)],
    embaralhar<T>(lista: readonly T[]): T[] {
      const c = [...lista];
      for (let i = c.length - 1; i > 0; i--) {
        const j = Math.floor(proximo() * (i + 1));
        [c[i], c[j]] = [c[j], c[i]];
      }
      return c;
    },
  };
}
