// Prometheus metrics for the whole process (every service shares one registry), served at
// /metrics on each service's port. Counters are updated where things happen; gauges that
// describe a component's state are read from it when scraped.
import type { Middleware } from 'koa';
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
  help: 'HTTP requests by service, route group and status',
  labelNames: ['service', 'group', 'status'] as const,
  registers: [registry],
  collect() { flushPending(this); },
});

export const httpDuration = new client.Histogram({
  name: 'skinfarm_http_request_duration_seconds',
  help: 'HTTP request duration by service and route group',
  labelNames: ['service', 'group'] as const,
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
  const [service, group, status] = key.split('\n');
  return pendingCounter(httpRequests, { service, group, status });
});
const durationTimers = labelled((key) => {
  const [service, group] = key.split('\n');
  return httpDuration.labels({ service, group });
});

/** Counts one answered request and its duration (route groups are few, so children stay few). */
export function recordRequest(service: string, group: string, status: number, ms: number): void {
  requestCounters(`${service}\n${group}\n${status}`).inc();
  durationTimers(`${service}\n${group}`).observe(ms / 1000);
}

/** The counter of one cache namespace and result. */
export const cacheLookupCounter = (namespace: string, result: 'hit' | 'stale' | 'miss') => pendingCounter(cacheLookups, { namespace, result });

/** The first path segments name a route group without exploding label cardinality. */
export function routeGroup(path: string): string {
  const parts = path.split('/').filter(Boolean);
  if (parts.length === 0) return '/';
  if (parts[0] === 'v1' && parts.length > 1) {
    // /v1/admin/keys/{id}, /v1/me/token and /v1/external/meta keep their second word.
    return ['admin', 'me', 'external', 'status'].includes(parts[1]) && parts[2] ? `/v1/${parts[1]}/${parts[2].replace(/[^a-z-].*$/, ':id')}` : `/v1/${parts[1]}`;
  }
  return ['oauth', 'f', 'docs', 'status', 'metrics', 'health', 'openapi.json', 'login'].includes(parts[0]) ? `/${parts[0]}` : '/other';
}

let metricsToken: string | null = null;

/** METRICS_TOKEN, when set, must be sent as a bearer token to read /metrics. */
export function protectMetrics(token: string | null): void {
  metricsToken = token;
}

export function metricsRoute(): Middleware {
  return async (ctx, next) => {
    if (ctx.path !== '/metrics' || ctx.method !== 'GET') return next();
    if (metricsToken && ctx.get('Authorization') !== `Bearer ${metricsToken}`) {
      ctx.status = 401;
      ctx.body = 'unauthorized\n';
      return;
    }
    ctx.type = registry.contentType;
    ctx.body = await registry.metrics();
  };
}
