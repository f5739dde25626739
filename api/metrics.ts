// Prometheus metrics for the whole process (every service shares one registry), served at
// /metrics on each service's port. Counters are updated where things happen; gauges that
// describe a component's state are read from it when scraped.
import type { Context, Middleware } from 'koa';
import { createHash, timingSafeEqual } from 'node:crypto';
import client from 'prom-client';
import { lagMonitor } from './http/load-shed.ts';

export const registry = new client.Registry();
client.collectDefaultMetrics({ register: registry, prefix: 'skinfarm_' });

/** An increment waiting to be handed to prom-client. */
interface Pending { labels: Record<string, string>; n: number; inc(): void }

/**
 * Counters counted per request add to plain numbers that are handed to prom-client when the
 * metrics are read: its inc hashes and checks the labels every time, a measurable cost of a hot
 * request.
 */
const pendingOf = new Map<client.Counter<string>, Pending[]>();

function flushPending(counter: client.Counter<string>): void {
  for (const entry of pendingOf.get(counter) ?? []) {
    if (entry.n === 0) continue;
    counter.inc(entry.labels, entry.n);
    entry.n = 0;
  }
}

function pendingCounter(counter: client.Counter<string>, labels: Record<string, string>): Pending {
  const entry: Pending = { labels, n: 0, inc: () => { entry.n += 1; } };
  let list = pendingOf.get(counter);
  if (!list) pendingOf.set(counter, list = []);
  list.push(entry);
  return entry;
}

export const httpRequests = new client.Counter({
  name: 'skinfarm_http_requests_total',
  help: 'HTTP requests by service, matched route (other when none) and status',
  labelNames: ['service', 'route', 'status'] as const,
  registers: [registry],
  collect() { flushPending(this); },
});

export const httpDuration = new client.Histogram({
  name: 'skinfarm_http_request_duration_seconds',
  help: 'HTTP request duration by service and matched route (other when none)',
  labelNames: ['service', 'route'] as const,
  buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  registers: [registry],
});

export const cacheLookups = new client.Counter({
  name: 'skinfarm_cache_lookups_total',
  help: 'Cache lookups by namespace and result (hit, stale, miss)',
  labelNames: ['namespace', 'result'] as const,
  registers: [registry],
  collect() { flushPending(this); },
});

export const upstreamCalls = new client.Counter({
  name: 'skinfarm_upstream_calls_total',
  help: 'Upstream calls by source and outcome (ok, error, timeout, refused)',
  labelNames: ['source', 'outcome'] as const,
  registers: [registry],
});

export const upstreamDuration = new client.Histogram({
  name: 'skinfarm_upstream_duration_seconds',
  help: 'Upstream call duration by source',
  labelNames: ['source'] as const,
  buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  registers: [registry],
});

export const rateLimited = new client.Counter({
  name: 'skinfarm_rate_limited_total',
  help: 'Requests answered 429 by the per-IP rate limit, by group',
  labelNames: ['group'] as const,
  registers: [registry],
});

export const renderDuration = new client.Histogram({
  name: 'skinfarm_render_duration_seconds',
  help: 'Image render duration by kind (cache misses only)',
  labelNames: ['kind'] as const,
  buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
  registers: [registry],
});

new client.Gauge({ name: 'skinfarm_event_loop_lag_ms', help: 'Mean event-loop lag of the last window', registers: [registry], collect() { this.set(lagMonitor.lagMs); } });
new client.Gauge({ name: 'skinfarm_shed_requests', help: 'Requests answered 503 because the event loop lagged (since start)', registers: [registry], collect() { this.set(lagMonitor.shed); } });

/** Registers a gauge whose value is read from a component at scrape time. */
export function gaugeFrom(name: string, help: string, read: () => number): void {
  if (registry.getSingleMetric(name)) registry.removeSingleMetric(name);
  new client.Gauge({ name, help, registers: [registry], collect() { this.set(read()); } });
}

/** Labelled children, made once per label set: a label lookup per request was a measurable cost. */
function labelled<T>(make: (key: string) => T): (key: string) => T {
  const children = new Map<string, T>();
  return (key) => {
    let child = children.get(key);
    if (!child) {
      child = make(key);
      children.set(key, child);
    }
    return child;
  };
}

const requestCounters = labelled((key) => {
  const [service, route, status] = key.split('\n');
  return pendingCounter(httpRequests, { service, route, status });
});
const durationTimers = labelled((key) => {
  const [service, route] = key.split('\n');
  return httpDuration.labels({ service, route });
});

/** The route label of a request no route of a table matched (404s, preflights, the starting port). */
export const OTHER_ROUTE = 'other';

/** HTTP statuses are the other label a client chooses: anything unusual is counted as its class. */
const statusLabel = (status: number) => (status >= 100 && status <= 599 ? String(status) : 'other');

/**
 * Counts one answered request and its duration. `route` is a route table's path template (or
 * OTHER_ROUTE): a set fixed at start, so no client can add label values by inventing paths.
 */
export function recordRequest(service: string, route: string, status: number, ms: number): void {
  requestCounters(`${service}\n${route}\n${statusLabel(status)}`).inc();
  durationTimers(`${service}\n${route}`).observe(ms / 1000);
}

/** The counter of one cache namespace and result. */
export const cacheLookupCounter = (namespace: string, result: 'hit' | 'stale' | 'miss') => pendingCounter(cacheLookups, { namespace, result });

/**
 * Who may read /metrics: with METRICS_TOKEN, a request bearing it; without, a request made on
 * this machine (loopback peer, no forwarding header) unless METRICS_PUBLIC says anyone may.
 */
export interface MetricsAccess { token: string | null; public: boolean }

let access: MetricsAccess = { token: null, public: false };

export function protectMetrics(settings: MetricsAccess): void {
  access = settings;
}

const digest = (text: string) => createHash('sha256').update(text).digest();

/** Compared as digests of equal length, in constant time: the token's length and prefix leak nothing. */
function bearerMatches(header: string, token: string): boolean {
  return timingSafeEqual(digest(header), digest(`Bearer ${token}`));
}

const isLoopback = (address: string | undefined) =>
  !!address && (address.startsWith('127.') || address === '::1' || address.startsWith('::ffff:127.'));

/** Whether this request may read the metrics, else the status to answer. */
export function metricsRefusal(authorization: string, peer: string | undefined, forwarded: boolean): 401 | 403 | null {
  if (access.token) return bearerMatches(authorization, access.token) ? null : 401;
  if (access.public || (isLoopback(peer) && !forwarded)) return null;
  return 403;
}

/** The /metrics decision for a request: null when it may read them, else the status to answer. */
const requestRefusal = (ctx: Context) =>
  metricsRefusal(ctx.get('Authorization'), ctx.socket.remoteAddress, !!(ctx.get('X-Forwarded-For') || ctx.get('Forwarded')));

/**
 * Whether a request is the operator's: one /metrics would answer (METRICS_TOKEN, or this machine
 * without a forwarding header, or anyone with METRICS_PUBLIC), or one bearing another of the
 * operator's tokens (`tokens`, e.g. SEARCH_ADMIN_TOKEN). Operator-only detail (data-file names,
 * row problems) is shown on this decision and no other.
 */
export function isOperator(ctx: Context, tokens: ReadonlyArray<string | null | undefined> = []): boolean {
  const authorization = ctx.get('Authorization');
  if (tokens.some((token) => !!token && bearerMatches(authorization, token))) return true;
  return requestRefusal(ctx) === null;
}

export function metricsRoute(): Middleware {
  return async (ctx, next) => {
    if (ctx.path !== '/metrics' || ctx.method !== 'GET') return next();
    ctx.state.route = '/metrics';
    const refusal = requestRefusal(ctx);
    if (refusal) {
      ctx.status = refusal;
      ctx.set('Cache-Control', 'no-store');
      ctx.body = refusal === 401 ? 'unauthorized\n' : 'metrics are served to this machine only: set METRICS_TOKEN (or METRICS_PUBLIC=true)\n';
      return;
    }
    ctx.type = registry.contentType;
    ctx.body = await registry.metrics();
  };
}
