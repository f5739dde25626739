// Starts the configured services, each its own Koa app on its own port, over shared state
// (cache, rate limits, Redis), and closes them in order. Ports are bound first, so a taken port
// fails before any Chromium starts; until its service is ready a port answers 503 with
// Retry-After, and the log says what it waits for ('starting'), then where it serves
// ('listening'). A failed or interrupted start closes whatever it had started.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { RedisClientType } from '@redis/client';
import { ApiError } from '../shared/errors.ts';
import type { Logger } from '../shared/log.ts';
import { reachableHost } from './banner.ts';
import { Cache } from './cache.ts';
import { withListenAddresses, type Config, type ServiceName } from './config.ts';
import { createHttpApp } from './http/app.ts';
import { limitBodies } from './http/body.ts';
import { IdleTrim } from './idle-trim.ts';
import { errorEnvelope, localizedErrorEnvelope } from './http/envelope.ts';
import type { ErrorFormatter } from './http/errors.ts';
import { MemoryCounterStore, RateLimiter, RedisCounterStore } from './http/rate-limit.ts';
import { onClientError } from './http/client-error.ts';
import { lagMonitor } from './http/load-shed.ts';
import { protectMetrics } from './metrics.ts';
import { lagCheck, Readiness, redisCheck } from './readiness.ts';
import { checkCacheRedis, connectRedis, shownUrl } from './redis.ts';
import { formatSearchError } from './search/errors.ts';
import type { Service, SharedDeps } from './service.ts';
import { createUpstreams } from './skins/upstreams.ts';

/**
 * Each service's code is loaded only by a process that runs it: a search-only instance held the
 * image code too (sharp and libvips, the renderer's client), 44 MB of its RSS at start.
 */
const FACTORIES: Record<ServiceName, (deps: SharedDeps) => Promise<Service>> = {
  // The skins service serves the document of every service's table.
  skins: async (deps) => {
    const [{ createSkinsService }, { servedDocs }, { ROUTE_TABLES }] = await Promise.all([import('./skins/service.ts'), import('./docs/served.ts'), import('./route-tables.ts')]);
    return createSkinsService(deps, servedDocs(deps.config, ROUTE_TABLES));
  },
  media: async (deps) => (await import('./media/service.ts')).createMediaService(deps),
  search: async (deps) => (await import('./search/service.ts')).createSearchService(deps),
};

/** What a port answers while its service starts: the service's own error format. */
const STARTING: Record<ServiceName, ErrorFormatter> = {
  skins: errorEnvelope,
  media: localizedErrorEnvelope,
  search: formatSearchError,
};

/**
 * What a service's start waits for besides Redis, as a person reads it: said while its port
 * answers 503 `starting`, since a farm of pages takes seconds.
 */
const WAITS: Record<ServiceName, (config: Config) => string | null> = {
  skins: ({ render: { workers, queueUrl } }) => (queueUrl ? `the render queue broker (RENDER_QUEUE_URL, one try)`
    : workers > 0 ? `the render farm (${workers} page${workers === 1 ? '' : 's'})` : null),
  media: () => null,
  search: ({ search }) => (search.databaseUrl ? 'PostgreSQL (SEARCH_DATABASE_URL)' : search.dataPath ? 'the index of SEARCH_DATA' : null),
};

/** Everything a service's port waits for, in order; undefined when it starts at once. */
function waitsFor(name: ServiceName, config: Config): string | undefined {
  const waits = [
    config.redisUrl && `Redis at ${shownUrl(config.redisUrl)} (REDIS_URL)`,
    config.cacheRedisUrl && config.cacheRedisUrl !== config.redisUrl && `Redis at ${shownUrl(config.cacheRedisUrl)} (CACHE_REDIS_URL)`,
    WAITS[name](config),
  ].filter(Boolean);
  return waits.length ? waits.join(', then ') : undefined;
}

const SHUTDOWN_GRACE_MS = 15_000;

/**
 * What one connection may take of a port. Node's own defaults let a slow header hold a socket
 * for 60 s and a slow body for 300 s, checked every 30 s. Our body deadline (http/body.ts)
 * answers first; requestTimeout is the backstop for a body no handler reads.
 */
function serverOptions(requests: Config['requests']): http.ServerOptions {
  return {
    headersTimeout: requests.headersTimeoutMs,
    requestTimeout: requests.headersTimeoutMs + requests.bodies.timeoutMs + 5_000,
    // Both are checked this often: a second late at most, for a walk over at most maxConnections.
    connectionsCheckingInterval: 1_000,
    // Longer than a load balancer's idle timeout (nginx 60 s), so the balancer closes first.
    keepAliveTimeout: 65_000,
  };
}

/** Probes and scrapes: a service polled by them is still idle and may give memory back. */
const PROBES = new Set(['/health', '/ready', '/metrics', '/v1/status']);

function isWork(url = '/'): boolean {
  const mark = url.indexOf('?');
  return !PROBES.has(mark < 0 ? url : url.slice(0, mark));
}

export interface RunningServices {
  ports: Partial<Record<ServiceName, number>>;
  close(): Promise<void>;
}

/** A port this process cannot have: the message names the setting to change, so it is logged as one line without a stack. */
export class PortUnavailable extends Error {}

const LISTEN_FAILURES: Record<string, (where: string, setting: string) => string> = {
  EADDRINUSE: (where, setting) => `${where} is already in use (EADDRINUSE): set ${setting} to a free port, or stop the process that holds it`,
  EACCES: (where, setting) => `${where} needs privileges this process lacks (EACCES): set ${setting} to 1024 or above`,
};

function listen(server: http.Server, name: ServiceName, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => {
      const explain = LISTEN_FAILURES[error.code ?? ''];
      reject(explain ? new PortUnavailable(explain(`${host}:${port}`, `${name.toUpperCase()}_PORT`)) : error);
    });
    server.listen(port, host, () => resolve((server.address() as AddressInfo).port));
  });
}

/** Stops accepting, lets in-flight requests finish and closes keep-alive connections as they go idle; after the grace period whatever is left is cut. */
function drain(server: http.Server): Promise<void> {
  if (!server.listening) return Promise.resolve();
  return new Promise<void>((resolve) => {
    const sweep = setInterval(() => server.closeIdleConnections(), 50);
    const deadline = setTimeout(() => server.closeAllConnections(), SHUTDOWN_GRACE_MS);
    server.close(() => {
      clearInterval(sweep);
      clearTimeout(deadline);
      resolve();
    });
    server.closeIdleConnections();
  });
}

/** A port's handler: 503 `overloaded` with Retry-After until the service is handed over. */
function startingApp(name: ServiceName, config: Config, log: Logger) {
  const { app } = createHttpApp({ service: name, formatError: STARTING[name], log, config: { ...config, maxLagMs: 0 } });
  app.use(() => { throw new ApiError('overloaded', { detail: 'starting', retryAfter: 1 }); });
  return app;
}

/**
 * Starts the configured services. When `stop` aborts during start-up, what has started is
 * closed and the returned promise rejects with the abort reason; any failure does the same.
 */
export async function startServices(config: Config, log: Logger, stop?: AbortSignal): Promise<RunningServices> {
  protectMetrics(config.metrics);
  limitBodies(config.requests.bodies);
  const servers: http.Server[] = [];
  const services: Service[] = [];
  let redis: RedisClientType | null = null;
  let cacheRedis: RedisClientType | null = null;
  let closing: Promise<void> | null = null;
  const idle = config.idleTrimSeconds > 0
    ? new IdleTrim({ idleMs: config.idleTrimSeconds * 1000, log, trim: async () => { await Promise.all(services.map((s) => s.trim?.())); } })
    : null;
  const close = () => {
    closing ??= (async () => {
      idle?.close();
      await Promise.all(servers.map(drain));
      await Promise.all(services.map((s) => s.close?.()));
      for (const client of new Set([redis, cacheRedis])) if (client?.isOpen) await client.quit().catch(() => {});
    })();
    return closing;
  };
  const stopped = () => {
    if (stop?.aborted) throw stop.reason;
  };

  try {
    const ports: Partial<Record<ServiceName, number>> = {};
    const handlers = new Map<ServiceName, http.RequestListener>();
    for (const name of config.services) {
      const starting = startingApp(name, config, log.child({ service: name }));
      handlers.set(name, starting.callback());
      const server = http.createServer(serverOptions(config.requests), (req, res) => {
        if (idle && isWork(req.url)) idle.touch();
        handlers.get(name)!(req, res);
      });
      // Past it a new connection is closed at once: sockets (and file descriptors) stay bounded.
      server.maxConnections = config.requests.maxConnections;
      // The starting app has the service's name, version and error format: the same raw reply.
      server.on('clientError', onClientError(starting as never));
      servers.push(server);
      ports[name] = await listen(server, name, config.ports[name], config.host);
      // No address yet: it would be opened and answer 503 for as long as the wait lasts.
      log.child({ service: name }).info('starting', { port: ports[name], host: config.host, waiting_for: waitsFor(name, config) });
    }
    stopped();
    const redisOptions = { commandTimeoutMs: config.redis.commandTimeoutMs, startTimeoutMs: config.redis.startTimeoutMs, stop };
    redis = config.redisUrl ? await connectRedis(config.redisUrl, log, { ...redisOptions, name: 'REDIS_URL' }) : null;
    cacheRedis = config.cacheRedisUrl === config.redisUrl ? redis : await connectRedis(config.cacheRedisUrl!, log.child({ redis: 'cache' }), { ...redisOptions, name: 'CACHE_REDIS_URL' });
    stopped();
    if (cacheRedis) await checkCacheRedis(cacheRedis, cacheRedis === redis, log);
    const cache = new Cache({ maxEntries: config.cache.maxEntries, maxBytes: config.cache.maxBytes, staleSeconds: config.cache.staleSeconds, ttl: config.cache.ttl, redis: cacheRedis, log });
    const limiter = new RateLimiter(redis ? new RedisCounterStore(redis) : new MemoryCounterStore(), log);
    const running = withListenAddresses(config, ports);
    const shared = { config: running, log, cache, limiter, redis, upstreams: createUpstreams(running, cache, redis, log), stopping: stop };
    const checks = [
      lagCheck(() => lagMonitor.lagMs, config.maxLagMs),
      ...(redis ? [redisCheck('redis', redis)] : []),
      ...(cacheRedis && cacheRedis !== redis ? [redisCheck('cache_redis', cacheRedis)] : []),
    ];

    // Side by side: a quick service answers while the render farm still starts. Every start
    // settles before a failure counts, so nothing half-started is left behind.
    const starts = await Promise.allSettled(config.services.map(async (name) => {
      const service = await FACTORIES[name]({ ...shared, log: log.child({ service: name }), readiness: new Readiness(checks) });
      services.push(service);
      if (stop?.aborted) return;
      handlers.set(name, service.handler?.() ?? service.app.callback());
      // From here the address answers: the line a person (or a script) may act on.
      log.child({ service: name }).info('listening', { port: ports[name], host: config.host, url: `http://${reachableHost(config.host)}:${ports[name]}` });
    }));
    const failed = starts.find((s) => s.status === 'rejected');
    if (failed) throw failed.reason;
    stopped();
    idle?.started();
    return { ports, close };
  } catch (error) {
    await close();
    throw error;
  }
}
