// A condition that can hold for thousands of events in a row (stale answers while an upstream is
// down, a store failing every request) is logged as a state, not per event: its first event is
// logged at once, the rest are counted and logged as one line per interval, and an interval without
// an event ends it (the next event is a first line again). clear() ends it at once, for conditions
// with a moment of recovery (a store reconnected).
import type { Logger } from './log.ts';

export interface StateLogOptions {
  level?: 'info' | 'warn' | 'error';
  /** Logged by clear() while the condition holds (with the events not yet logged). */
  recovered?: string;
  intervalMs?: number;
}

export class StateLog {
  private readonly log: Logger;
  private readonly message: string;
  private readonly level: 'info' | 'warn' | 'error';
  private readonly recovered: string | undefined;
  private readonly intervalMs: number;
  private timer: NodeJS.Timeout | null = null;
  /** Events since the last line, and since the condition began. */
  private count = 0;
  private total = 0;
  private latest: Record<string, unknown> = {};

  constructor(log: Logger, message: string, { level = 'warn', recovered, intervalMs = 10_000 }: StateLogOptions = {}) {
    this.log = log;
    this.message = message;
    this.level = level;
    this.recovered = recovered;
    this.intervalMs = intervalMs;
  }

  /** One event; the first line carries its `fields`, a count line the latest event's. */
  hit(fields: Record<string, unknown> = {}): void {
    this.total += 1;
    this.latest = fields;
    if (this.timer) {
      this.count += 1;
      return;
    }
    this.log[this.level](this.message, fields);
    this.schedule();
  }

  /** The condition is over: `recovered` is logged if it held, and the next event starts anew. */
  clear(fields: Record<string, unknown> = {}): void {
    if (!this.timer) return;
    clearTimeout(this.timer);
    this.timer = null;
    if (this.recovered) this.log.info(this.recovered, { ...fields, count: this.count, total: this.total });
    else if (this.count > 0) this.flush();
    this.reset();
  }

  private schedule(): void {
    // Unref'd: a pending count never keeps the process alive.
    this.timer = setTimeout(() => this.tick(), this.intervalMs).unref();
  }

  private tick(): void {
    if (this.count === 0) {
      this.timer = null;
      this.reset();
      return;
    }
    this.flush();
    this.schedule();
  }

  /** `count` events since the previous line; a reader adds them to the first line's one. */
  private flush(): void {
    this.log[this.level](this.message, { ...this.latest, count: this.count, total: this.total, interval_s: this.intervalMs / 1000 });
    this.count = 0;
  }

  private reset(): void {
    this.count = 0;
    this.total = 0;
  }
}
