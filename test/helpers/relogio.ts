/**
 * Runs `fn` as a process whose clock is `ms` ahead (behind, when negative) would: only Date is
 * faked, timers run as ever. The services of the suite run in the test's process, so what they
 * stamp meanwhile carries that clock.
 */
export async function comRelogioAdiantado<T>(ms: number, fn: () => Promise<T>): Promise<T> {
  jest.useFakeTimers({
    now: Date.now() + ms,
    advanceTimers: true,
    doNotFake: ['hrtime', 'nextTick', 'performance', 'queueMicrotask', 'setImmediate', 'clearImmediate', 'setInterval', 'clearInterval', 'setTimeout', 'clearTimeout'],
  });
  try {
    return await fn();
  } finally {
    jest.useRealTimers();
  }
}
