// Per-source health, learned only from real call outcomes (the status endpoint calls nothing).
import type { Circuit } from './circuit.ts';

export interface HealthSnapshot {
  enabled: boolean;
  ok: boolean;
  calls: number;
  errors: number;
  consecutive_failures: number;
  last_ok_at: string | null;
  last_error_at: string | null;
  last_error: string | null;
  latency_ms: number | null;
  /** Calls refused locally because the budget was spent. */
  throttled: number;
  circuit: ReturnType<Circuit['snapshot']> | null;
}

/** Three failures in a row mark a source as not ok until its next success. */
const FAILURES_TO_UNHEALTHY = 3;

export class SourceHealth {
  readonly id: string;
  readonly enabled: boolean;
  private calls = 0;
  private errors = 0;
  private consecutiveFailures = 0;
  private lastOkAt: number | null = null;
  private lastErrorAt: number | null = null;
  private lastError: string | null = null;
  private latencyMs: number | null = null;
  private throttledCount = 0;
  private circuit: Circuit | null = null;

  constructor(id: string, enabled: boolean) {
    this.id = id;
    this.enabled = enabled;
  }

  succeeded(ms: number): void {
    this.calls += 1;
    this.consecutiveFailures = 0;
    this.lastOkAt = Date.now();
    // A smoothed latency: recent calls matter more, one outlier does not dominate.
    this.latencyMs = this.latencyMs === null ? ms : this.latencyMs * 0.8 + ms * 0.2;
  }

  failed(reason: string): void {
    this.calls += 1;
    this.errors += 1;
    this.consecutiveFailures += 1;
    this.lastErrorAt = Date.now();
    this.lastError = reason;
  }

  attachCircuit(circuit: Circuit): void {
    this.circuit = circuit;
  }

  throttled(): void {
    this.throttledCount += 1;
  }

  /** Not ok while switched off, after repeated failures, or while backing off. */
  get ok(): boolean {
    return this.enabled && this.consecutiveFailures < FAILURES_TO_UNHEALTHY && (this.circuit?.remainingMs() ?? 0) === 0;
  }

  snapshot(): HealthSnapshot {
    const iso = (t: number | null) => (t === null ? null : new Date(t).toISOString());
    return {
      enabled: this.enabled,
      ok: this.ok,
      calls: this.calls,
      errors: this.errors,
      consecutive_failures: this.consecutiveFailures,
      last_ok_at: iso(this.lastOkAt),
      last_error_at: iso(this.lastErrorAt),
      last_error: this.lastError,
      latency_ms: this.latencyMs === null ? null : Math.round(this.latencyMs * 10) / 10,
      throttled: this.throttledCount,
      circuit: this.circuit?.snapshot() ?? null,
    };
  }
}
