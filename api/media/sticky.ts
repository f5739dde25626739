// Keeps the file a client got from a random address for a short while, so that a video player's
// range requests on that same address (reading the index at the end, seeking) keep reading the
// same file instead of a new random one each time. Keyed by client address, User-Agent and the
// whole selection; each use extends the entry; bounded, the least recently used go first.
import { createHash } from 'node:crypto';
import type { Context } from 'koa';
import type { Selection } from './selector.ts';
import { LruMap } from '../../shared/lru-map.ts';

export class StickyPicks {
  private readonly ttlMs: number;
  /** Key digest -> file id and expiry (ms), the least recently used forgotten first. */
  private readonly entries: LruMap<{ id: string; until: number }>;

  constructor(ttlSeconds: number, maxEntries: number) {
    this.ttlMs = ttlSeconds * 1000;
    this.entries = new LruMap(maxEntries);
  }

  get enabled(): boolean {
    return this.ttlMs > 0;
  }

  /** One client's one selection; a digest, so a long User-Agent costs no memory. */
  key(ctx: Context, selection: Selection): string {
    const { selector, alias, orientation, filters, seed } = selection;
    const parts = [ctx.ip, ctx.get('User-Agent'), selector, alias, orientation ?? '', seed ?? '', JSON.stringify(filters)];
    return createHash('sha256').update(parts.join('\n')).digest('base64url').slice(0, 22);
  }

  /** The file id given to this key lately; the entry lives on from now. */
  get(key: string, now = Date.now()): string | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.until <= now) {
      this.entries.delete(key);
      return undefined;
    }
    entry.until = now + this.ttlMs;
    return entry.id;
  }

  remember(key: string, id: string, now = Date.now()): void {
    if (this.enabled) this.entries.set(key, { id, until: now + this.ttlMs });
  }
}
