// A small PNG reader for the common skin and cape files: 8-bit, not interlaced, grey / RGB /
// palette / grey+alpha / RGBA, no ICC profile. A skin is a few KB, and for so little work sharp's
// call (a libuv round trip, libvips pipeline set-up) cost ~0.4 ms a texture, more than the
// decoding itself: the cost of every cold avatar and render of a skin not seen before. Anything
// else (16-bit, interlaced, ICC, damaged) answers null and goes to sharp, which stays the one
// judge of what is a valid PNG.
import { inflateSync } from 'node:zlib';

export interface RawImage { data: Buffer; width: number; height: number }

/** Channels per colour type (PNG spec, IHDR). */
const CHANNELS: Partial<Record<number, number>> = { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 };

/** Pixels a PNG says it has (IHDR, the first chunk: width and height at bytes 16-23); 0 when it is too short to say. */
export function pngPixels(png: Buffer): number {
  return png.length < 24 ? 0 : png.readUInt32BE(16) * png.readUInt32BE(20);
}

/** RGBA pixels of `png`, or null when this reader leaves the file to sharp. */
export function decodeSimplePng(png: Buffer, maxSide: number): RawImage | null {
  try {
    return read(png, maxSide);
  } catch {
    return null;
  }
}

/** The chunks of a PNG after its 8-byte signature, in order (IEND too); throws at a chunk cut short. */
export function* pngChunks(png: Buffer): Generator<{ type: string; body: Buffer }> {
  for (let offset = 8; offset + 8 <= png.length;) {
    const length = png.readUInt32BE(offset);
    const type = png.toString('latin1', offset + 4, offset + 8);
    const body = png.subarray(offset + 8, offset + 8 + length);
    if (body.length !== length) throw new Error(`the PNG's ${type} chunk is cut short`);
    offset += 12 + length;
    yield { type, body };
  }
}

function read(png: Buffer, maxSide: number): RawImage | null {
  let width = 0, height = 0, colourType = -1;
  let palette: Buffer | null = null;
  let transparency: Buffer | null = null;
  const compressed: Buffer[] = [];
  for (const { type, body } of pngChunks(png)) {
    if (type === 'IHDR') {
      width = body.readUInt32BE(0);
      height = body.readUInt32BE(4);
      colourType = body[9];
      // bit depth 8, deflate, adaptive filters, no interlace
      if (body[8] !== 8 || body[10] !== 0 || body[11] !== 0 || body[12] !== 0) return null;
      if (CHANNELS[colourType] === undefined || width < 1 || height < 1 || width > maxSide || height > maxSide) return null;
    } else if (type === 'PLTE') palette = body;
    else if (type === 'tRNS') transparency = body;
    else if (type === 'iCCP') return null;
    else if (type === 'IDAT') compressed.push(body);
    else if (type === 'IEND') break;
  }
  if (colourType < 0 || compressed.length === 0 || (colourType === 3 && !palette)) return null;
  const channels = CHANNELS[colourType]!;
  const stride = width * channels;
  const expected = (stride + 1) * height;
  const filtered = inflateSync(compressed.length === 1 ? compressed[0] : Buffer.concat(compressed), { maxOutputLength: expected + 1 });
  if (filtered.length !== expected) return null;
  const rows = unfilter(filtered, stride, channels, height);
  return { data: toRgba(rows, width, height, colourType, palette, transparency), width, height };
}

/** Undoes the per-row filters (PNG spec, section 9) in one buffer of `height` rows; one loop per filter. */
function unfilter(filtered: Buffer, stride: number, bpp: number, height: number): Buffer {
  const out = Buffer.alloc(stride * height);
  for (let y = 0; y < height; y += 1) {
    const filter = filtered[y * (stride + 1)];
    const src = y * (stride + 1) + 1;
    const row = y * stride;
    const up = row - stride;
    const hasUp = y > 0;
    switch (filter) {
      case 0:
        filtered.copy(out, row, src, src + stride);
        break;
      case 1:
        for (let x = 0; x < stride; x += 1) out[row + x] = filtered[src + x] + (x >= bpp ? out[row + x - bpp] : 0);
        break;
      case 2:
        for (let x = 0; x < stride; x += 1) out[row + x] = filtered[src + x] + (hasUp ? out[up + x] : 0);
        break;
      case 3:
        for (let x = 0; x < stride; x += 1) out[row + x] = filtered[src + x] + (((x >= bpp ? out[row + x - bpp] : 0) + (hasUp ? out[up + x] : 0)) >> 1);
        break;
      case 4:
        for (let x = 0; x < stride; x += 1) {
          const a = x >= bpp ? out[row + x - bpp] : 0;
          const b = hasUp ? out[up + x] : 0;
          const c = x >= bpp && hasUp ? out[up + x - bpp] : 0;
          const pa = Math.abs(b - c), pb = Math.abs(a - c), pc = Math.abs(a + b - 2 * c);
          out[row + x] = filtered[src + x] + (pa <= pb && pa <= pc ? a : pb <= pc ? b : c);
        }
        break;
      default: throw new Error(`unknown PNG filter ${filter}`);
    }
  }
  return out;
}

function toRgba(rows: Buffer, width: number, height: number, colourType: number, palette: Buffer | null, trns: Buffer | null): Buffer {
  const pixels = width * height;
  if (colourType === 6) return rows;
  const out = Buffer.alloc(pixels * 4);
  // A tRNS chunk on grey or RGB names one 16-bit colour that is transparent.
  const key = trns && colourType === 0 ? trns.readUInt16BE(0) : -1;
  const keyRgb = trns && colourType === 2 ? [trns.readUInt16BE(0), trns.readUInt16BE(2), trns.readUInt16BE(4)] : null;
  for (let i = 0; i < pixels; i += 1) {
    const o = i * 4;
    switch (colourType) {
      case 0: {
        const v = rows[i];
        out[o] = out[o + 1] = out[o + 2] = v;
        out[o + 3] = v === key ? 0 : 255;
        break;
      }
      case 4:
        out[o] = out[o + 1] = out[o + 2] = rows[i * 2];
        out[o + 3] = rows[i * 2 + 1];
        break;
      case 2: {
        const r = rows[i * 3], g = rows[i * 3 + 1], b = rows[i * 3 + 2];
        out[o] = r; out[o + 1] = g; out[o + 2] = b;
        out[o + 3] = keyRgb && keyRgb[0] === r && keyRgb[1] === g && keyRgb[2] === b ? 0 : 255;
        break;
      }
      default: {
        const index = rows[i];
        if (index * 3 + 2 >= palette!.length) throw new Error('palette index out of range');
        out[o] = palette![index * 3]; out[o + 1] = palette![index * 3 + 1]; out[o + 2] = palette![index * 3 + 2];
        out[o + 3] = trns && index < trns.length ? trns[index] : 255;
      }
    }
  }
  return out;
}
