// Readiness, apart from liveness: /health answers while the process runs (restart it when it does
// not); /ready says whether this instance should get traffic now and what each dependency is
// doing, for a load balancer and for alerts. Only what makes this instance unable to serve is
// critical (503): a dependency every instance shares (Redis, an upstream) only degrades it, since
// taking every instance out of a balancer for it would turn a partial outage into a full one.
import type { RedisClientType } from '@redis/client';
import type { Middleware } from 'koa';
import { ApiError } from '../shared/errors.ts';
import { isStalled } from './redis.ts';
import { VERSION } from './version.ts';

export type CheckStatus = 'ok' | 'degraded' | 'down';
export interface CheckResult { status: CheckStatus; detail?: string }

export interface ReadinessCheck {
  name: string;
  /** Down means this instance should get no traffic (a 503 readiness answer). */
  critical: boolean;
  run(): CheckResult | Promise<CheckResult>;
}

export interface ReadinessReport {
  status: 'ready' | 'degraded' | 'not_ready';
  checks: Array<{ name: string; critical: boolean } & CheckResult>;
}

/** One service's checks: the shared ones (Redis, the event loop) and those the service adds. */
export class Readiness {
  private readonly checks: ReadinessCheck[];

  constructor(shared: readonly ReadinessCheck[] = []) {
    this.checks = [...shared];
  }

  add(check: ReadinessCheck): void {
    this.checks.push(check);
  }

  async report(): Promise<ReadinessReport> {
    const checks = await Promise.all(this.checks.map(async ({ name, critical, run }) => {
      let result: CheckResult;
      try {
        result = await run();
      } catch (error) {
        result = { status: 'down', detail: (error as Error).message };
      }
      return { name, critical, ...result };
    }));
    const status = checks.some((c) => c.critical && c.status === 'down') ? 'not_ready'
      : checks.some((c) => c.status !== 'ok') ? 'degraded' : 'ready';
    return { status, checks };
  }
}

/** How often a probe may really ask Redis: a tight polling loop costs one PING a second. */
const PING_EVERY_MS = 1000;

/**
 * A Redis's answer to PING within the client's command deadline: down when not connected,
 * degraded when it does not answer in time (stalled) or errs (full, read-only).
 */
export function redisCheck(name: string, client: RedisClientType): ReadinessCheck {
  let last: { at: number; result: Promise<CheckResult> } | null = null;
  const ping = async (): Promise<CheckResult> => {
    const started = performance.now();
    try {
      await client.ping();
      return { status: 'ok', detail: `${Math.round(performance.now() - started)} ms` };
    } catch (error) {
      return { status: 'degraded', detail: (error as Error).message || 'no answer in time' };
    }
  };
  return {
    name,
    critical: false,
    run() {
      // Known without asking: a lost connection and a missed deadline are never hidden by the last PING.
      if (!client.isReady) return { status: 'down', detail: 'not connected; caches and limits are per instance until it returns' };
      if (isStalled(client)) return { status: 'degraded', detail: 'missed its command deadline; serving from the process until it answers' };
      if (!last || performance.now() - last.at > PING_EVERY_MS) last = { at: performance.now(), result: ping() };
      return last.result;
    },
  };
}

/** Past MAX_EVENT_LOOP_LAG_MS this instance sheds requests: it should get none. */
export function lagCheck(lagMs: () => number, maxLagMs: number): ReadinessCheck {
  return {
    name: 'event_loop',
    critical: true,
    run: () => {
      const lag = lagMs();
      return maxLagMs > 0 && lag > maxLagMs ? { status: 'down', detail: `lag ${Math.round(lag)} ms` } : { status: 'ok', detail: `lag ${Math.round(lag)} ms` };
    },
  };
}

/** GET /ready on a service's port: the report, or 503 `overloaded` naming the critical checks that are down. */
export function readinessRoute(service: string, readiness: Readiness): Middleware {
  return async (ctx, next) => {
    if (ctx.path !== '/ready' || (ctx.method !== 'GET' && ctx.method !== 'HEAD')) return next();
    ctx.state.route = '/ready';
    const report = await readiness.report();
    if (report.status === 'not_ready') {
      const down = report.checks.filter((c) => c.critical && c.status === 'down').map((c) => `${c.name}: ${c.detail ?? 'down'}`);
      throw new ApiError('overloaded', { detail: `not ready (${down.join('; ')})`, retryAfter: 5 });
    }
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { status: report.status, service, version: VERSION, checks: report.checks };
  };
}
