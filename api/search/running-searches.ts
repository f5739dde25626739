// Searches running per API key in this instance. A search holds the database pool for up to ten
// values at once and the players source for up to eleven lookups, so a key firing searches in
// parallel could fill SEARCH_DATABASE_POOL and its queue and time out every other key's searches;
// past SEARCH_KEY_CONCURRENCY its next one is refused at once instead. A bulk request counts as
// the queries it runs at once, an export as one search while it streams.
import { ApiError } from '../../shared/errors.ts';

export class RunningSearches {
  private readonly perKey: number;
  private readonly running = new Map<string, number>();

  constructor(perKey: number) {
    this.perKey = perKey;
  }

  /** Counts a search of `key` as running, or throws 429 when it has `perKey` already; call the result when it ends. */
  enter(key: string): () => void {
    return this.enterUpTo(key, 1).release;
  }

  /**
   * Takes up to `wanted` of the key's free places, at least one (else 429): a bulk request runs as
   * many of its queries at once as it got places, so it never holds more of the database pool than
   * that many searches of the key would.
   */
  enterUpTo(key: string, wanted: number): { places: number; release: () => void } {
    const now = this.running.get(key) ?? 0;
    if (now >= this.perKey) {
      throw new ApiError('rate_limited', { detail: { zh: `该密钥已有 ${now} 个搜索正在进行`, en: `this key has ${now} searches running` }, retryAfter: 1 });
    }
    const places = Math.min(wanted, this.perKey - now);
    this.running.set(key, now + places);
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      const left = (this.running.get(key) ?? places) - places;
      if (left > 0) this.running.set(key, left);
      else this.running.delete(key);
    };
    return { places, release };
  }
}
