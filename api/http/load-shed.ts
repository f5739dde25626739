// Sheds load when the event loop lags: past the threshold, answer 503 at once (with Retry-After)
// instead of queueing work the process cannot keep up with. Status endpoints are never shed.
import type { Middleware } from 'koa';
import { ApiError } from '../../shared/errors.ts';

const EXEMPT = new Set(['/v1/status', '/health', '/ready', '/metrics']);

export class LagMonitor {
  private readonly timer: NodeJS.Timeout;
  private last = performance.now();
  private readonly recent: number[] = [];
  /**
   * How late the monitor's own timer fired (ms), the least of the last three ticks: one long
   * pause (start-up, a GC) sheds nothing, a loop that is late on every tick does.
   */
  lagMs = 0;
  shed = 0;

  constructor(intervalMs = 100) {
    this.timer = setInterval(() => {
      const now = performance.now();
      this.recent.push(Math.max(0, now - this.last - intervalMs));
      this.last = now;
      if (this.recent.length > 3) this.recent.shift();
      this.lagMs = this.recent.length < 3 ? 0 : Math.min(...this.recent);
    }, intervalMs);
    this.timer.unref();
  }

  middleware(thresholdMs: number): Middleware {
    return async (ctx, next) => {
      if (thresholdMs > 0 && this.lagMs > thresholdMs && !EXEMPT.has(ctx.path)) {
        this.shed += 1;
        throw new ApiError('overloaded', { detail: `event loop lag ${Math.round(this.lagMs)} ms`, retryAfter: 1 });
      }
      await next();
    };
  }

  stop(): void {
    clearInterval(this.timer);
  }
}

export const lagMonitor = new LagMonitor();
