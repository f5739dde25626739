// PostgreSQL's binary COPY format (the manual's COPY, "Binary Format"): a header, then per row a
// field count and each field as its length and its bytes in network order, then a trailer. The
// import writes its rows this way: nothing to escape, keys as 8 bytes rather than 20 digits
// PostgreSQL must parse back, and the rows of a batch written straight into one buffer.

/** Starts a COPY stream: signature, no flags, no header extension. */
export const COPY_HEADER = Uint8Array.from([...Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1'), 0, 0, 0, 0, 0, 0, 0, 0]);
/** Ends it: a field count of -1. */
export const COPY_TRAILER = Uint8Array.from([0xff, 0xff]);

/** Rows of binary COPY, written into a buffer that grows as needed. */
export class CopyRows {
  private buffer: Buffer;
  private at = 0;

  constructor(capacity = 1 << 16) {
    // Its own memory (not Node's shared pool), so a worker thread can hand it over.
    this.buffer = Buffer.allocUnsafeSlow(capacity);
  }

  /** Starts a row of `fields` fields. */
  row(fields: number): this {
    this.room(2);
    this.at = this.buffer.writeInt16BE(fields, this.at);
    return this;
  }

  int2(value: number): this {
    this.room(6);
    this.at = this.buffer.writeInt32BE(2, this.at);
    this.at = this.buffer.writeInt16BE(value, this.at);
    return this;
  }

  int4(value: number): this {
    this.room(8);
    this.at = this.buffer.writeInt32BE(4, this.at);
    this.at = this.buffer.writeInt32BE(value, this.at);
    return this;
  }

  /** A bigint given as its two 32-bit halves (the high one's sign bit is the value's). */
  int8(high: number, low: number): this {
    this.room(12);
    this.at = this.buffer.writeInt32BE(8, this.at);
    this.at = this.buffer.writeUInt32BE(high >>> 0, this.at);
    this.at = this.buffer.writeUInt32BE(low >>> 0, this.at);
    return this;
  }

  /** Text as UTF-8 (PostgreSQL refuses a NUL in text, as in the text format). */
  text(value: string): this {
    this.room(4 + value.length * 3);
    const length = this.buffer.write(value, this.at + 4, 'utf8');
    this.buffer.writeInt32BE(length, this.at);
    this.at += 4 + length;
    return this;
  }

  /** What was written (a view of this writer's memory: take it once, when done). */
  bytes(): Uint8Array {
    return this.buffer.subarray(0, this.at);
  }

  private room(bytes: number): void {
    if (this.at + bytes <= this.buffer.length) return;
    const grown = Buffer.allocUnsafeSlow(Math.max(this.buffer.length * 2, this.at + bytes));
    this.buffer.copy(grown, 0, 0, this.at);
    this.buffer = grown;
  }
}
