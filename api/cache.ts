// Cache namespaces with the spec's TTLs. In memory (one bounded LRU map) by default; with
// REDIS_URL, keyv over Redis (its public get/set/delete only) behind an in-process LRU copy.
// Each entry carries its own expiries: fresh until `f`, then kept for a stale grace period until
// `e` so a failing upstream can be answered from the last good value. Cache trouble never fails
// a request.
import Keyv from 'keyv';
import KeyvRedis from '@keyv/redis';
import type { RedisClientType } from '@redis/client';
import type { Logger } from '../shared/log.ts';
import type { CacheTtls } from './config.ts';
import { cacheLookupCounter } from './metrics.ts';
import { LruMap } from '../shared/lru-map.ts';

export type Freshness = 'fresh' | 'stale';
export interface CacheHit<T> { value: T; freshness: Freshness; storedAt: number }

/** A stored value: stored at `t`, fresh until `f`, kept (stale) until `e`; epoch milliseconds. */
interface Envelope<T> { v: T; t: number; f: number; e: number }

function isEnvelope(value: unknown): value is Envelope<unknown> {
  return !!value && typeof value === 'object' && typeof (value as Envelope<unknown>).f === 'number' && typeof (value as Envelope<unknown>).e === 'number';
}

export interface CacheStats {
  enabled: boolean; backend: 'memory' | 'redis'; degraded: boolean; entries: number; bytes: number | null;
  hits: number; misses: number; stale: number; errors: number;
}

export class CacheNamespace<T> {
  readonly name: string;
  readonly ttlSeconds: number;
  private readonly staleSeconds: number;
  private readonly owner: Cache;
  /** The shared store (Redis through keyv); null in memory mode, where `local` is the store. */
  private readonly keyv: Keyv | null;
  /** In-process entries: the whole cache in memory mode, a copy in front of Redis otherwise. */
  private readonly local: LruMap<Envelope<unknown>> | null;
  private readonly lookups: Record<'hit' | 'stale' | 'miss', { inc(): void }>;

  constructor(owner: Cache, name: string, ttlSeconds: number, staleSeconds: number, keyv: Keyv | null, local: LruMap<Envelope<unknown>> | null) {
    this.owner = owner;
    this.lookups = { hit: cacheLookupCounter(name, 'hit'), stale: cacheLookupCounter(name, 'stale'), miss: cacheLookupCounter(name, 'miss') };
    this.name = name;
    this.ttlSeconds = ttlSeconds;
    this.staleSeconds = staleSeconds;
    this.keyv = keyv;
    this.local = local;
  }

  /** The entry, fresh or stale; undefined when absent (or when the store fails). */
  async get(key: string): Promise<CacheHit<T> | undefined> {
    const now = Date.now();
    let envelope = this.fromLocal(key, now);
    if (!envelope && this.keyv) {
      try {
        const stored = await this.keyv.get(key);
        if (isEnvelope(stored) && stored.e > now) envelope = this.toLocal(key, stored as Envelope<T>);
      } catch (err) {
        this.owner.failed(this.name, err);
      }
    }
    if (!envelope) {
      this.owner.count('misses');
      this.lookups.miss.inc();
      return undefined;
    }
    const fresh = now < envelope.f;
    this.owner.count(fresh ? 'hits' : 'stale');
    this.lookups[fresh ? 'hit' : 'stale'].inc();
    return { value: envelope.v, freshness: fresh ? 'fresh' : 'stale', storedAt: envelope.t };
  }

  /**
   * The fresh in-process entry, synchronously, uncounted: a fast path that may still hand the
   * request to get() counts its hits (countHit) only once it answers.
   */
  peek(key: string): T | undefined {
    const now = Date.now();
    const envelope = this.fromLocal(key, now);
    return envelope && now < envelope.f ? envelope.v : undefined;
  }

  /** Counts a hit that peek() found, as get() would have. */
  countHit(): void {
    this.owner.count('hits');
    this.lookups.hit.inc();
  }

  private fromLocal(key: string, now: number): Envelope<T> | undefined {
    const id = `${this.name}:${key}`;
    const envelope = this.local?.get(id);
    if (!envelope) return undefined;
    if (envelope.e > now) return envelope as Envelope<T>;
    this.local!.delete(id);
    return undefined;
  }

  private toLocal(key: string, envelope: Envelope<T>): Envelope<T> {
    this.local?.set(`${this.name}:${key}`, envelope);
    return envelope;
  }

  /** Stores a value, fresh for `ttlSeconds` (the namespace TTL unless given: negative answers). */
  async set(key: string, value: T, ttlSeconds = this.ttlSeconds): Promise<void> {
    const now = Date.now();
    const keepMs = (ttlSeconds + this.staleSeconds) * 1000;
    if (keepMs <= 0) return;
    this.toLocal(key, { v: value, t: now, f: now + ttlSeconds * 1000, e: now + keepMs });
    if (!this.keyv) return;
    try {
      await Promise.all([
        this.keyv.set(key, { v: value, t: now, f: now + ttlSeconds * 1000, e: now + keepMs }, keepMs),
        this.owner.ledger(this.name, key, now + keepMs),
      ]);
    } catch (err) {
      this.owner.failed(this.name, err);
    }
  }

  async delete(key: string): Promise<void> {
    this.local?.delete(`${this.name}:${key}`);
    if (!this.keyv) return;
    try {
      await Promise.all([this.keyv.delete(key), this.owner.ledger(this.name, key, null)]);
    } catch (err) {
      this.owner.failed(this.name, err);
    }
  }
}

export interface CacheOptions { maxEntries: number; maxBytes?: number; staleSeconds: number; ttl: CacheTtls; redis?: RedisClientType | null; log: Logger }

export class Cache {
  private readonly options: CacheOptions;
  /** The in-process entries of every namespace (the store in memory mode, a copy over Redis). */
  private readonly local: LruMap<Envelope<unknown>>;
  private readonly counters = { hits: 0, misses: 0, stale: 0, errors: 0 };
  private readonly namespaces = new Map<string, CacheNamespace<unknown>>();

  constructor(options: CacheOptions) {
    this.options = options;
    this.local = new LruMap(options.maxEntries, options.maxBytes);
  }

  get backend(): 'memory' | 'redis' {
    return this.options.redis ? 'redis' : 'memory';
  }

  /** The configured lifetimes (CACHE_TTL_*), e.g. for negative answers. */
  get ttl(): CacheTtls {
    return this.options.ttl;
  }

  /**
   * A namespace whose TTL is the configured one of that name, or `ttlSeconds` for others.
   * `shared: true` keeps no in-process copy over Redis: every read sees what other instances
   * wrote (e.g. where a change must count everywhere at once).
   */
  namespace<T>(name: string, ttlSeconds?: number, staleSeconds = this.options.staleSeconds, shared = false): CacheNamespace<T> {
    const existing = this.namespaces.get(name);
    if (existing) return existing as CacheNamespace<T>;
    const ttl = ttlSeconds ?? this.options.ttl[name as keyof CacheTtls];
    if (ttl === undefined) throw new Error(`cache namespace ${name} needs a TTL`);
    const redis = this.options.redis;
    let keyv: Keyv | null = null;
    if (redis) {
      // The Redis adapter prefixes keys itself ("skinfarm:name::key"); keyv must not add another.
      keyv = new Keyv({ store: new KeyvRedis(redis, { useUnlink: true }), namespace: `skinfarm:${name}`, useKeyPrefix: false, throwOnErrors: true });
      keyv.on('error', (err: unknown) => this.failed(name, err));
    }
    const ns = new CacheNamespace<T>(this, name, ttl, staleSeconds, keyv, redis && shared ? null : this.local);
    this.namespaces.set(name, ns as CacheNamespace<unknown>);
    return ns;
  }

  count(kind: 'hits' | 'misses' | 'stale'): void {
    this.counters[kind] += 1;
  }

  private lastFailureLog = 0;

  failed(namespace: string, err: unknown): void {
    this.counters.errors += 1;
    // While Redis is down every request fails here; one line every 10 s says enough.
    const now = Date.now();
    if (now - this.lastFailureLog < 10_000) return;
    this.lastFailureLog = now;
    this.options.log.warn('cache store error; serving from the in-process layer', { namespace, err: (err as Error)?.message ?? String(err), errors: this.counters.errors });
  }

  /**
   * Records a cache key in the ledger (a sorted set beside the keys, scored by the key's expiry),
   * or drops it (`expiresAt` null): what stats() counts instead of walking the keyspace.
   */
  ledger(namespace: string, key: string, expiresAt: number | null): Promise<unknown> {
    const redis = this.options.redis;
    if (!redis) return Promise.resolve();
    const member = `${namespace}::${key}`;
    if (expiresAt === null) return redis.zRem(LEDGER_KEY, member);
    // Pruned as it is written, not only when /v1/status asks: else members of expired keys pile up.
    this.pruneLedger(redis);
    return redis.zAdd(LEDGER_KEY, { score: expiresAt, value: member });
  }

  /** Drops the ledger's members whose keys have expired, at most once a minute. */
  private pruneLedger(redis: RedisClientType): void {
    const now = performance.now();
    if (now - this.prunedAt <= LEDGER_PRUNE_MS) return;
    this.prunedAt = now;
    redis.zRemRangeByScore(LEDGER_KEY, '-inf', Date.now()).catch((err: unknown) => this.failed('stats', err));
  }

  /**
   * Local counters plus entries and bytes: the LRU's in memory mode; over Redis, the cache keys
   * the ledger holds that have not expired (rate limits, sessions, budgets and locks share the
   * database but are not cache entries), and no byte count.
   */
  async stats(): Promise<CacheStats> {
    const redis = this.options.redis;
    let entries = this.local.size;
    let bytes: number | null = this.local.bytes;
    if (redis) {
      bytes = null;
      entries = redis.isReady ? await this.redisEntries(redis) : 0;
    }
    const degraded = !!redis && !redis.isReady;
    return { enabled: true, backend: this.backend, degraded, entries, bytes, ...this.counters };
  }

  private counted: { at: number; entries: Promise<number> } | null = null;
  private prunedAt = 0;

  /**
   * Cache keys in Redis, without walking the keyspace (no SCAN: /v1/status is not rate limited):
   * the ledger's members whose expiry is still ahead (ZCOUNT, O(log n)), never more than the
   * database holds (DBSIZE, O(1)), so keys Redis evicted (allkeys-lru on a cache of its own) are
   * not counted for long. Expired members are dropped at most once a minute (pruneLedger); one count serves
   * every caller for ENTRIES_RECOUNT_MS.
   */
  private redisEntries(redis: RedisClientType): Promise<number> {
    const now = performance.now();
    if (this.counted && now - this.counted.at < ENTRIES_RECOUNT_MS) return this.counted.entries;
    const epoch = Date.now();
    this.pruneLedger(redis);
    const entries = Promise.all([redis.zCount(LEDGER_KEY, `(${epoch}`, '+inf'), redis.dbSize()])
      .then(([live, keys]) => Math.max(0, Math.min(live, keys - 1)))
      .catch((err: unknown) => {
        this.failed('stats', err);
        return 0;
      });
    this.counted = { at: now, entries };
    return entries;
  }
}

/** The sorted set of cache keys ("<namespace>::<key>", scored by expiry in epoch ms). */
export const LEDGER_KEY = 'skinfarm:cache-ledger';
const ENTRIES_RECOUNT_MS = 1000;
const LEDGER_PRUNE_MS = 60_000;
