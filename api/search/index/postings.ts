// A compact inverted index from 64-bit value fingerprints to record numbers: three parallel
// Uint32Arrays grouped by hash bucket (CSR layout), about 16 bytes per indexed value instead of
// a JavaScript Map entry per distinct string. Two independent 32-bit lanes make two different
// values share a fingerprint about once in 2^64 pairs; the caller checks returned rows anyway.
import { GrowableU32 } from './growable.ts';

/** Two 32-bit lanes of a multiplicative string hash with a final avalanche on each. */
export function fingerprint(text: string): [number, number] {
  let a = 0x811c9dc5;
  let b = 0x27d4eb2f;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x5bd1e995);
    b ^= b >>> 15;
  }
  a ^= a >>> 16; a = Math.imul(a, 0x85ebca6b); a ^= a >>> 13; a = Math.imul(a, 0xc2b2ae35); a ^= a >>> 16;
  b ^= b >>> 16; b = Math.imul(b, 0x7feb352d); b ^= b >>> 15; b = Math.imul(b, 0x846ca68b); b ^= b >>> 16;
  return [a >>> 0, b >>> 0];
}

export class PostingsBuilder {
  private readonly lo = new GrowableU32();
  private readonly hi = new GrowableU32();
  private readonly ids = new GrowableU32();

  add(text: string, id: number): void {
    const [lo, hi] = fingerprint(text);
    this.lo.push(lo);
    this.hi.push(hi);
    this.ids.push(id);
  }

  get size(): number {
    return this.ids.length;
  }

  /** Counting sort by bucket: linear time, and ids stay in insertion order within a value. */
  build(): Postings {
    const n = this.ids.length;
    let buckets = 1024;
    while (buckets < n) buckets *= 2;
    const mask = buckets - 1;
    const starts = new Uint32Array(buckets + 1);
    for (let i = 0; i < n; i++) starts[(this.lo.data[i] & mask) + 1]++;
    for (let b = 0; b < buckets; b++) starts[b + 1] += starts[b];
    const cursor = starts.slice(0, buckets);
    const lo = new Uint32Array(n);
    const hi = new Uint32Array(n);
    const ids = new Uint32Array(n);
    for (let i = 0; i < n; i++) {
      const at = cursor[this.lo.data[i] & mask]++;
      lo[at] = this.lo.data[i];
      hi[at] = this.hi.data[i];
      ids[at] = this.ids.data[i];
    }
    return new Postings(starts, lo, hi, ids);
  }
}

export class Postings {
  private readonly starts: Uint32Array;
  private readonly lo: Uint32Array;
  private readonly hi: Uint32Array;
  private readonly ids: Uint32Array;

  constructor(starts: Uint32Array, lo: Uint32Array, hi: Uint32Array, ids: Uint32Array) {
    this.starts = starts;
    this.lo = lo;
    this.hi = hi;
    this.ids = ids;
  }

  /** Record numbers holding `text`, in the order they were added. */
  find(text: string): number[] {
    const [lo, hi] = fingerprint(text);
    const bucket = lo & (this.starts.length - 2);
    const out: number[] = [];
    for (let i = this.starts[bucket]; i < this.starts[bucket + 1]; i++) {
      if (this.lo[i] === lo && this.hi[i] === hi) out.push(this.ids[i]);
    }
    return out;
  }

  /**
   * A page of the record numbers holding `text` (`limit` after passing over `offset`) and how
   * many hold it: no array of them all, so a value in half the rows (a domain) costs a scan of
   * its bucket, not a copy of it.
   */
  page(text: string, offset: number, limit: number): { ids: number[]; total: number } {
    const [lo, hi] = fingerprint(text);
    const bucket = lo & (this.starts.length - 2);
    const ids: number[] = [];
    let total = 0;
    for (let i = this.starts[bucket]; i < this.starts[bucket + 1]; i++) {
      if (this.lo[i] !== lo || this.hi[i] !== hi) continue;
      if (total >= offset && ids.length < limit) ids.push(this.ids[i]);
      total += 1;
    }
    return { ids, total };
  }

  get bytes(): number {
    return this.starts.byteLength + this.lo.byteLength + this.hi.byteLength + this.ids.byteLength;
  }
}
