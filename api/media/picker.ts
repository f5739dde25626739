// A set with O(1) add, delete and uniform random pick: an array, and each item's position kept
// in a numeric field of the item itself (a Map of positions cost more memory than the file
// entries did). Deleting moves the last item into the hole, so a plain pick never scans or sorts;
// `choose` picks several at once, over several bags, filtered or seeded (those read the bags whole).
import { createHash } from 'node:crypto';

export class RandomBag<K extends string, T extends Record<K, number>> {
  private readonly items: T[] = [];
  private readonly slot: K;

  /** `slot`: the item's field that holds its position here (one field per bag an item can be in). */
  constructor(slot: K) {
    this.slot = slot;
  }

  get size(): number {
    return this.items.length;
  }

  has(item: T): boolean {
    return this.items[item[this.slot]] === item;
  }

  add(item: T): void {
    if (this.has(item)) return;
    (item as Record<K, number>)[this.slot] = this.items.length;
    this.items.push(item);
  }

  delete(item: T): void {
    if (!this.has(item)) return;
    const position = item[this.slot];
    const last = this.items.pop()!;
    if (last !== item) {
      this.items[position] = last;
      (last as Record<K, number>)[this.slot] = position;
    }
    (item as Record<K, number>)[this.slot] = -1;
  }

  /** The item at a position, 0 to size - 1 (positions change as items come and go). */
  at(position: number): T {
    return this.items[position];
  }

  /** A uniformly random item; undefined when empty. `random` returns a number in [0, 1). */
  pick(random: () => number = Math.random): T | undefined {
    return this.items.length === 0 ? undefined : this.items[Math.floor(random() * this.items.length)];
  }
}

/** What a pick of several files reads of a set: its size and its items by position. */
export interface Pool<T> {
  readonly size: number;
  at(position: number): T;
}

/** Several pools read as one (a pick over many categories): O(pools) per position read. */
function joined<T>(pools: readonly Pool<T>[]): Pool<T> {
  return {
    size: pools.reduce((sum, pool) => sum + pool.size, 0),
    at(position) {
      for (const pool of pools) {
        if (position < pool.size) return pool.at(position);
        position -= pool.size;
      }
      throw new RangeError('position past the end of the pools');
    },
  };
}

export interface ChooseOptions<T> {
  /** Only items this accepts (filters, exclusions): the pools are then read whole. */
  accept?: (item: T) => boolean;
  /** The same items for the same seed while the pools hold the same items (rendezvous hashing). */
  seed?: string;
  random?: () => number;
}

/**
 * Up to `count` distinct items of the pools together, each item equally likely (not each pool).
 * Unfiltered and unseeded it reads `count` positions only, so a plain pick stays O(1) however
 * large the pools; filters and seeds read every item once.
 */
export function choose<T extends { id: string }>(pools: readonly Pool<T>[], count: number, { accept, seed, random = Math.random }: ChooseOptions<T> = {}): T[] {
  if (seed !== undefined) return highestScores(pools, count, seed, accept);
  let items = joined(pools);
  if (accept) {
    const kept: T[] = [];
    for (const pool of pools) {
      for (let i = 0; i < pool.size; i++) {
        const item = pool.at(i);
        if (accept(item)) kept.push(item);
      }
    }
    items = { size: kept.length, at: (position) => kept[position] };
  }
  return shuffle(distinctPositions(items.size, Math.min(count, items.size), random).map((position) => items.at(position)), random);
}

/**
 * Rendezvous hashing: each item scores a hash of the seed and its id, and the highest `count`
 * win, in order. It depends on the ids alone, not on where the index holds them, so it holds
 * across restarts and instances; adding or removing an item changes the answer only where that
 * item is (or was) among the winners. The seed is digested once; each id costs a few multiplies
 * (a SHA-256 per id took 120 ms for 100,000 files).
 */
function highestScores<T extends { id: string }>(pools: readonly Pool<T>[], count: number, seed: string, accept?: (item: T) => boolean): T[] {
  const digest = createHash('sha256').update(seed).digest();
  const [start, end] = [digest.readUInt32BE(0), digest.readUInt32BE(4)];
  // Best first; equal scores (one in four billion) are ordered by id, so the answer stays one.
  const best: { item: T; score: number }[] = [];
  const beats = (score: number, item: T, other: { item: T; score: number }) => score > other.score || (score === other.score && item.id > other.item.id);
  for (const pool of pools) {
    for (let i = 0; i < pool.size; i++) {
      const item = pool.at(i);
      if (accept && !accept(item)) continue;
      const score = scoreOf(start, end, item.id);
      if (best.length === count && !beats(score, item, best[count - 1])) continue;
      let at = best.length;
      while (at > 0 && beats(score, item, best[at - 1])) at--;
      best.splice(at, 0, { item, score });
      if (best.length > count) best.pop();
    }
  }
  return best.map(({ item }) => item);
}

/** A 32-bit hash of an id keyed by the seed's digest (MurmurHash2's step, MurmurHash3's finish). */
function scoreOf(start: number, end: number, id: string): number {
  let h = start;
  for (let i = 0; i < id.length; i++) {
    h = Math.imul(h ^ id.charCodeAt(i), 0x5bd1e995);
    h ^= h >>> 15;
  }
  h ^= end;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/** `count` distinct positions of [0, size), every set equally likely (Floyd's algorithm: `count` draws). */
function distinctPositions(size: number, count: number, random: () => number): number[] {
  const chosen = new Set<number>();
  for (let j = size - count; j < size; j++) {
    const drawn = Math.floor(random() * (j + 1));
    chosen.add(chosen.has(drawn) ? j : drawn);
  }
  return [...chosen];
}

/** Floyd's set comes out in a biased order; a list answer should not be. */
function shuffle<T>(items: T[], random: () => number): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [items[i], items[j]] = [items[j], items[i]];
  }
  return items;
}
