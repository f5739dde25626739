// Per-client-IP rate limits in fixed 60 s windows aligned to the clock, so every instance that
// shares Redis counts into the same window key. Without Redis the counters live in this process.
import type { IncomingMessage } from 'node:http';
import type { Middleware } from 'koa';
import type { RedisClientType } from '@redis/client';
import { ApiError } from '../../shared/errors.ts';
import type { Logger } from '../../shared/log.ts';
import { rateLimited } from '../metrics.ts';

export interface CounterStore {
  /** Counts one hit on `key` in the window ending at `resetAt` (ms) and returns the new count. */
  hit(key: string, resetAt: number): Promise<number>;
}

/**
 * Counts in this process, one map per window: a window that has ended is dropped whole. Walking
 * every client to delete expired counts (the first version, every 10 s) stalled the event loop
 * once a minute, when a window's counts all expired together: 58 ms for 131,072 clients.
 */
export class MemoryCounterStore implements CounterStore {
  private readonly windows = new Map<number, Map<string, number>>();
  private readonly maxKeysPerWindow: number;

  /**
   * Past `maxKeysPerWindow` clients in one window, a client not seen in it yet is answered as a
   * first hit and not remembered: memory stays bounded when a flood comes from more addresses
   * than a per-address limit could hold back anyway (1,000,000 IPv4 clients held 175 MB of heap,
   * so about 90 MB at this bound).
   */
  constructor(maxKeysPerWindow = 500_000) {
    this.maxKeysPerWindow = maxKeysPerWindow;
  }

  async hit(key: string, resetAt: number): Promise<number> {
    let counts = this.windows.get(resetAt);
    if (!counts) {
      this.dropEnded();
      counts = new Map();
      this.windows.set(resetAt, counts);
      // Also when no request follows: a quiet service gives the last window's memory back.
      setTimeout(() => this.dropEnded(), Math.max(0, resetAt - Date.now()) + 1000).unref();
    }
    const count = (counts.get(key) ?? 0) + 1;
    if (count > 1 || counts.size < this.maxKeysPerWindow) counts.set(key, count);
    return count;
  }

  private dropEnded(): void {
    const now = Date.now();
    for (const end of this.windows.keys()) if (end <= now) this.windows.delete(end);
  }

  /** Clients counted in windows still held (for operations and tests). */
  get keys(): number {
    let total = 0;
    for (const counts of this.windows.values()) total += counts.size;
    return total;
  }
}

// INCR and the expiry in one round trip, atomically, so concurrent instances never lose a count.
const HIT_SCRIPT = `local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('PEXPIREAT', KEYS[1], ARGV[1]) end
return n`;

export class RedisCounterStore implements CounterStore {
  private readonly redis: RedisClientType;
  constructor(redis: RedisClientType) {
    this.redis = redis;
  }
  async hit(key: string, resetAt: number): Promise<number> {
    const n = await this.redis.eval(HIT_SCRIPT, { keys: [`skinfarm:rl:${key}:${resetAt}`], arguments: [String(resetAt + 1000)] });
    return Number(n);
  }
}

export interface RateLimitGroup { name: string; limit: number; windowMs?: number }

export interface RateLimitOutcome { limit: number; remaining: number; resetAt: number; limited: boolean }

/** The X-RateLimit-* headers of an outcome. */
export function rateLimitHeaders(outcome: RateLimitOutcome): Record<string, string> {
  return {
    'X-RateLimit-Limit': String(outcome.limit),
    'X-RateLimit-Remaining': String(outcome.remaining),
    'X-RateLimit-Reset': String(Math.ceil(outcome.resetAt / 1000)),
  };
}

/** Requests a fast path has counted and then handed to Koa (to answer 429): never counted twice. */
const countedAlready = new WeakMap<IncomingMessage, RateLimitOutcome>();

export function handOverCounted(req: IncomingMessage, outcome: RateLimitOutcome): void {
  countedAlready.set(req, outcome);
}

export class RateLimiter {
  private readonly store: CounterStore;
  private readonly fallback = new MemoryCounterStore();
  private readonly log: Logger;
  limitedTotal = 0;

  constructor(store: CounterStore, log: Logger) {
    this.store = store;
    this.log = log;
  }

  async check(group: RateLimitGroup, clientKey: string, now = Date.now()): Promise<RateLimitOutcome> {
    const windowMs = group.windowMs ?? 60_000;
    const resetAt = Math.floor(now / windowMs) * windowMs + windowMs;
    const key = `${group.name}:${clientKey}`;
    let count: number;
    try {
      count = await this.store.hit(key, resetAt);
    } catch (err) {
      // Redis trouble degrades to per-instance limits rather than failing or unlimiting requests.
      this.log.warn('rate-limit store failed; counting in process', { err: (err as Error).message });
      count = await this.fallback.hit(key, resetAt);
    }
    const limited = count > group.limit;
    if (limited) {
      this.limitedTotal += 1;
      rateLimited.inc({ group: group.name });
    }
    return { limit: group.limit, remaining: Math.max(0, group.limit - count), resetAt, limited };
  }

  /** Koa middleware for one group: headers on every counted response, 429 past the quota. */
  middleware(group: RateLimitGroup): Middleware {
    return async (ctx, next) => {
      const outcome = countedAlready.get(ctx.req) ?? await this.check(group, ctx.ip);
      const headers = rateLimitHeaders(outcome);
      ctx.set(headers);
      if (outcome.limited) {
        throw new ApiError('rate_limited', { retryAfter: Math.ceil((outcome.resetAt - Date.now()) / 1000), headers });
      }
      await next();
    };
  }
}
