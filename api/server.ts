// Starts the configured services, each its own Koa app on its own port, over shared state
// (cache, rate limits, Redis), and closes them in order.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { RedisClientType } from '@redis/client';
import type { Logger } from '../shared/log.ts';
import { Cache } from './cache.ts';
import type { Config, ServiceName } from './config.ts';
import { MemoryCounterStore, RateLimiter, RedisCounterStore } from './http/rate-limit.ts';
import { protectMetrics } from './metrics.ts';
import { onClientError } from './http/client-error.ts';
import { connectRedis } from './redis.ts';
import { createMediaService } from './media/service.ts';
import { createSearchService } from './search/service.ts';
import type { Service, SharedDeps } from './service.ts';
import { createSkinsService } from './skins/service.ts';
import { createUpstreams } from './skins/upstreams.ts';

const FACTORIES: Record<ServiceName, (deps: SharedDeps) => Promise<Service>> = {
  skins: createSkinsService,
  media: createMediaService,
  search: createSearchService,
};

const SHUTDOWN_GRACE_MS = 15_000;

export interface RunningServices {
  ports: Partial<Record<ServiceName, number>>;
  close(): Promise<void>;
}

function listen(server: http.Server, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve((server.address() as AddressInfo).port));
  });
}

export async function startServices(config: Config, log: Logger): Promise<RunningServices> {
  protectMetrics(config.metricsToken);
  const redis: RedisClientType | null = config.redisUrl ? await connectRedis(config.redisUrl, log) : null;
  const cache = new Cache({ maxEntries: config.cache.maxEntries, staleSeconds: config.cache.staleSeconds, ttl: config.cache.ttl, redis, log });
  const limiter = new RateLimiter(redis ? new RedisCounterStore(redis) : new MemoryCounterStore(), log);
  const shared = { config, log, cache, limiter, redis, upstreams: createUpstreams(config, cache, redis, log) };

  const servers: http.Server[] = [];
  const services: Service[] = [];
  const ports: Partial<Record<ServiceName, number>> = {};
  for (const name of config.services) {
    const serviceLog = log.child({ service: name });
    const service = await FACTORIES[name]({ ...shared, log: serviceLog });
    services.push(service);
    const server = http.createServer(service.app.callback());
    server.keepAliveTimeout = 65_000;
    server.on('clientError', onClientError(service.app as never));
    ports[name] = await listen(server, config.ports[name], config.host);
    if (name === 'skins' && !config.publicUrlExplicit) config.publicUrl = `http://localhost:${ports[name]}`;
    servers.push(server);
    serviceLog.info('listening', { port: ports[name], host: config.host });
  }

  return {
    ports,
    async close() {
      // Stop accepting, let in-flight requests finish, and close keep-alive connections as
      // they go idle; after the grace period whatever is left is cut.
      await Promise.all(servers.map((s) => new Promise<void>((resolve) => {
        const sweep = setInterval(() => s.closeIdleConnections(), 50);
        const deadline = setTimeout(() => s.closeAllConnections(), SHUTDOWN_GRACE_MS);
        s.close(() => {
          clearInterval(sweep);
          clearTimeout(deadline);
          resolve();
        });
        s.closeIdleConnections();
      })));
      await Promise.all(services.map((s) => s.close?.()));
      if (redis?.isOpen) await redis.quit().catch(() => {});
    },
  };
}
