// Read-through caching, written once for every cached upstream answer and render. The order:
// a fresh entry answers; a failure remembered for this key (the error memo) answers with the
// stale entry or is thrown again without calling; otherwise one call per key at a time
// (coalesced) is made and its answer stored (null answers with their own negative TTL); when
// that call fails the failure is remembered and the stale entry, if any, answers.
import type { Logger } from '../shared/log.ts';
import type { CacheNamespace } from './cache.ts';
import { Coalescer } from './coalesce.ts';
import { LruMap } from '../shared/lru-map.ts';

export type CacheState = 'HIT' | 'MISS' | 'STALE';
export interface ReadAnswer<T> { value: T; cache: CacheState }

/** Runs `produce` once across instances, or finds another instance's result with `peek`. */
export interface Exclusive {
  once<T>(key: string, produce: () => Promise<T>, peek: () => Promise<T | undefined>): Promise<T>;
}

export interface ReadThroughOptions {
  /** How long a failed call is remembered, so a failing upstream is not hammered (0 = not). */
  errorTtlMs?: number;
  /** Fresh lifetime in seconds of a null answer ("no such thing"); without it null is a value. */
  negativeTtlSeconds?: number;
  /** Where serving a stale entry is logged. */
  log?: Logger;
  /** A cross-instance lock for expensive calls (renders): one instance produces, others wait. */
  exclusive?: Exclusive;
}

/** Remembered failures at most: past it the oldest are forgotten (their next read calls again). */
const ERROR_MEMO_MAX = 10_000;

export class ReadThrough<T> {
  readonly ns: CacheNamespace<T>;
  private readonly options: ReadThroughOptions;
  private readonly inflight = new Coalescer();
  /** The latest failures by key; an expired one gives way to the next call's outcome, the oldest to the bound. */
  private readonly recentErrors = new LruMap<{ error: unknown; until: number }>(ERROR_MEMO_MAX);

  constructor(ns: CacheNamespace<T>, options: ReadThroughOptions = {}) {
    this.ns = ns;
    this.options = options;
  }

  /**
   * The answer for `key`, from the cache or from one shared `fetch`. `force` skips the fresh
   * entry (a client asked for a refetch) but still falls back to it when the refetch fails.
   * `admit` is called (and may throw) before this request starts a call of its own: a request
   * that finds the entry, or joins a call in flight, costs its client nothing.
   */
  async get(key: string, fetch: () => Promise<T>, { force = false, admit }: { force?: boolean; admit?: () => Promise<void> } = {}): Promise<ReadAnswer<T>> {
    const entry = await this.ns.get(key);
    if (!force && entry?.freshness === 'fresh') return { value: entry.value, cache: 'HIT' };
    const stale = (error: unknown): ReadAnswer<T> => {
      // A stale "no such thing" is not served on error: the failure says more.
      if (!entry || entry.value === null) throw error;
      this.options.log?.warn('serving stale entry after upstream failure', { key: `${this.ns.name}:${key}`, code: (error as { code?: string }).code });
      return { value: entry.value, cache: 'STALE' };
    };
    const recent = this.recentErrors.get(key);
    if (recent && recent.until > Date.now()) return stale(recent.error);
    if (admit && !this.inflight.current(key)) await admit();
    return this.inflight.run(key, async () => {
      try {
        const value = await this.produce(key, fetch);
        this.recentErrors.delete(key);
        return { value, cache: 'MISS' as const };
      } catch (error) {
        this.remember(key, error);
        return stale(error);
      }
    });
  }

  /** The call in flight for `key`, if any (to share a refetch already running). */
  current(key: string): Promise<ReadAnswer<T>> | undefined {
    return this.inflight.current<ReadAnswer<T>>(key);
  }

  private produce(key: string, fetch: () => Promise<T>): Promise<T> {
    const fetchAndStore = async () => {
      const value = await fetch();
      const negative = value === null && this.options.negativeTtlSeconds !== undefined;
      await this.ns.set(key, value, negative ? this.options.negativeTtlSeconds : this.ns.ttlSeconds);
      return value;
    };
    const exclusive = this.options.exclusive;
    if (!exclusive) return fetchAndStore();
    return exclusive.once(key, fetchAndStore, async () => (await this.ns.get(key))?.value);
  }

  private remember(key: string, error: unknown): void {
    const ttl = this.options.errorTtlMs ?? 0;
    if (ttl <= 0) return;
    // A bounded LRU: the first version swept the whole memo for expired failures on each new one
    // once it held 10,000, which cost 250-420 us per failure instead of 25 when all were live.
    this.recentErrors.set(key, { error, until: Date.now() + ttl });
  }
}
