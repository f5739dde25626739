// keyv namespaces with the spec's TTLs. In memory (one bounded LRU map) by default, Redis when
// REDIS_URL is set. Entries keep their value past the TTL for a stale grace period so a failing
// upstream can be answered from the last good value. Cache trouble never fails a request.
import Keyv from 'keyv';
import KeyvRedis from '@keyv/redis';
import type { RedisClientType } from '@redis/client';
import type { Logger } from '../shared/log.ts';
import type { CacheTtls } from './config.ts';
import { cacheLookups } from './metrics.ts';

export type Freshness = 'fresh' | 'stale';
export interface CacheHit<T> { value: T; freshness: Freshness; storedAt: number }

interface Envelope<T> { v: T; t: number }

/** Rough size of a stored value: exact for bytes and text, JSON length for the rest. */
function sizeOf(value: unknown): number {
  if (Buffer.isBuffer(value)) return value.length;
  if (typeof value === 'string') return value.length;
  if (value === null || typeof value !== 'object') return 8;
  let total = 0;
  for (const item of Object.values(value)) total += sizeOf(item) + 16;
  return total;
}

/**
 * A Map that forgets its least recently used entries beyond a bound (keyv's memory store).
 * It keeps values as objects (no serialisation), so a cached image is the same Buffer each time.
 */
export class LruMap<V> extends Map<string, V> {
  readonly limit: number;
  /** Per key: its size, and the `tick` at which it last moved to the newest end. */
  private meta = new Map<string, { size: number; tick: number }>();
  private tick = 0;
  bytes = 0;
  constructor(limit: number) {
    super();
    this.limit = limit;
  }
  override delete(key: string): boolean {
    this.bytes -= this.meta.get(key)?.size ?? 0;
    this.meta.delete(key);
    return super.delete(key);
  }
  override clear(): void {
    super.clear();
    this.meta.clear();
    this.bytes = 0;
  }
  override get(key: string): V | undefined {
    const value = super.get(key);
    const meta = value === undefined ? undefined : this.meta.get(key);
    // An entry that moved within the last quarter of the bound is still far from eviction:
    // moving a hot key on every read was a measurable share of a cached image's cost.
    if (meta && this.tick - meta.tick > this.limit >> 2) {
      super.delete(key);
      super.set(key, value!);
      meta.tick = ++this.tick;
    }
    return value;
  }
  override set(key: string, value: V): this {
    this.delete(key);
    super.set(key, value);
    const size = sizeOf(value) + key.length;
    this.meta.set(key, { size, tick: ++this.tick });
    this.bytes += size;
    if (this.size > this.limit) {
      const oldest = this.keys().next();
      if (!oldest.done) this.delete(oldest.value);
    }
    return this;
  }
}

export interface CacheStats {
  enabled: boolean; backend: 'memory' | 'redis'; degraded: boolean; entries: number; bytes: number | null;
  hits: number; misses: number; stale: number; errors: number;
}

interface L1Entry { envelope: Envelope<unknown>; expiresAt: number }

export class CacheNamespace<T> {
  readonly name: string;
  readonly ttlSeconds: number;
  private readonly keyv: Keyv;
  private readonly staleSeconds: number;
  private readonly owner: Cache;
  /** In-process copy in front of Redis (hot keys skip the round trip; Redis down degrades to it). */
  private readonly l1: LruMap<L1Entry> | null;
  /** keyv's store in memory mode (the same entries keyv writes). */
  private readonly direct: LruMap<unknown> | null;

  constructor(owner: Cache, name: string, keyv: Keyv, ttlSeconds: number, staleSeconds: number, l1: LruMap<L1Entry> | null, direct: LruMap<unknown> | null) {
    this.owner = owner;
    this.name = name;
    this.keyv = keyv;
    this.ttlSeconds = ttlSeconds;
    this.staleSeconds = staleSeconds;
    this.l1 = l1;
    this.direct = direct;
  }

  /** The entry, fresh or stale; undefined when absent (or when the store fails). */
  async get(key: string): Promise<CacheHit<T> | undefined> {
    let envelope = this.fromL1(key);
    if (!envelope) {
      try {
        envelope = (await this.keyv.get(key)) as Envelope<T> | undefined;
      } catch (err) {
        this.owner.failed(this.name, err);
      }
      if (envelope && typeof envelope === 'object' && 't' in envelope) this.toL1(key, envelope);
    }
    if (!envelope || typeof envelope !== 'object' || !('t' in envelope)) {
      this.owner.count('misses');
      cacheLookups.inc({ namespace: this.name, result: 'miss' });
      return undefined;
    }
    const fresh = Date.now() - envelope.t < this.ttlSeconds * 1000;
    this.owner.count(fresh ? 'hits' : 'stale');
    cacheLookups.inc({ namespace: this.name, result: fresh ? 'hit' : 'stale' });
    return { value: envelope.v, freshness: fresh ? 'fresh' : 'stale', storedAt: envelope.t };
  }

  private fromL1(key: string): Envelope<T> | undefined {
    if (this.direct) {
      // Memory mode: read keyv's own map directly; keyv.get's promises and hooks are the whole
      // cost of a hot cached image.
      const stored = this.direct.get(`skinfarm:${this.name}:${key}`) as { value: Envelope<T>; expires?: number } | undefined;
      return stored && (!stored.expires || stored.expires > Date.now()) ? stored.value : undefined;
    }
    const entry = this.l1?.get(`${this.name}:${key}`);
    if (!entry) return undefined;
    if (entry.expiresAt > Date.now()) return entry.envelope as Envelope<T>;
    this.l1!.delete(`${this.name}:${key}`);
    return undefined;
  }

  private toL1(key: string, envelope: Envelope<T>): void {
    this.l1?.set(`${this.name}:${key}`, { envelope, expiresAt: envelope.t + (this.ttlSeconds + this.staleSeconds) * 1000 });
  }

  /** Stores a value; `ttlSeconds` overrides the namespace TTL (negative answers). */
  async set(key: string, value: T, ttlSeconds = this.ttlSeconds): Promise<void> {
    const envelope: Envelope<T> = { v: value, t: Date.now() - (this.ttlSeconds - ttlSeconds) * 1000 };
    this.toL1(key, envelope);
    try {
      await this.keyv.set(key, envelope, (this.ttlSeconds + this.staleSeconds) * 1000);
    } catch (err) {
      this.owner.failed(this.name, err);
    }
  }

  async delete(key: string): Promise<void> {
    this.l1?.delete(`${this.name}:${key}`);
    try {
      await this.keyv.delete(key);
    } catch (err) {
      this.owner.failed(this.name, err);
    }
  }
}

export interface CacheOptions { maxEntries: number; staleSeconds: number; ttl: CacheTtls; redis?: RedisClientType | null; log: Logger }

export class Cache {
  private readonly options: CacheOptions;
  private readonly memory: LruMap<unknown> | null;
  private readonly l1: LruMap<L1Entry> | null;
  private readonly counters = { hits: 0, misses: 0, stale: 0, errors: 0 };
  private readonly namespaces = new Map<string, CacheNamespace<unknown>>();

  constructor(options: CacheOptions) {
    this.options = options;
    this.memory = options.redis ? null : new LruMap(options.maxEntries);
    this.l1 = options.redis ? new LruMap(options.maxEntries) : null;
  }

  get backend(): 'memory' | 'redis' {
    return this.memory ? 'memory' : 'redis';
  }

  /** The configured lifetimes (CACHE_TTL_*), e.g. for negative answers. */
  get ttl(): CacheTtls {
    return this.options.ttl;
  }

  /**
   * A namespace whose TTL is the configured one of that name, or `ttlSeconds` for others.
   * `shared: true` keeps no in-process copy: every read sees what other instances wrote
   * (sessions, where a logout must count everywhere at once).
   */
  namespace<T>(name: string, ttlSeconds?: number, staleSeconds = this.options.staleSeconds, shared = false): CacheNamespace<T> {
    const existing = this.namespaces.get(name);
    if (existing) return existing as CacheNamespace<T>;
    const store = this.options.redis
      ? new KeyvRedis(this.options.redis, { useUnlink: true })
      : this.memory!;
    const identity = (data: unknown) => data as string;
    const keyv = this.memory
      ? new Keyv({ store, namespace: `skinfarm:${name}`, throwOnErrors: true, serialize: identity, deserialize: identity as never })
      // The Redis adapter prefixes keys itself ("skinfarm:name::key"); keyv must not add another.
      : new Keyv({ store, namespace: `skinfarm:${name}`, useKeyPrefix: false, throwOnErrors: true });
    keyv.on('error', (err: unknown) => this.failed(name, err));
    const ttl = ttlSeconds ?? this.options.ttl[name as keyof CacheTtls];
    if (ttl === undefined) throw new Error(`cache namespace ${name} needs a TTL`);
    const ns = new CacheNamespace<T>(this, name, keyv, ttl, staleSeconds, shared ? null : this.l1, this.memory);
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

  /** Local counters plus entries and bytes (the LRU's, or the Redis database's). */
  async stats(): Promise<CacheStats> {
    let entries = this.memory?.size ?? 0;
    let bytes: number | null = this.memory?.bytes ?? null;
    const redis = this.options.redis;
    if (redis) {
      try {
        entries = redis.isReady ? await redis.dbSize() : 0;
        const info = redis.isReady ? await redis.info('memory') : '';
        const used = /used_memory:(\d+)/.exec(info);
        bytes = used ? Number(used[1]) : null;
      } catch {
        entries = 0;
      }
    }
    const degraded = !!redis && !redis.isReady;
    return { enabled: true, backend: this.backend, degraded, entries, bytes, ...this.counters };
  }
}
