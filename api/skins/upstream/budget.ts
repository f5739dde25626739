// Outgoing request budgets: a token bucket per upstream endpoint family, so a traffic spike
// never becomes more upstream calls than the upstream tolerates. With Redis the bucket is shared,
// so N instances together stay under one budget.
import type { RedisClientType } from '@redis/client';
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

export interface TakeResult { ok: boolean; remaining: number; retryAfterMs: number }

interface BucketState { tokens: number; at: number }

function refill(state: BucketState, spec: BudgetSpec, now: number): number {
  return Math.min(spec.capacity, state.tokens + ((now - state.at) / 1000) * spec.refillPerSecond);
}

function waitFor(tokens: number, spec: BudgetSpec): number {
  return tokens >= 1 ? 0 : Math.ceil(((1 - tokens) / spec.refillPerSecond) * 1000);
}

// Refill, then take one token if there is one, atomically. Returns {taken, tokens * 1000}.
const TAKE_SCRIPT = `
local capacity = tonumber(ARGV[1])
local rate = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
local state = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(state[1]) or capacity
local at = tonumber(state[2]) or now
tokens = math.min(capacity, tokens + math.max(0, now - at) / 1000 * rate)
local taken = 0
if tokens >= 1 then tokens = tokens - 1; taken = 1 end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', tostring(now))
redis.call('PEXPIRE', KEYS[1], math.ceil(capacity / rate * 1000) + 1000)
return {taken, math.floor(tokens * 1000)}`;

export class UpstreamBudgets {
  private readonly specs: Map<string, BudgetSpec>;
  private readonly local = new Map<string, BucketState>();
  private readonly redis: RedisClientType | null;
  private readonly log: Logger;

  constructor(specs: Record<string, BudgetSpec>, redis: RedisClientType | null, log: Logger) {
    this.specs = new Map(Object.entries(specs));
    this.redis = redis;
    this.log = log;
  }

  /** Takes one call from a family's budget; families without a budget are unlimited. */
  async take(family: string): Promise<TakeResult> {
    const spec = this.specs.get(family);
    if (!spec) return { ok: true, remaining: Infinity, retryAfterMs: 0 };
    const now = Date.now();
    if (this.redis?.isReady) {
      try {
        const [taken, milli] = (await this.redis.eval(TAKE_SCRIPT, {
          keys: [`skinfarm:budget:${family}`],
          arguments: [String(spec.capacity), String(spec.refillPerSecond), String(now)],
        })) as [number, number];
        const tokens = Number(milli) / 1000;
        this.local.set(family, { tokens, at: now });
        return { ok: Number(taken) === 1, remaining: Math.floor(tokens), retryAfterMs: Number(taken) === 1 ? 0 : waitFor(tokens, spec) };
      } catch (err) {
        this.log.warn('shared upstream budget unavailable; using the local one', { family, err: (err as Error).message });
      }
    }
    const state = this.local.get(family) ?? { tokens: spec.capacity, at: now };
    const tokens = refill(state, spec, now);
    const ok = tokens >= 1;
    this.local.set(family, { tokens: ok ? tokens - 1 : tokens, at: now });
    return { ok, remaining: Math.floor(ok ? tokens - 1 : tokens), retryAfterMs: ok ? 0 : waitFor(tokens, spec) };
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
