// A set with O(1) add, delete and uniform random pick: an array plus each item's position.
// Deleting moves the last item into the hole, so no request ever scans or sorts.

export class RandomBag<T> {
  private readonly items: T[] = [];
  private readonly positions = new Map<T, number>();

  get size(): number {
    return this.items.length;
  }

  add(item: T): void {
    if (this.positions.has(item)) return;
    this.positions.set(item, this.items.length);
    this.items.push(item);
  }

  delete(item: T): void {
    const position = this.positions.get(item);
    if (position === undefined) return;
    const last = this.items.pop()!;
    this.positions.delete(item);
    if (last !== item) {
      this.items[position] = last;
      this.positions.set(last, position);
    }
  }

  /** A uniformly random item; undefined when empty. `random` returns a number in [0, 1). */
  pick(random: () => number = Math.random): T | undefined {
    return this.items.length === 0 ? undefined : this.items[Math.floor(random() * this.items.length)];
  }
}
