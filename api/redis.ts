// One Redis connection per process, shared by cache, rate limits, sessions and search keys (a
// second one for the cache when CACHE_REDIS_URL names another Redis). It reconnects by itself;
// callers treat a not-ready client as "Redis unavailable".
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

/**
 * Warns once at start about a cache Redis that can hurt the rest: one with no memory bound grows
 * with every distinct image asked for; one that evicts any key (allkeys-*) while it also holds
 * sessions, search keys and rate-limit counters drops those under cache churn. A Redis that does
 * not answer CONFIG (managed services) is taken on trust.
 */
export async function checkCacheRedis(client: RedisClientType, sharedWithState: boolean, log: Logger): Promise<void> {
  let settings: Record<string, string>;
  try {
    settings = await client.configGet(['maxmemory', 'maxmemory-policy']) as Record<string, string>;
  } catch {
    return;
  }
  const policy = settings['maxmemory-policy'] ?? '';
  if (settings.maxmemory === '0') log.warn('the cache Redis has no maxmemory: it grows with every distinct image; set maxmemory with an LRU policy (README, Security)');
  if (sharedWithState && policy.startsWith('allkeys-')) {
    log.warn(`REDIS_URL evicts any key (maxmemory-policy ${policy}) and also holds the cache: image churn can evict sessions, search keys and rate-limit counters; set CACHE_REDIS_URL to a Redis of its own (README, Security)`);
  }
}
