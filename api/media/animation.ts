// Whether a file moves, from the head of the file the scanner reads anyway (no decode): videos
// always; GIF with a second frame or a looping extension; PNG with an APNG acTL chunk; WebP with
// the VP8X animation flag; AVIF with the image-sequence brand. JPEG never.
import type { Container } from './formats.ts';
import { ftypBrands } from './sniff.ts';

const LOOP_EXTENSIONS = new Set(['NETSCAPE2.0', 'ANIMEXTS1.0']);

/** Past a run of GIF data sub-blocks (each a length byte and that many bytes; a 0 ends the run). */
function skipSubBlocks(buf: Buffer, offset: number): number {
  while (offset < buf.length && buf[offset] !== 0) offset += buf[offset] + 1;
  return offset + 1;
}

/** A colour table's bytes from its packed flags byte (present when the top bit is set). */
const colourTable = (flags: number) => (flags & 0x80 ? 3 * 2 ** ((flags & 7) + 1) : 0);

function gifAnimated(buf: Buffer): boolean {
  if (buf.length < 13) return false;
  let offset = 13 + colourTable(buf[10]);
  let frames = 0;
  while (offset < buf.length) {
    const block = buf[offset];
    if (block === 0x2c) {
      if (++frames > 1 || offset + 10 > buf.length) return frames > 1;
      // Descriptor, local colour table, LZW code size byte, then the frame's data.
      offset = skipSubBlocks(buf, offset + 10 + colourTable(buf[offset + 9]) + 1);
    } else if (block === 0x21) {
      // An application extension that loops the animation comes before its frames.
      if (buf[offset + 1] === 0xff && buf[offset + 2] === 11 && LOOP_EXTENSIONS.has(buf.toString('latin1', offset + 3, offset + 14))) return true;
      offset = skipSubBlocks(buf, offset + 2);
    } else {
      return false;
    }
  }
  // The head ended inside a first frame (over 64 KB) and no loop extension came before it: still.
  return false;
}

/** APNG: an acTL chunk before the first IDAT. */
function pngAnimated(buf: Buffer): boolean {
  for (let offset = 8; offset + 8 <= buf.length;) {
    const type = buf.toString('latin1', offset + 4, offset + 8);
    if (type === 'acTL') return true;
    if (type === 'IDAT') return false;
    offset += 12 + buf.readUInt32BE(offset);
  }
  return false;
}

const webpAnimated = (buf: Buffer) => buf.length > 20 && buf.toString('latin1', 12, 16) === 'VP8X' && (buf[20] & 0x02) !== 0;

const READERS: Record<Container, (head: Buffer) => boolean> = {
  gif: gifAnimated,
  png: pngAnimated,
  webp: webpAnimated,
  avif: (head) => ftypBrands(head).includes('avis'),
  jpg: () => false,
  mp4: () => true,
  webm: () => true,
};

export function isAnimated(head: Buffer, container: Container): boolean {
  return READERS[container](head);
}
