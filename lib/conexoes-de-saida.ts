import http from 'node:http';
import https from 'node:https';

/**
 * How long a connection kept for reuse stays idle before it is closed. An agent keeps an idle
 * socket until the other side closes it unless given a time-out, and a host no longer called (a
 * subscription deleted, an attachment's storage seen once) that never closes idle connections
 * held its sockets, file descriptors each, for the life of the process. Node's own global agent
 * closes them after 5 seconds.
 */
export const OCIOSA_ATE_MS = 30_000;

/**
 * Keep-alive agents, one per scheme, whose idle connections close after `ociosaMs`. The time-out
 * closes idle sockets only: a request in flight is not cut by it (each call sets its own).
 */
export function agentesDeSaida(ociosaMs = OCIOSA_ATE_MS): Record<'http:' | 'https:', http.Agent> {
  return {
    'http:': new http.Agent({ keepAlive: true, timeout: ociosaMs }),
    'https:': new https.Agent({ keepAlive: true, timeout: ociosaMs }),
  };
}
