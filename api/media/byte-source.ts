// Random access to a file's bytes, so the video parsers read box and element headers where they
// are instead of loading the whole file (a video's index may sit at its end). Reads are
// synchronous: see probe.ts for why.
import fs from 'node:fs';

export interface ByteSource {
  size: number;
  /** Up to `length` bytes from `position` (fewer at the end of the file). */
  read(position: number, length: number): Buffer;
}

export function fileSource(fd: number, size: number): ByteSource {
  return {
    size,
    read(position, length) {
      const buf = Buffer.allocUnsafe(Math.max(0, Math.min(length, size - position)));
      return buf.subarray(0, fs.readSync(fd, buf, 0, buf.length, position));
    },
  };
}

export function bufferSource(buf: Buffer): ByteSource {
  return { size: buf.length, read: (position, length) => buf.subarray(position, position + length) };
}
