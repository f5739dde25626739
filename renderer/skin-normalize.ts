// One place that turns a skin or cape PNG into the RGBA texture the drawing code expects:
// legacy 64x32 skins become 64x64 with mirrored left limbs (as the game does), HD skins keep their
// resolution, the game's alpha rules apply, and the slim model can be guessed from pixels.
// Large files are read on the texture threads (texture-threads.ts), small ones here.
import { createHash } from 'node:crypto';
import sharp from 'sharp';
import { RenderError } from './errors.ts';
import { decodeSimplePng } from './png-decode.ts';
import { normalizeOffThread, readsOffThread } from './texture-threads.ts';
import { MAX_SKIN_BYTES } from '../shared/skin-layout.ts';

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
/** Largest skin side we draw (HD skins beyond this gain nothing at 512 px output). */
const MAX_SIDE = 1024;

export interface NormalizedSkin {
  /** Raw RGBA, `size` x `size`. */
  data: Buffer;
  size: number;
  legacy: boolean;
  /** Slim arms judged from the pixels (the 4th arm column is empty). */
  slimGuess: boolean;
  /** Content key of `data`: the same pixels from any PNG encoding share it (pages cache by it). */
  hash: string;
}

export interface NormalizedCape { data: Buffer; width: number; height: number; hash: string }

export function pixelHash(data: Buffer): string {
  return createHash('sha256').update(data).digest('base64url');
}

/** What a texture is called in messages, in English and Chinese. */
interface TextureName { en: string; zh: string }

const invalid = (en: string, zh: string, cause?: unknown) => new RenderError('invalid_texture', en, { zh, cause });

async function decode(png: Buffer, what: TextureName): Promise<{ data: Buffer; width: number; height: number }> {
  if (png.length > MAX_SKIN_BYTES) throw invalid(`the ${what.en} is larger than 2 MB`, `${what.zh} 超过 2 MB`);
  if (!png.subarray(0, 8).equals(PNG_SIGNATURE)) throw invalid(`the ${what.en} is not a PNG`, `${what.zh} 不是 PNG`);
  const simple = decodeSimplePng(png, MAX_SIDE);
  if (simple) return simple;
  try {
    const { data, info } = await sharp(png, { limitInputPixels: MAX_SIDE * MAX_SIDE }).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
    return { data, width: info.width, height: info.height };
  } catch (error) {
    throw invalid(`the ${what.en} cannot be decoded`, `${what.zh} 无法解码`, error);
  }
}

class Texture {
  readonly data: Buffer;
  readonly width: number;
  /** Texels per 64-unit layout unit (2 for a 128 px HD skin). */
  readonly k: number;
  constructor(data: Buffer, width: number) {
    this.data = data;
    this.width = width;
    this.k = width / 64;
  }

  /** Copies a w x h unit rectangle, mirrored left to right (the game's legacy conversion). */
  copyMirrored(sx: number, sy: number, dx: number, dy: number, w: number, h: number): void {
    const { k } = this;
    for (let y = 0; y < h * k; y += 1) {
      for (let x = 0; x < w * k; x += 1) {
        const from = ((sy * k + y) * this.width + sx * k + x) * 4;
        const to = ((dy * k + y) * this.width + dx * k + (w * k - 1 - x)) * 4;
        this.data.copy(this.data, to, from, from + 4);
      }
    }
  }

  forEach(x0: number, y0: number, x1: number, y1: number, fn: (offset: number) => void): void {
    const { k } = this;
    for (let y = y0 * k; y < y1 * k; y += 1) for (let x = x0 * k; x < x1 * k; x += 1) fn((y * this.width + x) * 4);
  }

  setOpaque(x0: number, y0: number, x1: number, y1: number): void {
    this.forEach(x0, y0, x1, y1, (o) => { this.data[o + 3] = 255; });
  }

  /** Old skins painted the hat region solid; the game then treats it as transparent. */
  clearIfAllOpaque(x0: number, y0: number, x1: number, y1: number): void {
    let opaque = true;
    this.forEach(x0, y0, x1, y1, (o) => { if (this.data[o + 3] < 128) opaque = false; });
    if (opaque) this.forEach(x0, y0, x1, y1, (o) => { this.data[o + 3] = 0; });
  }

  allTransparent(x0: number, y0: number, x1: number, y1: number): boolean {
    let clear = true;
    this.forEach(x0, y0, x1, y1, (o) => { if (this.data[o + 3] !== 0) clear = false; });
    return clear;
  }
}

// Legacy conversion, in 64-unit coordinates: [source x, y, destination x, y, width, height].
// Left limbs are the right ones mirrored; their outer and inner side faces trade places.
const LEGACY_COPIES: ReadonlyArray<readonly [number, number, number, number, number, number]> = [
  [4, 16, 20, 48, 4, 4], [8, 16, 24, 48, 4, 4],
  [0, 20, 24, 52, 4, 12], [4, 20, 20, 52, 4, 12], [8, 20, 16, 52, 4, 12], [12, 20, 28, 52, 4, 12],
  [44, 16, 36, 48, 4, 4], [48, 16, 40, 48, 4, 4],
  [40, 20, 40, 52, 4, 12], [44, 20, 36, 52, 4, 12], [48, 20, 32, 52, 4, 12], [52, 20, 44, 52, 4, 12],
];

export function normalizeSkin(png: Buffer): Promise<NormalizedSkin> {
  return readsOffThread(png) ? normalizeOffThread('skin', png) : readSkin(png);
}

export function normalizeCape(png: Buffer): Promise<NormalizedCape> {
  return readsOffThread(png) ? normalizeOffThread('cape', png) : readCape(png);
}

/** normalizeSkin in this thread. */
export async function readSkin(png: Buffer): Promise<NormalizedSkin> {
  const decoded = await decode(png, { en: 'skin', zh: '皮肤' });
  const { width, height } = decoded;
  const legacy = height * 2 === width;
  if (width % 64 !== 0 || width > MAX_SIDE || (height !== width && !legacy)) {
    throw invalid(`a skin of ${width}x${height} is not 64x64, 64x32 or a multiple`, `尺寸 ${width}x${height} 不是 64x64、64x32 或其整数倍`);
  }
  let data = decoded.data;
  if (legacy) {
    data = Buffer.alloc(width * width * 4);
    decoded.data.copy(data);
  }
  const t = new Texture(data, width);
  if (legacy) for (const [sx, sy, dx, dy, w, h] of LEGACY_COPIES) t.copyMirrored(sx, sy, dx, dy, w, h);
  // A slim skin leaves the 4th column of the arm empty; judge before the alpha fix fills it.
  const slimGuess = !legacy && t.allTransparent(50, 16, 52, 20) && t.allTransparent(54, 20, 56, 32);
  t.setOpaque(0, 0, 32, 16);
  if (legacy) t.clearIfAllOpaque(32, 0, 64, 32);
  t.setOpaque(0, 16, 64, 32);
  t.setOpaque(16, 48, 48, 64);
  return { data, size: width, legacy, slimGuess, hash: pixelHash(data) };
}

/** normalizeCape in this thread. Capes: 64x32 (or multiples); legacy 22x17 and 46x22 capes are padded with transparency. */
export async function readCape(png: Buffer): Promise<NormalizedCape> {
  const decoded = await decode(png, { en: 'cape', zh: '披风' });
  const { width, height } = decoded;
  if (width % 64 === 0 && height * 2 === width) return { ...decoded, hash: pixelHash(decoded.data) };
  if ((width === 22 && height === 17) || (width === 46 && height === 22)) {
    const data = Buffer.alloc(64 * 32 * 4);
    for (let y = 0; y < height; y += 1) decoded.data.copy(data, y * 64 * 4, y * width * 4, (y + 1) * width * 4);
    return { data, width: 64, height: 32, hash: pixelHash(data) };
  }
  throw invalid(`a cape of ${width}x${height} is not valid`, `披风尺寸 ${width}x${height} 无效`);
}
