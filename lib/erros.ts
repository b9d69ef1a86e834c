/**
 * An error's message with its cause's: fetch rejects with "fetch failed" alone, the reason (a
 * refused connection, a name not resolved) in its `cause`.
 */
export function comCausa(err: Error): string {
  const causa = err.cause as Error | undefined;
  return causa?.message ? `${err.message} (${causa.message})` : err.message;
}
