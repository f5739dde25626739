// Read-through caching, written once for every cached upstream answer and render. The order:
// a fresh entry answers; a failure remembered for this key (the error memo) answers with the
// stale entry or is thrown again without calling; otherwise one call per key at a time
// (coalesced) is made and its answer stored (null answers with their own negative TTL); when
// that call fails the failure is remembered and the stale entry, if any, answers. With
// `staleWaitMs`, a stale entry also answers once the call has run that long: the call goes on
// and stores its answer in the background, so a slow or hung upstream never holds up a request
// that has something to answer.
import type { Logger } from '../shared/log.ts';
import { StateLog } from '../shared/log-state.ts';
import type { CacheHit, CacheNamespace } from './cache.ts';
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
  /** How long a request with a stale entry waits for the call before it answers that entry; none = until the call ends. */
  staleWaitMs?: number;
  /** Where serving stale entries is logged (once, then a count per interval). */
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
  /** When each call in flight started (performance.now()): a stale entry answers `staleWaitMs` after. */
  private readonly startedAt = new Map<string, number>();
  /** The latest failures by key; an expired one gives way to the next call's outcome, the oldest to the bound. */
  private readonly recentErrors = new LruMap<{ error: unknown; until: number }>(ERROR_MEMO_MAX);
  private readonly staleLog: StateLog | null;

  constructor(ns: CacheNamespace<T>, options: ReadThroughOptions = {}) {
    this.ns = ns;
    this.options = options;
    this.staleLog = options.log ? new StateLog(options.log, 'serving stale entries: the upstream failed or is slow') : null;
  }

  /**
   * The answer for `key`, from the cache or from one shared `fetch`. `force` skips the fresh
   * entry (a client asked for a refetch) but still falls back to it when the refetch fails.
   * `admit` is called (and may throw) before this request starts a call of its own: a request
   * that finds the entry, or joins a call in flight, costs its client nothing; one refused by
   * `admit` is answered the stale entry when there is one.
   */
  async get(key: string, fetch: () => Promise<T>, { force = false, admit }: { force?: boolean; admit?: () => Promise<void> } = {}): Promise<ReadAnswer<T>> {
    const entry = await this.ns.get(key);
    if (!force && entry?.freshness === 'fresh') return { value: entry.value, cache: 'HIT' };
    const recent = this.recentErrors.get(key);
    if (recent && recent.until > Date.now()) return this.stale(key, entry, recent.error);
    if (admit && !this.inflight.current(key)) {
      // A client refused its refetch (its own budget, or only the reserve left) still has the
      // stale entry, which costs the upstream nothing; without one it gets the refusal.
      try {
        await admit();
      } catch (error) {
        return this.stale(key, entry, error);
      }
    }
    const call = this.call(key, fetch);
    try {
      const waitMs = this.options.staleWaitMs;
      // A stale "no such thing" is not served (see stale()): it waits for the call.
      if (waitMs === undefined || !entry || entry.value === null) return { value: await call, cache: 'MISS' };
      const answered = await this.within(key, call, waitMs);
      return answered ? { value: answered.value, cache: 'MISS' } : this.stale(key, entry, undefined, 'slow');
    } catch (error) {
      return this.stale(key, entry, error);
    }
  }

  /** The call in flight for `key`, if any (to share a refetch already running), with get()'s fallback. */
  current(key: string): Promise<ReadAnswer<T>> | undefined {
    const call = this.inflight.current<T>(key);
    return call?.then((value) => ({ value, cache: 'MISS' as const }), async (error: unknown) => this.stale(key, await this.ns.get(key), error));
  }

  /** The one call for `key` (joined when in flight); its failure is remembered, its answer stored. */
  private call(key: string, fetch: () => Promise<T>): Promise<T> {
    return this.inflight.run(key, async () => {
      this.startedAt.set(key, performance.now());
      try {
        const value = await this.produce(key, fetch);
        this.recentErrors.delete(key);
        return value;
      } catch (error) {
        this.remember(key, error);
        throw error;
      } finally {
        this.startedAt.delete(key);
      }
    });
  }

  /** The call's answer if it comes within `waitMs` of the call's start; undefined once it has not. */
  private async within(key: string, call: Promise<T>, waitMs: number): Promise<{ value: T } | undefined> {
    const left = waitMs - (performance.now() - (this.startedAt.get(key) ?? performance.now()));
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<undefined>((resolve) => { timer = setTimeout(() => resolve(undefined), Math.max(0, left)); });
    try {
      // The race keeps a handler on the call: its failure after the stale answer is no unhandled rejection.
      return await Promise.race([call.then((value) => ({ value })), late]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** The stale entry for a failed (or slow) call; the failure itself when there is none to serve. */
  private stale(key: string, entry: CacheHit<T> | undefined, error: unknown, code = (error as { code?: string } | undefined)?.code): ReadAnswer<T> {
    // A stale "no such thing" is not served on error: the failure says more.
    if (!entry || entry.value === null) throw error;
    this.staleLog?.hit({ namespace: this.ns.name, key, code });
    return { value: entry.value, cache: 'STALE' };
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
