// What every service gets from the process (shared state) and what it gives back.
import type { RequestListener } from 'node:http';
import type Koa from 'koa';
import type { RedisClientType } from '@redis/client';
import type { Logger } from '../shared/log.ts';
import type { Cache } from './cache.ts';
import type { Config } from './config.ts';
import type { RateLimiter } from './http/rate-limit.ts';
import type { Readiness } from './readiness.ts';
import type { Upstreams } from './skins/upstreams.ts';

export interface SharedDeps {
  config: Config;
  log: Logger;
  cache: Cache;
  limiter: RateLimiter;
  /** The process's Redis connection when REDIS_URL is set. */
  redis: RedisClientType | null;
  /** Upstream clients and the player lookup, shared by the services of this process. */
  upstreams: Upstreams;
  /** This service's readiness: the shared checks (Redis, the event loop); a service adds its own. */
  readiness: Readiness;
  /** Aborts when the process is asked to stop while the services start: a long start gives up. */
  stopping?: AbortSignal;
}

export interface Service {
  // The state type differs per service; the server only needs the request handler.
  app: Koa<any>;
  /** The port's request handler when it is more than the app's own callback (a fast path in front). */
  handler?(): RequestListener;
  close?(): Promise<void>;
  /** Gives back memory it can do without once the load is over (api/idle-trim.ts). */
  trim?(): Promise<void>;
}
