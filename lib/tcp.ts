/**
 * TCP keep-alive probes after this long without traffic on a connection to the database or Redis,
 * then every second, ten unanswered ending it (the interval and count Node sets with the delay): a
 * server gone without closing its connections (its host failed over, or cut off by the network)
 * fails what waits on them within about 20 seconds. Left to the system's default (two hours before
 * the first probe), a statement or a worker's blocking read, and the pool's slot it held, waited
 * that long.
 */
export const SONDA_DA_CONEXAO_MS = 10_000;
