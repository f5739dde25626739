// Back-off after the upstream says "too many requests" (429, or CloudFront's 403 for Mojang):
// no call is sent until the time it asked for, or an exponential default, has passed. With Redis
// the open-until time lives next to the budgets, so every instance backs off together.
import type { RedisClientType } from '@redis/client';
import type { Logger } from '../../../shared/log.ts';

const DEFAULT_BACKOFF_S = 30;
const MAX_BACKOFF_S = 600;

// Moves the shared open-until time later, never earlier (two instances may trip at once).
const OPEN_SCRIPT = `
local current = tonumber(redis.call('GET', KEYS[1])) or 0
if tonumber(ARGV[1]) > current then redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2]) end
return 1`;

export interface SharedCircuit { redis: RedisClientType; key: string; log: Logger }

export class Circuit {
  private openUntil = 0;
  private strikes = 0;
  private readonly shared: SharedCircuit | null;

  constructor(shared: SharedCircuit | null = null) {
    this.shared = shared;
  }

  /** Opens for `retryAfterSeconds` when the upstream said so, else 30 s doubling to 10 min. */
  async trip(retryAfterSeconds?: number): Promise<number> {
    const seconds = retryAfterSeconds && retryAfterSeconds > 0
      ? Math.min(retryAfterSeconds, MAX_BACKOFF_S)
      : Math.min(DEFAULT_BACKOFF_S * 2 ** this.strikes, MAX_BACKOFF_S);
    this.strikes += 1;
    this.openUntil = Math.max(this.openUntil, Date.now() + seconds * 1000);
    const shared = this.shared;
    if (shared?.redis.isReady) {
      try {
        await shared.redis.eval(OPEN_SCRIPT, { keys: [shared.key], arguments: [String(this.openUntil), String(seconds * 1000)] });
      } catch (err) {
        shared.log.warn('shared circuit unavailable; backing off in this process only', { key: shared.key, err: (err as Error).message });
      }
    }
    return seconds;
  }

  succeeded(): void {
    this.strikes = 0;
  }

  /** Learns a back-off another instance started (one Redis read); the local state otherwise. */
  async refresh(): Promise<void> {
    const shared = this.shared;
    if (!shared?.redis.isReady) return;
    try {
      const until = Number(await shared.redis.get(shared.key));
      if (until > this.openUntil) this.openUntil = until;
    } catch {
      // Redis trouble: the process's own state still protects the upstream.
    }
  }

  /** Milliseconds until calls may be sent again; 0 when closed. */
  remainingMs(now = Date.now()): number {
    return Math.max(0, this.openUntil - now);
  }

  snapshot() {
    const ms = this.remainingMs();
    return { state: ms > 0 ? 'open' : 'closed', retry_in_s: Math.ceil(ms / 1000), strikes: this.strikes };
  }
}
