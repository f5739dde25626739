// Sheds load when the event loop lags: past the threshold, answer 503 at once (with Retry-After)
// instead of queueing work the process cannot keep up with. Status endpoints are never shed.
import type { Middleware } from 'koa';
import { ApiError } from '../../shared/errors.ts';

const EXEMPT = new Set(['/v1/status', '/health', '/metrics']);

export class LagMonitor {
  private readonly timer: NodeJS.Timeout;
  private last = performance.now();
  /** How late the monitor's own timer fired (ms), smoothed over the last few ticks. */
  lagMs = 0;
  shed = 0;

  constructor(intervalMs = 100) {
    this.timer = setInterval(() => {
      const now = performance.now();
      const late = Math.max(0, now - this.last - intervalMs);
      this.last = now;
      // A blocked loop shows at once; one slow tick fades within a few ticks.
      this.lagMs = this.lagMs * 0.5 + late * 0.5;
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
