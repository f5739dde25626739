// Per-client-IP rate limits in fixed 60 s windows aligned to the clock, so every instance that
// shares Redis counts into the same window key. Without Redis the counters live in this process.
import type { IncomingMessage } from 'node:http';
import type { Middleware } from 'koa';
import type { RedisClientType } from '@redis/client';
import { ApiError } from '../../shared/errors.ts';
import type { Logger } from '../../shared/log.ts';
import { rateLimited } from '../metrics.ts';

export interface WindowCount { count: number; resetAt: number }

export interface CounterStore {
  /** Counts one hit on `key` in the window ending at `resetAt` (ms) and returns the new count. */
  hit(key: string, resetAt: number): Promise<number>;
}

export class MemoryCounterStore implements CounterStore {
  private readonly counts = new Map<string, WindowCount>();
  private nextSweep = 0;

  async hit(key: string, resetAt: number): Promise<number> {
    const now = Date.now();
    if (now >= this.nextSweep) this.sweep(now);
    const entry = this.counts.get(key);
    if (entry && entry.resetAt === resetAt) {
      entry.count += 1;
      return entry.count;
    }
    this.counts.set(key, { count: 1, resetAt });
    return 1;
  }

  private sweep(now: number): void {
    for (const [key, entry] of this.counts) if (entry.resetAt <= now) this.counts.delete(key);
    this.nextSweep = now + 10_000;
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
