// The indexed rows as UTF-8 bytes in large chunks, with where each came from. JavaScript strings
// would take two bytes per character for any row with a non-Latin-1 letter (a Cyrillic name)
// plus a header per string; here a row costs its UTF-8 length and 20 bytes of columns.
import { GrowableU32 } from './growable.ts';

const CHUNK_BYTES = 64 * 1024 * 1024;

export class RowStore {
  private readonly chunks: Buffer[] = [];
  private used = CHUNK_BYTES;
  private readonly chunk = new GrowableU32();
  private readonly offset = new GrowableU32();
  private readonly length = new GrowableU32();
  private readonly file = new GrowableU32();
  private readonly line = new GrowableU32();

  /** Stores a row; returns its number. */
  add(text: string, file: number, line: number): number {
    const bytes = Buffer.byteLength(text);
    if (this.used + bytes > (this.chunks.at(-1)?.length ?? 0)) {
      // A row longer than a chunk gets a chunk of its own size.
      this.chunks.push(Buffer.allocUnsafe(Math.max(CHUNK_BYTES, bytes)));
      this.used = 0;
    }
    this.chunks.at(-1)!.write(text, this.used);
    this.chunk.push(this.chunks.length - 1);
    this.offset.push(this.used);
    this.length.push(bytes);
    this.file.push(file);
    this.line.push(line);
    this.used += bytes;
    return this.chunk.length - 1;
  }

  text(id: number): string {
    const start = this.offset.data[id];
    return this.chunks[this.chunk.data[id]].toString('utf8', start, start + this.length.data[id]);
  }

  origin(id: number): { file: number; line: number } {
    return { file: this.file.data[id], line: this.line.data[id] };
  }

  get size(): number {
    return this.chunk.length;
  }

  get bytes(): number {
    return this.chunks.reduce((n, c) => n + c.length, 0) + 5 * this.chunk.data.byteLength;
  }
}
