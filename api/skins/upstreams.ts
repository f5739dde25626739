// The process's upstream clients and player lookup, built once and shared by every service that
// asks for players (skins, and search's game-player source): one budget, one health record, one
// in-flight map per upstream.
import type { RedisClientType } from '@redis/client';
import type { Logger } from '../../shared/log.ts';
import type { Cache } from '../cache.ts';
import type { Config } from '../config.ts';
import { MemoryCounterStore, RateLimiter, RedisCounterStore } from '../http/rate-limit.ts';
import { PlayerLookup, Sources } from './lookup.ts';
import { BedrockSource } from './upstream/bedrock.ts';
import { UpstreamBudgets } from './upstream/budget.ts';
import { UpstreamClient } from './upstream/client.ts';
import { ExternalSource } from './upstream/external.ts';
import { SourceHealth } from './upstream/health.ts';
import { OfficialSource } from './upstream/official.ts';
import { USER_AGENT } from '../version.ts';

export interface Upstreams { lookup: PlayerLookup; budgets: UpstreamBudgets; clientOptions: { timeoutMs: number; retries: number; userAgent: string } }

export function createUpstreams(config: Config, cache: Cache, redis: RedisClientType | null, log: Logger): Upstreams {
  const clientOptions = { timeoutMs: config.upstream.timeoutMs, retries: config.upstream.retries, userAgent: USER_AGENT };
  // Each client's share of the budgets is counted like a rate limit (in Redis when it is shared).
  const { perMinute, reservePercent, lightSpend } = config.upstream.clientShare;
  const limiter = new RateLimiter(redis ? new RedisCounterStore(redis) : new MemoryCounterStore(), log);
  const budgets = new UpstreamBudgets(config.upstream.budgets, redis, log, { perMinute, reserve: reservePercent / 100, lightSpend, limiter });
  // The back-off after a 429 is shared like the budgets: one instance's 429 stops them all.
  const shared = redis ? { redis, log } : undefined;
  // Repeated faults open a source's circuit (the texture client, whose hosts fail apart, has none).
  const sourceOptions = { ...clientOptions, budgets, shared, faults: config.upstream.circuit, log };
  // Mojang's CDN answers 403 when it throttles; the external service's 403 is a real answer.
  const official = new OfficialSource(config.official, new UpstreamClient(new SourceHealth('official', config.official.enabled),
    { ...sourceOptions, throttleStatuses: [429, 403] }));
  const external = new ExternalSource(config.external, new UpstreamClient(new SourceHealth('external', config.external.enabled), sourceOptions));
  const bedrock = new BedrockSource(config.bedrock, new UpstreamClient(new SourceHealth('bedrock', config.bedrock.enabled), sourceOptions));
  const enabled = { official: config.official.enabled, external: config.external.enabled, bedrock: config.bedrock.enabled };
  const sources = new Sources(official, external, bedrock, enabled);
  const { nameBatchMs, errorTtlMs, staleWaitMs } = config.upstream;
  const lookup = new PlayerLookup(sources, cache, log, { nameBatchMs, errorTtlMs, staleWaitMs, admit: (family) => budgets.charge(family), officialTextureUrl: config.official.textureUrl });
  return { lookup, budgets, clientOptions };
}
