// Sheds load when the event loop lags: past the threshold, answer 503 at once (with Retry-After)
// instead of queueing work the process cannot keep up with. Status endpoints are never shed.
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { Middleware } from 'koa';
import { ApiError } from '../../shared/errors.ts';

const EXEMPT = new Set(['/v1/status', '/health', '/metrics']);

export class LagMonitor {
  private readonly histogram = monitorEventLoopDelay({ resolution: 10 });
  private readonly timer: NodeJS.Timeout;
  /** Mean lag (ms) of the last sampling window. */
  lagMs = 0;
  shed = 0;

  constructor(windowMs = 500) {
    this.histogram.enable();
    this.timer = setInterval(() => {
      this.lagMs = this.histogram.mean / 1e6;
      this.histogram.reset();
    }, windowMs);
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
    this.histogram.disable();
  }
}

export const lagMonitor = new LagMonitor();
