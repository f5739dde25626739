// Gives memory back once a load is over. V8 keeps a heap it has grown, and garbage it has no
// reason to collect while nothing allocates; the render threads and pages do the same. So after
// `idleMs` with no request, once per quiet spell, `trim` runs: the services drop what they can
// rebuild cheaply and collect their threads' and pages' garbage, then this thread collects its
// own. The response cache is left as it is: it is bounded and is what makes the next request fast.
// The first quiet spell after start is shorter (SETTLED_MS): the start's own garbage goes then.
import type { Logger } from '../shared/log.ts';
import { collectGarbage } from '../shared/collect-garbage.ts';

export interface IdleTrimOptions {
  idleMs: number;
  trim(): Promise<void>;
  log: Logger;
}

/**
 * Once started, a service trims after this long without a request unless one came first: what
 * the start left (modules compiled, the farm's launch, its self-checks) is garbage by then, and a
 * service may wait long for its first request (measured: 458 MB of PSS 3 s after start with two
 * pages, against 383 MB once trimmed).
 */
const SETTLED_MS = 2000;

export class IdleTrim {
  private requests = 0;
  private seen = 0;
  /** The request count of the last trim: one trim per quiet spell, not one every tick. */
  private trimmedAt = -1;
  private idleSince = performance.now();
  /** No trim before the services have started (see started). */
  private serving = false;
  private running = false;
  private readonly o: IdleTrimOptions;
  private readonly timer: NodeJS.Timeout;

  constructor(o: IdleTrimOptions) {
    this.o = o;
    // Checked a few times per idle period: a spell is noticed within 1.25 x idleMs.
    this.timer = setInterval(() => this.tick(), Math.max(50, Math.min(o.idleMs, SETTLED_MS) / 4));
    this.timer.unref();
  }

  /** The services have started: the clock of the first quiet spell starts now. */
  started(): void {
    this.serving = true;
    this.idleSince = performance.now();
  }

  /** Counts a request (the server calls this for every one: an increment, nothing more). */
  touch(): void {
    this.requests += 1;
  }

  private tick(): void {
    const now = this.requests;
    if (now !== this.seen) {
      this.seen = now;
      this.idleSince = performance.now();
      return;
    }
    const settling = now === 0 && this.trimmedAt === -1;
    const quietFor = settling ? Math.min(SETTLED_MS, this.o.idleMs) : this.o.idleMs;
    if (!this.serving || this.running || this.trimmedAt === now || performance.now() - this.idleSince < quietFor) return;
    this.running = true;
    this.trimmedAt = now;
    void this.trimNow(settling ? 'started' : 'idle').finally(() => { this.running = false; });
  }

  /** Runs the trim: what the services give back, then this thread's own garbage. */
  private async trimNow(reason: 'started' | 'idle'): Promise<void> {
    const started = performance.now();
    const before = process.memoryUsage();
    try {
      await this.o.trim();
      collectGarbage();
    } catch (error) {
      this.o.log.warn('idle trim failed', { err: (error as Error).message });
      return;
    }
    const after = process.memoryUsage();
    const mb = (n: number) => Math.round(n / 1048576);
    this.o.log.info('idle: memory trimmed', {
      after: reason, ms: Math.round(performance.now() - started), rss_mb: [mb(before.rss), mb(after.rss)], heap_mb: [mb(before.heapUsed), mb(after.heapUsed)],
      external_mb: [mb(before.external), mb(after.external)],
    });
  }

  close(): void {
    clearInterval(this.timer);
  }
}
