/**
 * TCP keep-alive probes after this long without traffic on a connection to the database or Redis,
 * then every second, ten unanswered ending it (the interval and count Node sets with the delay): a
 * server gone without closing its connections (its host failed over, or cut off by the network)
 * fails what waits on them within about 20 seconds, once what was sent had been acknowledged (a
 * statement waiting for its answer, a worker's blocking read); a request sent after the server went
 * falls to the system's retransmission limit instead (about 15 minutes). mysql2 left keep-alive to
 * the system's default, two hours before the first probe; ioredis 6's own is 30 seconds.
 */
export const SONDA_DA_CONEXAO_MS = 10_000;
