// A Map bounded in entries and in bytes that forgets its least recently used entries: the
// in-memory cache, and every other bounded table of the service and of the fake upstream.
/** Rough size of a stored value: exact for bytes and text, JSON length for the rest. */
function sizeOf(value: unknown): number {
  if (ArrayBuffer.isView(value)) return value.byteLength;
  if (typeof value === 'string') return value.length;
  if (value === null || typeof value !== 'object') return 8;
  let total = 0;
  for (const item of Object.values(value)) total += sizeOf(item) + 16;
  return total;
}

/**
 * A Map that forgets its least recently used entries beyond a bound in entries and one in bytes
 * (the memory store behind keyv's API in api/cache.ts, and smaller tables). It keeps values as
 * objects (no serialisation), so a cached image is the same Buffer each time. An entry larger
 * than the whole byte bound is not kept.
 */
export class LruMap<V> extends Map<string, V> {
  readonly limit: number;
  readonly maxBytes: number;
  /** Per key: its size, and the count of sets when it last moved to the newest end. */
  private meta = new Map<string, { size: number; tick: number }>();
  private sets = 0;
  /**
   * Walks the keys from the oldest, kept from one eviction to the next. V8 leaves a deleted
   * entry as a hole until the table is rebuilt, so `keys().next()` afresh skipped every hole
   * left at the front by earlier evictions: 32 us per eviction at 50,000 entries, 116 us at
   * 200,000, where this skips each hole once. All before its position has been evicted, and a
   * moved key is added at the end, so its next key is always the oldest.
   */
  private oldest: MapIterator<string> | null = null;
  /** What the entries hold, as `sizeOf` counts it plus their keys; counted only when bounded in bytes. */
  bytes = 0;
  constructor(limit: number, maxBytes = Infinity) {
    super();
    this.limit = limit;
    this.maxBytes = maxBytes;
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
    this.oldest = null;
  }
  override get(key: string): V | undefined {
    const value = super.get(key);
    const meta = value === undefined ? undefined : this.meta.get(key);
    // Fewer new entries since its last move than a quarter of the entries: it is still far from
    // eviction. Moving hot keys on every read was a measurable share of a cached image's cost.
    if (meta && this.sets - meta.tick > this.size >> 2) {
      super.delete(key);
      super.set(key, value!);
      meta.tick = this.sets;
    }
    return value;
  }
  override set(key: string, value: V): this {
    this.delete(key);
    super.set(key, value);
    // Sized only where bytes are bounded: a table bounded in entries may hold anything (a thrown
    // error and its cycles).
    const size = this.maxBytes === Infinity ? 0 : sizeOf(value) + key.length;
    this.meta.set(key, { size, tick: ++this.sets });
    this.bytes += size;
    this.evict();
    return this;
  }

  /** Gives an entry the size its value turned out to have (a promise that has settled). */
  resize(key: string, size: number): void {
    const meta = this.meta.get(key);
    if (!meta || this.maxBytes === Infinity) return;
    this.bytes += size + key.length - meta.size;
    meta.size = size + key.length;
    this.evict();
  }

  private evict(): void {
    while (this.size > this.limit || this.bytes > this.maxBytes) {
      this.oldest ??= this.keys();
      const oldest = this.oldest.next();
      if (oldest.done) {
        // Spent: V8 ends an iterator for good once it has run out. A new walk, unless empty.
        this.oldest = null;
        if (this.size === 0) break;
        continue;
      }
      this.delete(oldest.value);
    }
  }
}
