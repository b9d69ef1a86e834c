export const dormir = (ms: number) => new Promise((r) => setTimeout(r, ms));

type Falso = false | 0 | '' | null | undefined;

/** Polls `obter` until it returns something truthy, or fails after `prazoMs`. */
export async function esperarAte<T>(obter: () => Promise<T | Falso> | T | Falso, descricao: string, prazoMs = 10_000): Promise<T> {
  const limite = Date.now() + prazoMs;
  for (;;) {
    const valor = await obter();
    if (valor) return valor as T;
    if (Date.now() > limite) throw new Error(`${descricao}: not met within ${prazoMs} ms`);
    await dormir(40);
  }
}
