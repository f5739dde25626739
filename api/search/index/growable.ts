// An append-only Uint32Array that doubles when full: compact columns for millions of rows.

export class GrowableU32 {
  data = new Uint32Array(1024);
  length = 0;

  push(v: number): void {
    if (this.length === this.data.length) {
      const next = new Uint32Array(this.data.length * 2);
      next.set(this.data);
      this.data = next;
    }
    this.data[this.length++] = v;
  }
}
