/**
 * From now on, Date runs as a process whose clock is `ms` ahead (behind, when negative) of this
 * one would: only Date is faked, timers run as ever. The services of the suite run in the test's
 * process, so what they stamp meanwhile carries that clock. Answers how to put the clock back.
 */
export function adiantarRelogio(ms: number): () => void {
  jest.useFakeTimers({
    now: Date.now() + ms,
    advanceTimers: true,
    doNotFake: ['hrtime', 'nextTick', 'performance', 'queueMicrotask', 'setImmediate', 'clearImmediate', 'setInterval', 'clearInterval', 'setTimeout', 'clearTimeout'],
  });
  return () => jest.useRealTimers();
}

/** Runs `fn` with the clock `ms` ahead (adiantarRelogio), and puts it back. */
export async function comRelogioAdiantado<T>(ms: number, fn: () => Promise<T>): Promise<T> {
  const voltar = adiantarRelogio(ms);
  try {
    return await fn();
  } finally {
    voltar();
  }
}
