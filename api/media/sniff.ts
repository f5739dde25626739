// What a media file really is, from its first bytes (magic numbers), whatever its name says.
import type { Container } from './formats.ts';

/** Enough for every signature below (an ftyp box lists its brands within its first 64 bytes). */
export const SNIFF_BYTES = 64;

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
const EBML_MAGIC = Buffer.from([0x1a, 0x45, 0xdf, 0xa3]);
const AVIF_BRANDS = new Set(['avif', 'avis']);
/** HEIF still images other than AVIF (HEIC and friends): not served. */
const HEIF_BRANDS = new Set(['heic', 'heix', 'heim', 'heis', 'hevc', 'hevx', 'mif1', 'msf1']);
/** First box of QuickTime files written before the ftyp box existed. */
const OLD_QUICKTIME_BOXES = new Set(['moov', 'mdat', 'wide', 'free', 'skip', 'pnot']);

/** Major and compatible brands of an ftyp box at the start of `head`. */
export function ftypBrands(head: Buffer): string[] {
  const end = Math.min(head.readUInt32BE(0), head.length);
  const brands = [head.toString('latin1', 8, 12)];
  for (let at = 16; at + 4 <= end; at += 4) brands.push(head.toString('latin1', at, at + 4));
  return brands;
}

function isobmff(head: Buffer): Container | undefined {
  const type = head.toString('latin1', 4, 8);
  if (type !== 'ftyp') return OLD_QUICKTIME_BOXES.has(type) ? 'mp4' : undefined;
  const brands = ftypBrands(head);
  if (brands.some((brand) => AVIF_BRANDS.has(brand))) return 'avif';
  if (brands.some((brand) => HEIF_BRANDS.has(brand))) return undefined;
  return 'mp4';
}

export function sniffContainer(head: Buffer): Container | undefined {
  if (head.length < 12) return undefined;
  if (head.subarray(0, 8).equals(PNG_SIGNATURE)) return 'png';
  if (head[0] === 0xff && head[1] === 0xd8 && head[2] === 0xff) return 'jpg';
  if (/^GIF8[79]a$/.test(head.toString('latin1', 0, 6))) return 'gif';
  if (head.toString('latin1', 0, 4) === 'RIFF' && head.toString('latin1', 8, 12) === 'WEBP') return 'webp';
  if (head.subarray(0, 4).equals(EBML_MAGIC)) return 'webm';
  return isobmff(head);
}
