// Displayed size of the video track of an MP4/MOV file: the tkhd box gives the presentation
// width and height and a matrix; a quarter-turn matrix (phones filming upright) swaps them.
import type { ByteSource } from './byte-source.ts';
import { boxAt, child, children, type Box } from './isobmff.ts';
import type { Dimensions } from './types.ts';

/** Largest moov box read into memory; real ones are kilobytes to a few megabytes. */
const MAX_MOOV_BYTES = 64 * 1024 * 1024;
const MAX_TOP_LEVEL_BOXES = 10_000;

interface Track { handler: string | undefined; size: Dimensions }

function readTrack(buf: Buffer, trak: Box): Track | undefined {
  const tkhd = child(buf, trak, 'tkhd');
  if (!tkhd) return undefined;
  const version = buf[tkhd.start];
  const matrix = tkhd.start + (version === 1 ? 52 : 40);
  const dims = matrix + 36;
  if (dims + 8 > tkhd.end) return undefined;
  // Width and height are 16.16 fixed point; the matrix's a, b, c, d entries too.
  let size = { width: Math.round(buf.readUInt32BE(dims) / 65536), height: Math.round(buf.readUInt32BE(dims + 4) / 65536) };
  const [a, b, c, d] = [0, 4, 12, 16].map((at) => buf.readInt32BE(matrix + at));
  if (a === 0 && d === 0 && b !== 0 && c !== 0) size = { width: size.height, height: size.width };
  const mdia = child(buf, trak, 'mdia');
  const hdlr = mdia && child(buf, mdia, 'hdlr');
  const handler = hdlr && hdlr.start + 12 <= hdlr.end ? buf.toString('latin1', hdlr.start + 8, hdlr.start + 12) : undefined;
  return { handler, size };
}

function videoTrackSize(moov: Buffer): Dimensions | undefined {
  const tracks: Track[] = [];
  for (const box of children(moov, { start: 0, end: moov.length })) {
    if (box.type !== 'trak') continue;
    const track = readTrack(moov, box);
    if (track && track.size.width > 0 && track.size.height > 0) tracks.push(track);
  }
  // The video handler wins; without one, any track with a picture size (old QuickTime files).
  return (tracks.find((t) => t.handler === 'vide') ?? tracks[0])?.size;
}

export function mp4Dimensions(source: ByteSource): Dimensions | undefined {
  let offset = 0;
  for (let n = 0; n < MAX_TOP_LEVEL_BOXES && offset + 8 <= source.size; n++) {
    const head = source.read(offset, 16);
    const box = boxAt(head, 0, source.size - offset);
    if (!box) return undefined;
    if (box.type === 'moov') {
      const length = box.end - box.start;
      if (length > MAX_MOOV_BYTES) return undefined;
      return videoTrackSize(source.read(offset + box.start, length));
    }
    offset += box.end;
  }
  return undefined;
}
