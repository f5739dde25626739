// A set with O(1) add, delete and uniform random pick: an array, and each item's position kept
// in a numeric field of the item itself (a Map of positions cost more memory than the file
// entries did). Deleting moves the last item into the hole, so no request ever scans or sorts.

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

  /** A uniformly random item; undefined when empty. `random` returns a number in [0, 1). */
  pick(random: () => number = Math.random): T | undefined {
    return this.items.length === 0 ? undefined : this.items[Math.floor(random() * this.items.length)];
  }
}
