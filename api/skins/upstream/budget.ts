// Outgoing request budgets: a token bucket per upstream endpoint family, so a traffic spike
// never becomes more upstream calls than the upstream tolerates. With Redis the bucket is shared,
// so N instances together stay under one budget.
//
// The buckets are shared by every client, so one client must not empty them (issue #39: three
// batches of 100 unknown UUIDs left every other client's uncached lookups answering 503). Each
// client (an address, a search key) has a budget of uncached lookups a minute, counted by the
// rate limiter (in Redis when it is shared); and a client that has spent more than a few this
// minute may take from a bucket only down to its reserve, which stays for the clients that have not.
import { AsyncLocalStorage } from 'node:async_hooks';
import type { RedisClientType } from '@redis/client';
import { limitedUntil, rateLimitHeaders, type RateLimiter } from '../../http/rate-limit.ts';
import { ApiError } from '../../../shared/errors.ts';
import type { Logger } from '../../../shared/log.ts';

export interface BudgetSpec { capacity: number; refillPerSecond: number }

/** "N/S" = N calls per S seconds, burst N/10 (at least 1); "N/S:B" sets the burst to B. */
export function parseBudget(text: string): BudgetSpec | null {
  const match = /^(\d+(?:\.\d+)?)\/(\d+(?:\.\d+)?)(?::(\d+))?$/.exec(text.trim());
  if (!match) return null;
  const count = Number(match[1]);
  const seconds = Number(match[2]);
  if (count <= 0 || seconds <= 0) return null;
  const burst = match[3] ? Number(match[3]) : Math.max(1, Math.floor(count / 10));
  return burst >= 1 ? { capacity: burst, refillPerSecond: count / seconds } : null;
}

/** Each client's share of the buckets. */
export interface ClientShare {
  /** Uncached upstream lookups a client may cause a minute (past it: 429 for that client). */
  perMinute: number;
  /** Part of each bucket's capacity (0..1) kept for clients that have spent at most `lightSpend`. */
  reserve: number;
  /** Lookups a minute under which a client may still draw on the reserve. */
  lightSpend: number;
}

/** The client whose request is running, and what it has spent this minute (as last counted). */
interface LookupClient { key: string; spent: number }

const lookupClient = new AsyncLocalStorage<LookupClient>();

/**
 * Runs `fn` with its uncached lookups charged to `key` (a client address, `key:<id>` for a search
 * key). Lookups outside any client (background refreshes) are charged to nobody.
 */
export function asLookupClient<T>(key: string, fn: () => Promise<T>): Promise<T> {
  return lookupClient.run({ key, spent: 0 }, fn);
}

/** The rate-limit group the per-client lookup budget counts in. */
export const LOOKUP_GROUP = 'upstream-lookups';

export interface TakeResult { ok: boolean; remaining: number; retryAfterMs: number }

interface BucketState { tokens: number; at: number }

function refill(state: BucketState, spec: BudgetSpec, now: number): number {
  return Math.min(spec.capacity, state.tokens + ((now - state.at) / 1000) * spec.refillPerSecond);
}

function waitFor(tokens: number, spec: BudgetSpec, floor = 0): number {
  return tokens >= 1 + floor ? 0 : Math.ceil(((1 + floor - tokens) / spec.refillPerSecond) * 1000);
}

// Refill, then take one token if one is left above `floor` (the reserve), atomically. Returns {taken, tokens * 1000}.
const TAKE_SCRIPT = `
local capacity = tonumber(ARGV[1])
local rate = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
local floor = tonumber(ARGV[4]) or 0
local state = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(state[1]) or capacity
local at = tonumber(state[2]) or now
tokens = math.min(capacity, tokens + math.max(0, now - at) / 1000 * rate)
local taken = 0
if tokens >= 1 + floor then tokens = tokens - 1; taken = 1 end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', tostring(now))
redis.call('PEXPIRE', KEYS[1], math.ceil(capacity / rate * 1000) + 1000)
return {taken, math.floor(tokens * 1000)}`;

export class UpstreamBudgets {
  private readonly specs: Map<string, BudgetSpec>;
  private readonly local = new Map<string, BucketState>();
  private readonly redis: RedisClientType | null;
  private readonly log: Logger;
  private readonly share: (ClientShare & { limiter: RateLimiter }) | null;

  constructor(specs: Record<string, BudgetSpec>, redis: RedisClientType | null, log: Logger, share?: ClientShare & { limiter: RateLimiter }) {
    this.specs = new Map(Object.entries(specs));
    this.redis = redis;
    this.log = log;
    this.share = share ?? null;
  }

  /**
   * Charges one uncached lookup to the running request's client (a batch pays one per name it
   * sends upstream); throws 429 `rate_limited` past the client's budget. Called only when the
   * lookup will start an upstream call of its own (a cached or joined lookup costs nothing).
   */
  async charge(family?: string): Promise<void> {
    const client = lookupClient.getStore();
    if (!client || !this.share) return;
    const outcome = await this.share.limiter.check({ name: LOOKUP_GROUP, limit: this.share.perMinute }, client.key);
    client.spent = outcome.limited ? Infinity : outcome.limit - outcome.remaining;
    if (outcome.limited) {
      throw limitedUntil(outcome.resetAt, 'this client has used its uncached upstream lookups for this minute', rateLimitHeaders(outcome));
    }
    // Refused here, before the lookup's call starts, a heavy client's refusal is its own: take()
    // refuses it too, but as the call's failure, which the error memo would answer to everyone
    // asking that key for a while. (Only a race between this look and the take ends there.)
    const spec = family === undefined ? undefined : this.specs.get(family);
    const floor = spec ? this.floor(spec) : 0;
    if (!spec || floor === 0) return;
    const tokens = await this.level(family!, spec);
    if (tokens < 1 + floor) {
      throw new ApiError('upstream_busy', { detail: `${family}: only the reserve is left, for clients that have asked little`, retryAfter: Math.max(1, Math.ceil(waitFor(tokens, spec, floor) / 1000)) });
    }
  }

  /** The tokens in a bucket now, without taking one (shared when Redis answers). */
  private async level(family: string, spec: BudgetSpec): Promise<number> {
    const now = Date.now();
    if (this.redis?.isReady) {
      try {
        const [tokens, at] = await this.redis.hmGet(`skinfarm:budget:${family}`, ['tokens', 'at']);
        if (tokens === null || at === null) return spec.capacity;
        return refill({ tokens: Number(tokens), at: Number(at) }, spec, now);
      } catch {
        // take() logs the shared budget's failure; this look goes on from the local one.
      }
    }
    const state = this.local.get(family);
    return state ? refill(state, spec, now) : spec.capacity;
  }

  /** Tokens a take must leave in `family`'s bucket: the reserve, for a client that has spent more than a little. */
  private floor(spec: BudgetSpec): number {
    const client = lookupClient.getStore();
    if (!client || !this.share || client.spent <= this.share.lightSpend) return 0;
    return Math.floor(spec.capacity * this.share.reserve);
  }

  /** Takes one call from a family's budget; families without a budget are unlimited. */
  async take(family: string): Promise<TakeResult> {
    const spec = this.specs.get(family);
    if (!spec) return { ok: true, remaining: Infinity, retryAfterMs: 0 };
    const floor = this.floor(spec);
    const now = Date.now();
    if (this.redis?.isReady) {
      try {
        const [taken, milli] = (await this.redis.eval(TAKE_SCRIPT, {
          keys: [`skinfarm:budget:${family}`],
          arguments: [String(spec.capacity), String(spec.refillPerSecond), String(now), String(floor)],
        })) as [number, number];
        const tokens = Number(milli) / 1000;
        this.local.set(family, { tokens, at: now });
        return { ok: Number(taken) === 1, remaining: Math.floor(tokens), retryAfterMs: Number(taken) === 1 ? 0 : waitFor(tokens, spec, floor) };
      } catch (err) {
        this.log.warn('shared upstream budget unavailable; using the local one', { family, err: (err as Error).message });
      }
    }
    const state = this.local.get(family) ?? { tokens: spec.capacity, at: now };
    const tokens = refill(state, spec, now);
    const ok = tokens >= 1 + floor;
    this.local.set(family, { tokens: ok ? tokens - 1 : tokens, at: now });
    return { ok, remaining: Math.floor(ok ? tokens - 1 : tokens), retryAfterMs: ok ? 0 : waitFor(tokens, spec, floor) };
  }

  /** Remaining calls per family as this process last saw them (no Redis round trip). */
  snapshot(): Record<string, { remaining: number; capacity: number; per_second: number }> {
    const now = Date.now();
    const out: Record<string, { remaining: number; capacity: number; per_second: number }> = {};
    for (const [family, spec] of this.specs) {
      const state = this.local.get(family);
      out[family] = {
        remaining: Math.floor(state ? refill(state, spec, now) : spec.capacity),
        capacity: spec.capacity,
        per_second: Math.round(spec.refillPerSecond * 1000) / 1000,
      };
    }
    return out;
  }
}
