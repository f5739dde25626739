// The distinct prefix terms of the in-memory index (user names, messenger names, full names:
// lookup-keys.ts `term`), sorted, for `prefix*` queries: one UTF-8 buffer of the terms end to end
// and one offset each, about the terms' own length plus 4 bytes a term. A prefix is found by binary
// search, and the terms starting with it follow it; their rows come from the postings.

/** Distinct terms read at most for one prefix query: the rest are left out, and the answer says its total is a floor. */
export const MAX_PREFIX_TERMS = 10_000;

export class TermsBuilder {
  private readonly terms = new Set<string>();

  add(term: string): void {
    this.terms.add(term);
  }

  build(): SortedTerms {
    // Code-unit order, as the binary search compares; terms sharing a prefix sit together in it.
    const sorted = [...this.terms].sort();
    this.terms.clear();
    let bytes = 0;
    for (const t of sorted) bytes += Buffer.byteLength(t);
    const text = Buffer.allocUnsafe(bytes);
    const starts = new Uint32Array(sorted.length + 1);
    let at = 0;
    sorted.forEach((t, i) => {
      starts[i] = at;
      at += text.write(t, at);
    });
    starts[sorted.length] = at;
    return new SortedTerms(text, starts);
  }
}

export class SortedTerms {
  private readonly text: Buffer;
  private readonly starts: Uint32Array;

  constructor(text: Buffer, starts: Uint32Array) {
    this.text = text;
    this.starts = starts;
  }

  get size(): number {
    return this.starts.length - 1;
  }

  get bytes(): number {
    return this.text.byteLength + this.starts.byteLength;
  }

  private at(i: number): string {
    return this.text.toString('utf8', this.starts[i], this.starts[i + 1]);
  }

  /** The terms starting with `prefix`, in order, `max` at most; `capped` when more follow. */
  startingWith(prefix: string, max = MAX_PREFIX_TERMS): { terms: string[]; capped: boolean } {
    let lo = 0;
    let hi = this.size;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.at(mid) < prefix) lo = mid + 1;
      else hi = mid;
    }
    const terms: string[] = [];
    for (let i = lo; i < this.size; i++) {
      const t = this.at(i);
      if (!t.startsWith(prefix)) break;
      if (terms.length === max) return { terms, capped: true };
      terms.push(t);
    }
    return { terms, capped: false };
  }
}
