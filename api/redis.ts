// One Redis connection per process, shared by cache, rate limits, sessions and search keys.
// It reconnects by itself; callers treat a not-ready client as "Redis unavailable".
import { createClient, type RedisClientType } from '@redis/client';
import type { Logger } from '../shared/log.ts';

export async function connectRedis(url: string, log: Logger): Promise<RedisClientType> {
  const client: RedisClientType = createClient({
    url,
    socket: {
      connectTimeout: 2000,
      reconnectStrategy: (retries: number) => Math.min(100 * 2 ** retries, 5000),
    },
    disableOfflineQueue: true,
  });
  let lastError = '';
  client.on('error', (err: Error) => {
    // The client retries forever; log each distinct failure once instead of every retry.
    if (err.message !== lastError) log.warn('redis error', { err: err.message });
    lastError = err.message;
  });
  client.on('ready', () => {
    lastError = '';
    log.info('redis ready', { url: url.replace(/\/\/[^@]*@/, '//***@') });
  });
  await client.connect();
  return client;
}
