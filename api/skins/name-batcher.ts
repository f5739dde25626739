// Merges single name lookups that arrive within a few milliseconds into bulk calls: one upstream
// call then answers up to `chunk` names. A lone name still uses the single-name endpoint, and a
// name that comes after a quiet window goes at once: merging pays only under load, and waiting
// for company that does not come made every quiet lookup a window slower.
import type { NameHit } from './types.ts';

export interface NameSource {
  nameToId(name: string): Promise<NameHit | null>;
  namesToIds(names: string[]): Promise<NameHit[]>;
}

interface Waiter { name: string; resolve: (hit: NameHit | null) => void; reject: (error: unknown) => void }

export class NameBatcher {
  private readonly source: NameSource;
  private readonly windowMs: number;
  private readonly chunk: number;
  private queue: Waiter[] = [];
  private timer: NodeJS.Timeout | null = null;
  /** When the latest call went out (performance.now()). */
  private lastSentAt = -Infinity;

  constructor(source: NameSource, windowMs: number, chunk: number) {
    this.source = source;
    this.windowMs = windowMs;
    this.chunk = chunk;
  }

  /**
   * One name's hit. `bulk` is for names that arrive together (a batch request): they are merged
   * even when single lookups are not (NAME_BATCH_WINDOW_MS=0).
   */
  lookup(name: string, bulk = false): Promise<NameHit | null> {
    const windowMs = bulk ? Math.max(this.windowMs, 1) : this.windowMs;
    if (windowMs <= 0) return this.source.nameToId(name);
    const now = performance.now();
    if (!bulk && !this.timer && now - this.lastSentAt >= windowMs) {
      this.lastSentAt = now;
      return this.source.nameToId(name);
    }
    return new Promise((resolve, reject) => {
      this.queue.push({ name, resolve, reject });
      if (this.queue.length >= this.chunk) this.flush(windowMs);
      else this.timer ??= setTimeout(() => this.flush(windowMs), windowMs);
    });
  }

  private flush(windowMs: number): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.lastSentAt = performance.now();
    const batch = this.queue.splice(0, this.chunk);
    if (this.queue.length > 0) this.timer = setTimeout(() => this.flush(windowMs), windowMs);
    if (batch.length === 1) {
      const [only] = batch;
      this.source.nameToId(only.name).then(only.resolve, only.reject);
      return;
    }
    this.source.namesToIds(batch.map((w) => w.name)).then((hits) => {
      const byName = new Map(hits.map((h) => [h.name.toLowerCase(), h]));
      for (const w of batch) w.resolve(byName.get(w.name.toLowerCase()) ?? null);
    }, (error) => {
      for (const w of batch) w.reject(error);
    });
  }
}
