// Per-client-IP rate limits in fixed 60 s windows aligned to the clock, so every instance that
// shares Redis counts into the same window key. Without Redis the counters live in this process.
// A hit counts 1 (a request) or a weight (a work budget charges each image its cost).
import type { IncomingMessage } from 'node:http';
import ipaddr from 'ipaddr.js';
import type { Middleware } from 'koa';
import type { RedisClientType } from '@redis/client';
import { ApiError, type Localized } from '../../shared/errors.ts';
import type { Logger } from '../../shared/log.ts';
import { StateLog } from '../../shared/log-state.ts';
import { rateLimited } from '../metrics.ts';

export interface CounterStore {
  /**
   * Adds `weight` (1 for a request, a cost for a work budget) to `client`'s count in `group`'s
   * window ending at `resetAt` (ms) and returns the new count, or null when the store could not
   * count it (the group's table is full).
   */
  hit(group: string, client: string, resetAt: number, weight?: number): Promise<number | null>;
}

/**
 * Counts in this process, one map per group and window: a window that has ended is dropped whole.
 * Walking every client to delete expired counts (the first version, every 10 s) stalled the event
 * loop once a minute, when a window's counts all expired together: 58 ms for 131,072 clients.
 */
export class MemoryCounterStore implements CounterStore {
  /** Each group's windows by their end (ms): two lookups of keys that exist, no key built per hit. */
  private readonly windows = new Map<string, Map<number, Map<string, number>>>();
  private readonly maxClientsPerGroup: number;

  /**
   * Past `maxClientsPerGroup` clients in one group's window, a client not seen in it yet is not
   * counted (hit answers null): memory stays bounded when a flood comes from more addresses than
   * a per-address limit could hold back anyway (1,000,000 IPv4 clients held 175 MB of heap, so
   * about 45 MB a full group at this bound). Each group has its own table, so a flood of image
   * requests never fills the table a password limit counts in.
   */
  constructor(maxClientsPerGroup = 250_000) {
    this.maxClientsPerGroup = maxClientsPerGroup;
  }

  async hit(group: string, client: string, resetAt: number, weight = 1): Promise<number | null> {
    const counts = this.window(group, resetAt);
    const known = counts.get(client);
    if (known === undefined && counts.size >= this.maxClientsPerGroup) return null;
    const count = (known ?? 0) + weight;
    counts.set(client, count);
    return count;
  }

  /** Sets a client's count (what the shared store counted), so counting here goes on from it. */
  seed(group: string, client: string, resetAt: number, count: number): void {
    const counts = this.window(group, resetAt);
    if (counts.has(client) || counts.size < this.maxClientsPerGroup) counts.set(client, count);
  }

  private window(group: string, resetAt: number): Map<string, number> {
    let windows = this.windows.get(group);
    if (!windows) this.windows.set(group, windows = new Map());
    let counts = windows.get(resetAt);
    if (!counts) {
      this.dropEnded();
      windows.set(resetAt, counts = new Map());
      // Also when no request follows: a quiet service gives the last window's memory back.
      setTimeout(() => this.dropEnded(), Math.max(0, resetAt - Date.now()) + 1000).unref();
    }
    return counts;
  }

  private dropEnded(): void {
    const now = Date.now();
    for (const windows of this.windows.values()) for (const end of windows.keys()) if (end <= now) windows.delete(end);
  }

  /** Clients counted in windows still held (for operations and tests). */
  get keys(): number {
    let total = 0;
    for (const windows of this.windows.values()) for (const counts of windows.values()) total += counts.size;
    return total;
  }
}

// INCRBY and the expiry in one round trip, atomically, so concurrent instances never lose a count.
const HIT_SCRIPT = `local n = redis.call('INCRBY', KEYS[1], ARGV[2])
if n == tonumber(ARGV[2]) then redis.call('PEXPIREAT', KEYS[1], ARGV[1]) end
return n`;

export class RedisCounterStore implements CounterStore {
  private readonly redis: RedisClientType;
  constructor(redis: RedisClientType) {
    this.redis = redis;
  }
  async hit(group: string, client: string, resetAt: number, weight = 1): Promise<number> {
    const n = await this.redis.eval(HIT_SCRIPT, { keys: [`skinfarm:rl:${group}:${client}:${resetAt}`], arguments: [String(resetAt + 1000), String(weight)] });
    return Number(n);
  }
}

/**
 * The key a client is counted under: its address, an IPv6 address by its /64 (one subscriber's
 * network: a host given a /64 can use 2^64 addresses, one per request), an IPv4-mapped IPv6
 * address as the IPv4 address it is.
 */
export function clientKey(ip: string): string {
  if (!ip.includes(':')) return ip;
  let address: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    address = ipaddr.process(ip.replace(/%.*$/, ''));
  } catch {
    return ip;
  }
  if (address.kind() === 'ipv4') return address.toString();
  const parts = (address as ipaddr.IPv6).parts;
  return `${parts.slice(0, 4).map((part) => part.toString(16)).join(':')}::/64`;
}

export interface RateLimitGroup {
  name: string; limit: number; windowMs?: number;
  /**
   * Guards a secret (a password, a key): when a client cannot be counted (the group's table is
   * full), it is refused rather than let through, so filling the table never unlimits guessing.
   */
  authentication?: boolean;
}

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

/** The 429 of a limit that holds until `resetAt` (ms), with the seconds to wait. */
export function limitedUntil(resetAt: number, detail?: string | Localized, headers?: Record<string, string>): ApiError {
  return new ApiError('rate_limited', { detail, retryAfter: Math.ceil((resetAt - Date.now()) / 1000), headers });
}

function limitedOrNot(outcome: RateLimitOutcome, detail?: string | Localized): RateLimitOutcome {
  if (!outcome.limited) return outcome;
  throw limitedUntil(outcome.resetAt, detail, rateLimitHeaders(outcome));
}

export class RateLimiter {
  private readonly store: CounterStore;
  /** Over a shared store (Redis): the counts it last gave, to go on from while it fails. */
  private readonly fallback: MemoryCounterStore | null;
  /** Store failures come by the thousand while Redis is away: logged as a state, then counts. */
  private readonly storeFailing: StateLog;
  limitedTotal = 0;

  constructor(store: CounterStore, log: Logger) {
    this.store = store;
    this.fallback = store instanceof MemoryCounterStore ? null : new MemoryCounterStore();
    this.storeFailing = new StateLog(log, 'rate-limit store failed; request limits count in process, authentication limits refuse', { recovered: 'rate-limit store answers again' });
  }

  /** Counts a request of `ip` in `group`, or `cost` units of its work where the group is a work budget. */
  async check(group: RateLimitGroup, ip: string, now = Date.now(), cost = 1): Promise<RateLimitOutcome> {
    const windowMs = group.windowMs ?? 60_000;
    const resetAt = Math.floor(now / windowMs) * windowMs + windowMs;
    const client = clientKey(ip);
    let count: number | null;
    try {
      count = await this.store.hit(group.name, client, resetAt, cost);
      if (this.fallback) {
        if (count !== null && !group.authentication) this.fallback.seed(group.name, client, resetAt, count);
        this.storeFailing.clear();
      }
    } catch (err) {
      this.storeFailing.hit({ err: (err as Error).message });
      // A process that cannot see the shared count cannot tell a guesser's hundredth try from
      // its first: an authentication limit refuses.
      if (group.authentication) throw new ApiError('overloaded', { detail: { zh: '限流存储暂不可用，请稍后再试', en: 'the rate-limit store is unavailable; try again shortly' }, retryAfter: 5 });
      // A request limit goes on, per instance, from the count the store last gave.
      count = await this.fallback!.hit(group.name, client, resetAt, cost);
    }
    // Not countable: a request group lets it through as a first hit, an authentication group refuses.
    count ??= group.authentication ? Infinity : cost;
    const limited = count > group.limit;
    if (limited) {
      this.limitedTotal += 1;
      rateLimited.inc({ group: group.name });
    }
    return { limit: group.limit, remaining: Math.max(0, group.limit - count), resetAt, limited };
  }

  /** Counts one request (or `cost` units) of `ip` in `group` and throws 429 past the quota (with that group's headers). */
  async enforce(group: RateLimitGroup, ip: string, detail?: string | Localized, cost = 1): Promise<RateLimitOutcome> {
    return limitedOrNot(await this.check(group, ip, Date.now(), cost), detail);
  }

  /** Koa middleware for one group: headers on every counted response, 429 past the quota. */
  middleware(group: RateLimitGroup): Middleware {
    return async (ctx, next) => {
      const outcome = limitedOrNot(countedAlready.get(ctx.req) ?? await this.check(group, ctx.ip));
      ctx.set(rateLimitHeaders(outcome));
      await next();
    };
  }
}
