import { redis } from '../../lib/redis';
import { esperarAte } from './espera';

/**
 * The shared producer connection back after a test dropped it (`disconnect()`, Redis away for the
 * process). ioredis refuses `connect()` until the dropped socket has closed ("already connecting/
 * connected"), which a quick test step can beat: the close is waited for first.
 */
export async function reconectarProdutor(): Promise<void> {
  const produtor = redis('produtor');
  await esperarAte(() => produtor.status === 'end', 'the dropped producer connection closed');
  await produtor.connect();
}
