// The 2D avatar: the face with its hat layer, scaled with nearest-neighbour texels, optionally
// cut to a circle and put on a colour. No browser and no image pipeline: the few distinct rows
// are built once as PNG-filtered scanlines (repeats cost nothing) and packed by png-encode, as a
// palette image (one byte a pixel) whenever the face has at most 255 colours (any 64 px skin).
import { encodePng, FILTER } from './png-encode.ts';
import type { NormalizedSkin } from './skin-normalize.ts';

export interface AvatarOptions { size: number; shape: 'square' | 'circle'; helm: boolean; bg: string | null }

/** Source-over of one RGBA texel onto another, in place. */
function blend(dst: Buffer, d: number, src: Buffer, s: number): void {
  const a = src[s + 3] / 255;
  if (a === 0) return;
  const da = dst[d + 3] / 255;
  const outA = a + da * (1 - a);
  for (let c = 0; c < 3; c += 1) dst[d + c] = Math.round((src[s + c] * a + dst[d + c] * da * (1 - a)) / outA);
  dst[d + 3] = Math.round(outA * 255);
}

/** The 8x8-unit face at the skin's own resolution: background, face, then hat. */
function faceTexels(skin: NormalizedSkin, helm: boolean, bg: string | null): { data: Buffer; side: number } {
  const k = skin.size / 64;
  const side = 8 * k;
  const out = Buffer.alloc(side * side * 4);
  const under = bg ? Buffer.from(`${bg}ff`, 'hex') : null;
  for (let y = 0; y < side; y += 1) {
    for (let x = 0; x < side; x += 1) {
      const o = (y * side + x) * 4;
      const row = (8 * k + y) * skin.size;
      if (under) under.copy(out, o);
      blend(out, o, skin.data, (row + 8 * k + x) * 4);
      if (helm) blend(out, o, skin.data, (row + 40 * k + x) * 4);
    }
  }
  return { data: out, side };
}

/** Columns [from, to) of row y inside a circle filling the square (pixel centres inside). */
function circleSpan(y: number, size: number): [number, number] {
  const r = size / 2;
  const dy = y + 0.5 - r;
  const half = Math.sqrt(Math.max(0, r * r - dy * dy));
  return [Math.max(0, Math.ceil(r - half - 0.5)), Math.min(size, Math.floor(r + half - 0.5) + 1)];
}

/**
 * The face's pixels as written to the PNG, `bpp` bytes each: texels (row-major) and the pixel
 * outside a circle. Palette indices when the colours fit in 256 entries, else RGBA itself.
 */
interface Samples { bpp: number; texels: Buffer; outside: Buffer; palette?: Buffer }

function samplesOf(face: Buffer, outside: Buffer): Samples {
  const indexOf = new Map<number, number>([[outside.readUInt32LE(0), 0]]);
  const texels = Buffer.alloc(face.length / 4);
  for (let i = 0; i < texels.length; i += 1) {
    const colour = face.readUInt32LE(i * 4);
    let index = indexOf.get(colour);
    if (index === undefined) {
      index = indexOf.size;
      if (index === 256) return { bpp: 4, texels: face, outside };
      indexOf.set(colour, index);
    }
    texels[i] = index;
  }
  const palette = Buffer.alloc(indexOf.size * 4);
  for (const [colour, index] of indexOf) palette.writeUInt32LE(colour, index * 4);
  return { bpp: 1, texels, outside: Buffer.from([0]), palette };
}

// One buffer for the scanlines, kept from avatar to avatar: renderAvatar runs from here to the
// encoded PNG without yielding, and the encoder copies what it keeps. A new zeroed buffer per
// avatar (263 KB at 512 px) cost fresh pages on every call: cold avatars were 15-20% slower on
// jemalloc than on glibc, which happened to reuse the memory.
let scratch = Buffer.alloc(0);
function scanlines(length: number): Buffer {
  if (scratch.length < length) scratch = Buffer.alloc(length);
  else scratch.fill(0, 0, length);
  return scratch.subarray(0, length);
}

/**
 * A row identical to the one above is filter "up": all zeros, left as zeroed. Any other row
 * is filter "sub" (each pixel minus its left neighbour), which is zero inside every run of one
 * texel, so only run starts are written. Outside a circle the pixels are the background colour
 * when there is one (`bg` fills every pixel the face leaves empty), else transparent.
 */
export async function renderAvatar(skin: NormalizedSkin, o: AvatarOptions): Promise<Buffer> {
  const face = faceTexels(skin, o.helm, o.bg);
  const { bpp, texels, outside, palette } = samplesOf(face.data, o.bg ? Buffer.from(`${o.bg}ff`, 'hex') : Buffer.alloc(4));
  const { size } = o;
  const stride = size * bpp + 1;
  const lines = scanlines(stride * size);
  let previous = '';
  for (let y = 0; y < size; y += 1) {
    const line = y * stride;
    const sy = Math.floor((y * face.side) / size);
    const [from, to] = o.shape === 'circle' ? circleSpan(y, size) : [0, size];
    const key = `${sy}:${from}:${to}`;
    if (key === previous) {
      lines[line] = FILTER.up;
      continue;
    }
    previous = key;
    lines[line] = FILTER.sub;
    // Sample offset of the pixel to the left: -1 outside the circle, -2 before the row (zero).
    let left = -2;
    for (let x = 0; x < size; x += 1) {
      const texel = x >= from && x < to ? (sy * face.side + Math.floor((x * face.side) / size)) * bpp : -1;
      if (texel === left) continue;
      for (let c = 0; c < bpp; c += 1) {
        const now = texel < 0 ? outside[c] : texels[texel + c];
        const before = left === -2 ? 0 : left === -1 ? outside[c] : texels[left + c];
        lines[line + 1 + x * bpp + c] = (now - before) & 255;
      }
      left = texel;
    }
  }
  return encodePng(lines, size, size, palette);
}
