// One upstream's circuit: while it is open no call is sent and a lookup fails at once. It opens
// when the upstream says "too many requests" (429, or CloudFront's 403 for Mojang), for the time
// it asked for or 30 s doubling to 10 min; and after `failures` timeouts, refused connections or
// 5xx answers in a row, for `openMs` doubling to 10 min. Once that time has passed it is half-open:
// one call goes through as a probe while the others still fail at once; an answer closes it, a
// failure opens it again for longer. With Redis a throttle's open-until time lives next to the
// budgets, so every instance backs off together; faults open this process's circuit only (they
// may be its own network's), and each instance finds out with its own few calls.
import type { RedisClientType } from '@redis/client';
import { ApiError } from '../../../shared/errors.ts';
import type { Logger } from '../../../shared/log.ts';

const DEFAULT_BACKOFF_S = 30;
const MAX_BACKOFF_S = 600;
/** Retry-After of a call refused while the probe is out. */
const PROBE_RETRY_S = 1;

// Moves the shared open-until time later, never earlier (two instances may trip at once).
const OPEN_SCRIPT = `
local current = tonumber(redis.call('GET', KEYS[1])) or 0
if tonumber(ARGV[1]) > current then redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2]) end
return 1`;

export interface SharedCircuit { redis: RedisClientType; key: string; log: Logger }

/** Opening on faults: after `failures` in a row (0 = never), for `openMs` at first. */
export interface FaultPolicy { failures: number; openMs: number }

export type FaultCode = 'upstream_timeout' | 'upstream_error';

/** A call refused by the circuit: the error that opened it, without a call. */
export class CircuitOpen extends ApiError {}

export interface CircuitOptions { shared?: SharedCircuit | null; faults?: FaultPolicy; log?: Logger }

export class Circuit {
  private readonly id: string;
  private readonly shared: SharedCircuit | null;
  private readonly faults: FaultPolicy | null;
  private readonly log: Logger | null;
  private openUntil = 0;
  /** Opened and not answered since: past openUntil it is half-open. */
  private tripped = false;
  private probing = false;
  /** What refused calls answer: upstream_busy after a throttle, else the fault that opened it. */
  private reason: FaultCode | 'upstream_busy' = 'upstream_busy';
  /** Throttle opens in a row, fault opens in a row, and faults in a row. */
  private strikes = 0;
  private opens = 0;
  private failures = 0;

  constructor(id: string, { shared = null, faults, log }: CircuitOptions = {}) {
    this.id = id;
    this.shared = shared;
    this.faults = faults && faults.failures > 0 ? faults : null;
    this.log = log ?? null;
  }

  /** Lets a call through, or throws CircuitOpen: while open, and in half-open beside the probe. */
  async enter(): Promise<void> {
    await this.refresh();
    const wait = this.remainingMs();
    if (wait > 0) throw this.refusal(wait / 1000);
    if (!this.tripped) return;
    if (this.probing) throw this.refusal(PROBE_RETRY_S);
    this.probing = true;
  }

  /** The call let through was not sent after all (our own budget refused it). */
  cancel(): void {
    this.probing = false;
  }

  /** The upstream answered (any answer but a throttle or a 5xx): a half-open circuit closes. */
  answered(): void {
    this.failures = 0;
    this.probing = false;
    if (!this.tripped || this.remainingMs() > 0) return;
    this.tripped = false;
    this.strikes = 0;
    this.opens = 0;
    this.log?.info('upstream circuit closed: the upstream answers again', { source: this.id });
  }

  /** A timeout, a failed connection or a 5xx: opens after `failures` in a row, or at a failed probe. */
  failed(code: FaultCode): void {
    this.failures += 1;
    this.probing = false;
    const faults = this.faults;
    if (!faults || this.remainingMs() > 0) return;
    if (!this.tripped && this.failures < faults.failures) return;
    const ms = Math.min(faults.openMs * 2 ** this.opens, MAX_BACKOFF_S * 1000);
    this.opens += 1;
    this.open(Date.now() + ms, code);
    this.log?.warn('upstream circuit open: calls fail at once until it is probed again', { source: this.id, reason: code, failures: this.failures, retry_in_s: Math.ceil(ms / 1000) });
  }

  /** Opens for `retryAfterSeconds` when the upstream said so, else 30 s doubling to 10 min. */
  async trip(retryAfterSeconds?: number): Promise<number> {
    const seconds = retryAfterSeconds && retryAfterSeconds > 0
      ? Math.min(retryAfterSeconds, MAX_BACKOFF_S)
      : Math.min(DEFAULT_BACKOFF_S * 2 ** this.strikes, MAX_BACKOFF_S);
    this.strikes += 1;
    this.probing = false;
    this.open(Math.max(this.openUntil, Date.now() + seconds * 1000), 'upstream_busy');
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

  /** Learns a back-off another instance started (one Redis read); the local state otherwise. */
  async refresh(): Promise<void> {
    const shared = this.shared;
    if (!shared?.redis.isReady) return;
    try {
      const until = Number(await shared.redis.get(shared.key));
      // A time already past is a back-off that has ended (the key outlives it by a moment).
      if (until > this.openUntil && until > Date.now()) this.open(until, 'upstream_busy');
    } catch {
      // Redis trouble: the process's own state still protects the upstream.
    }
  }

  /** Milliseconds until calls may be sent again; 0 when closed or half-open. */
  remainingMs(now = Date.now()): number {
    return Math.max(0, this.openUntil - now);
  }

  snapshot() {
    const ms = this.remainingMs();
    return {
      state: ms > 0 ? 'open' : this.tripped ? 'half_open' : 'closed',
      retry_in_s: Math.ceil(ms / 1000),
      strikes: this.strikes,
      failures: this.failures,
      reason: this.tripped ? this.reason : null,
    };
  }

  private open(until: number, reason: FaultCode | 'upstream_busy'): void {
    this.openUntil = until;
    this.tripped = true;
    this.reason = reason;
  }

  private refusal(retryAfter: number): CircuitOpen {
    const why = this.reason === 'upstream_busy' ? 'backing off' : `not called after ${this.faults?.failures ?? 1} failures in a row`;
    return new CircuitOpen(this.reason, { detail: `${this.id}: ${why}`, retryAfter });
  }
}
