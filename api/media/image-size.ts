// Displayed size of an image read from the first bytes of its file, for the formats whose
// header says it plainly (PNG, GIF, JPEG with its EXIF orientation, WebP). It answers undefined
// whenever it cannot be sure (EXIF inside PNG or WebP, a rotated or cropped AVIF, a header past
// the bytes given), and the caller asks sharp instead: reading a header is five to twenty times
// faster than a sharp metadata call, which is what lets 100,000 files index in seconds.
import type { Container } from './formats.ts';
import { child, children, fullBoxBody } from './isobmff.ts';
import { applyExifOrientation } from './orientation.ts';
import type { Dimensions } from './types.ts';

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

function fits(buf: Buffer, offset: number, length: number): boolean {
  return offset >= 0 && offset + length <= buf.length;
}

function pngSize(buf: Buffer): Dimensions | undefined {
  if (!fits(buf, 0, 24) || !buf.subarray(0, 8).equals(PNG_SIGNATURE) || buf.toString('latin1', 12, 16) !== 'IHDR') return undefined;
  const size = { width: buf.readUInt32BE(16), height: buf.readUInt32BE(20) };
  // An eXIf chunk may rotate the picture; it has to come before the first IDAT.
  for (let offset = 8; fits(buf, offset, 8);) {
    const type = buf.toString('latin1', offset + 4, offset + 8);
    if (type === 'eXIf') return undefined;
    if (type === 'IDAT') return size;
    offset += 12 + buf.readUInt32BE(offset);
  }
  return undefined;
}

function gifSize(buf: Buffer): Dimensions | undefined {
  if (!fits(buf, 0, 10) || !/^GIF8[79]a$/.test(buf.toString('latin1', 0, 6))) return undefined;
  return { width: buf.readUInt16LE(6), height: buf.readUInt16LE(8) };
}

function webpSize(buf: Buffer): Dimensions | undefined {
  if (!fits(buf, 0, 30) || buf.toString('latin1', 0, 4) !== 'RIFF' || buf.toString('latin1', 8, 12) !== 'WEBP') return undefined;
  const chunk = buf.toString('latin1', 12, 16);
  const data = 20;
  if (chunk === 'VP8 ' && buf[data + 3] === 0x9d && buf[data + 4] === 0x01 && buf[data + 5] === 0x2a) {
    return { width: buf.readUInt16LE(data + 6) & 0x3fff, height: buf.readUInt16LE(data + 8) & 0x3fff };
  }
  if (chunk === 'VP8L' && buf[data] === 0x2f) {
    const bits = buf.readUInt32LE(data + 1);
    return { width: (bits & 0x3fff) + 1, height: ((bits >>> 14) & 0x3fff) + 1 };
  }
  // Extended format: the EXIF flag means an orientation may follow, so sharp decides.
  if (chunk === 'VP8X' && (buf[data] & 0x08) === 0) {
    return { width: buf.readUIntLE(data + 4, 3) + 1, height: buf.readUIntLE(data + 7, 3) + 1 };
  }
  return undefined;
}

/** The Orientation tag (0x0112) of IFD0 in a TIFF block; undefined when absent or malformed. */
function exifOrientation(buf: Buffer, tiff: number, end: number): number | undefined {
  if (!fits(buf, tiff, 8) || tiff + 8 > end) return undefined;
  const order = buf.toString('latin1', tiff, tiff + 2);
  if (order !== 'II' && order !== 'MM') return undefined;
  const le = order === 'II';
  const u16 = (at: number) => (le ? buf.readUInt16LE(at) : buf.readUInt16BE(at));
  const u32 = (at: number) => (le ? buf.readUInt32LE(at) : buf.readUInt32BE(at));
  const ifd = tiff + u32(tiff + 4);
  if (!fits(buf, ifd, 2) || ifd + 2 > end) return undefined;
  const count = u16(ifd);
  for (let i = 0; i < count; i++) {
    const entry = ifd + 2 + i * 12;
    if (!fits(buf, entry, 12) || entry + 12 > end) return undefined;
    if (u16(entry) === 0x0112) return u16(entry + 8);
  }
  return undefined;
}

function isStartOfFrame(marker: number): boolean {
  // SOF0..SOF15 except DHT (C4), JPG (C8) and DAC (CC), which share the range.
  return marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc;
}

function jpegSize(buf: Buffer): Dimensions | undefined {
  if (!fits(buf, 0, 4) || buf[0] !== 0xff || buf[1] !== 0xd8) return undefined;
  let orientation: number | undefined;
  let offset = 2;
  while (fits(buf, offset, 4)) {
    if (buf[offset] !== 0xff) return undefined;
    const marker = buf[offset + 1];
    if (marker === 0xff) { offset += 1; continue; } // fill byte
    if (marker === 0x01 || (marker >= 0xd0 && marker <= 0xd8)) { offset += 2; continue; } // no length
    if (marker === 0xda || marker === 0xd9) return undefined; // image data before any frame header
    const length = buf.readUInt16BE(offset + 2);
    const end = offset + 2 + length;
    if (marker === 0xe1 && orientation === undefined && fits(buf, offset + 4, 6) && buf.toString('latin1', offset + 4, offset + 10) === 'Exif\0\0') {
      orientation = exifOrientation(buf, offset + 10, end);
    }
    if (isStartOfFrame(marker)) {
      if (!fits(buf, offset + 5, 4)) return undefined;
      return applyExifOrientation({ width: buf.readUInt16BE(offset + 7), height: buf.readUInt16BE(offset + 5) }, orientation);
    }
    offset = end;
  }
  return undefined;
}

/**
 * AVIF (HEIF): the primary item's `ispe` property. Items that are turned, mirrored or cropped
 * (irot, imir, clap) are left to sharp, which applies those transforms.
 */
function avifSize(buf: Buffer): Dimensions | undefined {
  const meta = child(buf, { start: 0, end: buf.length }, 'meta');
  if (!meta) return undefined;
  const body = fullBoxBody(meta);
  const pitm = child(buf, body, 'pitm');
  const iprp = child(buf, body, 'iprp');
  const ipco = iprp && child(buf, iprp, 'ipco');
  const ipma = iprp && child(buf, iprp, 'ipma');
  if (!pitm || !ipco || !ipma || !fits(buf, pitm.start, 8) || !fits(buf, ipma.start, 8)) return undefined;
  const primary = buf[pitm.start] === 0 ? buf.readUInt16BE(pitm.start + 4) : buf.readUInt32BE(pitm.start + 4);
  const properties = [...children(buf, ipco)];
  // ipma: per item, its property indices (1-based into ipco), 7 or 15 bits after an "essential" bit.
  const version = buf[ipma.start];
  const wide = (buf[ipma.start + 3] & 1) === 1;
  let offset = ipma.start + 8;
  for (let entries = buf.readUInt32BE(ipma.start + 4); entries > 0; entries--) {
    const idBytes = version < 1 ? 2 : 4;
    if (!fits(buf, offset, idBytes + 1) || offset + idBytes + 1 > ipma.end) return undefined;
    const item = buf.readUIntBE(offset, idBytes);
    const count = buf[offset + idBytes];
    offset += idBytes + 1;
    const indices: number[] = [];
    for (let i = 0; i < count; i++, offset += wide ? 2 : 1) {
      if (!fits(buf, offset, wide ? 2 : 1)) return undefined;
      indices.push(wide ? buf.readUInt16BE(offset) & 0x7fff : buf[offset] & 0x7f);
    }
    if (item !== primary) continue;
    const associated = indices.map((index) => properties[index - 1]).filter((box) => box !== undefined);
    if (associated.some((box) => box.type === 'irot' || box.type === 'imir' || box.type === 'clap')) return undefined;
    const ispe = associated.find((box) => box.type === 'ispe');
    if (!ispe || !fits(buf, ispe.start, 12)) return undefined;
    return { width: buf.readUInt32BE(ispe.start + 4), height: buf.readUInt32BE(ispe.start + 8) };
  }
  return undefined;
}

const READERS: Partial<Record<Container, (buf: Buffer) => Dimensions | undefined>> = {
  png: pngSize,
  gif: gifSize,
  jpg: jpegSize,
  webp: webpSize,
  avif: avifSize,
};

/** Displayed size from the head of an image file, or undefined to ask sharp. */
export function imageSizeFromHeader(head: Buffer, container: Container): Dimensions | undefined {
  const size = READERS[container]?.(head);
  return size && size.width > 0 && size.height > 0 ? size : undefined;
}
