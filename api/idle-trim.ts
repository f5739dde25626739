// Gives memory back once a load is over. V8 keeps a heap it has grown, and garbage it has no
// reason to collect while nothing allocates; the render threads and pages do the same. So after
// `idleMs` with no request, once per quiet spell, `trim` runs: the services drop what they can
// rebuild cheaply and collect their threads' and pages' garbage, then this thread collects its
// own. The response cache is left as it is: it is bounded and is what makes the next request fast.
import type { Logger } from '../shared/log.ts';
import { collectGarbage } from '../shared/collect-garbage.ts';

export interface IdleTrimOptions {
  idleMs: number;
  trim(): Promise<void>;
  log: Logger;
}

export class IdleTrim {
  private requests = 0;
  private seen = 0;
  /** The request count of the last trim: one trim per quiet spell, not one every tick. */
  private trimmedAt = -1;
  private idleSince = performance.now();
  private running = false;
  private readonly o: IdleTrimOptions;
  private readonly timer: NodeJS.Timeout;

  constructor(o: IdleTrimOptions) {
    this.o = o;
    // Checked a few times per idle period: a spell is noticed within 1.25 x idleMs.
    this.timer = setInterval(() => this.tick(), Math.max(50, o.idleMs / 4));
    this.timer.unref();
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
    if (this.running || this.trimmedAt === now || performance.now() - this.idleSince < this.o.idleMs) return;
    this.running = true;
    this.trimmedAt = now;
    void this.trimNow().finally(() => { this.running = false; });
  }

  /** Runs the trim: what the services give back, then this thread's own garbage. */
  private async trimNow(): Promise<void> {
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
      ms: Math.round(performance.now() - started), rss_mb: [mb(before.rss), mb(after.rss)], heap_mb: [mb(before.heapUsed), mb(after.heapUsed)],
      external_mb: [mb(before.external), mb(after.external)],
    });
  }

  close(): void {
    clearInterval(this.timer);
  }
}
