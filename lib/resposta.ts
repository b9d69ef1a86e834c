/**
 * Lets go of a fetch answer whose body will not be read (an error thrown on its status, or a
 * success whose body says nothing needed). Until its
 * body is read or the answer is collected as garbage, fetch holds its connection: a server failing
 * with a body it never ends would keep one open per call, and even a short error body read by
 * nobody sends the next call to a new connection instead of reusing this one.
 */
export function largarResposta(res: Response): void {
  res.body?.cancel().catch(() => undefined);
}
