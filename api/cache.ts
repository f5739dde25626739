// keyv namespaces with the spec's TTLs. In memory (one bounded LRU map) by default, Redis when
// REDIS_URL is set. Entries keep their value past the TTL for a stale grace period so a failing
// upstream can be answered from the last good value. Cache trouble never fails a request.
import Keyv from 'keyv';
import KeyvRedis from '@keyv/redis';
import type { RedisClientType } from '@redis/client';
import type { Logger } from '../shared/log.ts';

/** TTLs in seconds (spec "Cache durations"). */
export const TTL = {
  uuid: 3600,
  profile: 300,
  texture: 86_400,
  render: 604_800,
  history: 21_600,
  announcements: 600,
  meta: 3600,
  /** "No such player" answers: shorter than a hit so a new account shows up soon. */
  negative: 60,
} as const;

export type Freshness = 'fresh' | 'stale';
export interface CacheHit<T> { value: T; freshness: Freshness; storedAt: number }

interface Envelope<T> { v: T; t: number }

/** A Map that forgets its least recently used entries beyond a bound (keyv's memory store). */
export class LruMap<V> extends Map<string, V> {
  readonly limit: number;
  constructor(limit: number) {
    super();
    this.limit = limit;
  }
  override get(key: string): V | undefined {
    const value = super.get(key);
    if (value !== undefined) {
      super.delete(key);
      super.set(key, value);
    }
    return value;
  }
  override set(key: string, value: V): this {
    super.delete(key);
    super.set(key, value);
    if (this.size > this.limit) {
      const oldest = this.keys().next();
      if (!oldest.done) super.delete(oldest.value);
    }
    return this;
  }
}

export interface CacheStats { enabled: boolean; backend: 'memory' | 'redis'; entries: number; hits: number; misses: number; stale: number; errors: number }

export class CacheNamespace<T> {
  readonly name: string;
  readonly ttlSeconds: number;
  private readonly keyv: Keyv;
  private readonly staleSeconds: number;
  private readonly owner: Cache;

  constructor(owner: Cache, name: string, keyv: Keyv, ttlSeconds: number, staleSeconds: number) {
    this.owner = owner;
    this.name = name;
    this.keyv = keyv;
    this.ttlSeconds = ttlSeconds;
    this.staleSeconds = staleSeconds;
  }

  /** The entry, fresh or stale; undefined when absent (or when the store fails). */
  async get(key: string): Promise<CacheHit<T> | undefined> {
    let envelope: Envelope<T> | undefined;
    try {
      envelope = (await this.keyv.get(key)) as Envelope<T> | undefined;
    } catch (err) {
      this.owner.failed(this.name, err);
      return undefined;
    }
    if (!envelope || typeof envelope !== 'object' || !('t' in envelope)) {
      this.owner.count('misses');
      return undefined;
    }
    const fresh = Date.now() - envelope.t < this.ttlSeconds * 1000;
    this.owner.count(fresh ? 'hits' : 'stale');
    return { value: envelope.v, freshness: fresh ? 'fresh' : 'stale', storedAt: envelope.t };
  }

  /** Stores a value; `ttlSeconds` overrides the namespace TTL (negative answers). */
  async set(key: string, value: T, ttlSeconds = this.ttlSeconds): Promise<void> {
    const envelope: Envelope<T> = { v: value, t: Date.now() - (this.ttlSeconds - ttlSeconds) * 1000 };
    try {
      await this.keyv.set(key, envelope, (this.ttlSeconds + this.staleSeconds) * 1000);
    } catch (err) {
      this.owner.failed(this.name, err);
    }
  }

  async delete(key: string): Promise<void> {
    try {
      await this.keyv.delete(key);
    } catch (err) {
      this.owner.failed(this.name, err);
    }
  }
}

export interface CacheOptions { maxEntries: number; staleSeconds: number; redis?: RedisClientType | null; log: Logger }

export class Cache {
  private readonly options: CacheOptions;
  private readonly memory: LruMap<unknown> | null;
  private readonly counters = { hits: 0, misses: 0, stale: 0, errors: 0 };
  private readonly namespaces = new Map<string, CacheNamespace<unknown>>();

  constructor(options: CacheOptions) {
    this.options = options;
    this.memory = options.redis ? null : new LruMap(options.maxEntries);
  }

  get backend(): 'memory' | 'redis' {
    return this.memory ? 'memory' : 'redis';
  }

  namespace<T>(name: string, ttlSeconds: number, staleSeconds = this.options.staleSeconds): CacheNamespace<T> {
    const existing = this.namespaces.get(name);
    if (existing) return existing as CacheNamespace<T>;
    const store = this.options.redis
      ? new KeyvRedis(this.options.redis, { namespace: `skinfarm:${name}`, useUnlink: true })
      : this.memory!;
    const keyv = new Keyv({ store, namespace: this.memory ? `skinfarm:${name}` : undefined, useKeyPrefix: !!this.memory, throwOnErrors: true });
    keyv.on('error', (err: unknown) => this.failed(name, err));
    const ns = new CacheNamespace<T>(this, name, keyv, ttlSeconds, staleSeconds);
    this.namespaces.set(name, ns as CacheNamespace<unknown>);
    return ns;
  }

  count(kind: 'hits' | 'misses' | 'stale'): void {
    this.counters[kind] += 1;
  }

  failed(namespace: string, err: unknown): void {
    this.counters.errors += 1;
    this.options.log.warn('cache store error', { namespace, err });
  }

  /** Local counters plus the entry count (memory size, or the Redis database size). */
  async stats(): Promise<CacheStats> {
    let entries = this.memory?.size ?? 0;
    if (this.options.redis) {
      try {
        entries = this.options.redis.isReady ? await this.options.redis.dbSize() : 0;
      } catch {
        entries = 0;
      }
    }
    return { enabled: true, backend: this.backend, entries, ...this.counters };
  }
}
