// Pixel helpers for image tests: decode a PNG, read pixels, and find a face of a generated skin
// (scripts/fake-upstream/skin-art.ts) in a picture by its colour, whatever fixed shade the
// renderer gave that face.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import sharp from 'sharp';
import { MARKER_SHADE } from '../../scripts/fake-upstream/skin-art.ts';

export type Rgba = readonly number[];
export interface Picture { width: number; height: number; data: Buffer }
export interface Region { x0: number; y0: number; x1: number; y1: number }

export async function decodePng(png: Buffer): Promise<Picture> {
  const { data, info } = await sharp(png).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
  return { width: info.width, height: info.height, data };
}

export function pixel(p: Picture, x: number, y: number): [number, number, number, number] {
  const o = (Math.floor(y) * p.width + Math.floor(x)) * 4;
  return [p.data[o], p.data[o + 1], p.data[o + 2], p.data[o + 3]];
}

/** A skin's PNG with texel (0, 0) in another colour: no face shows it, but the texture hash (the cache key) changes. */
export async function invisibleVariant(skin: Buffer, n: number): Promise<Buffer> {
  const { data, info } = await sharp(skin).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
  data.set([n, 255 - n, 7, 255], 0);
  return sharp(data, { raw: { width: info.width, height: info.height, channels: 4 } }).png().toBuffer();
}

/** Writes a PNG under test-artifacts/<dir>/ so a person can look at it. */
export function saveArtifact(dir: string, name: string, png: Buffer): void {
  const folder = path.join(import.meta.dirname, '../../test-artifacts', dir);
  mkdirSync(folder, { recursive: true });
  writeFileSync(path.join(folder, `${name}.png`), png);
}

/**
 * How bright an opaque pixel is as a multiple of `expected` (0.1 to 1.1), or null when it is not
 * a shade of that colour: every channel must be the same multiple, within rounding.
 */
export function shadeOf(actual: Rgba, expected: Rgba): number | null {
  if (actual[3] < 250) return null;
  const f = (actual[0] + actual[1] + actual[2]) / (expected[0] + expected[1] + expected[2]);
  if (f < 0.1 || f > 1.1) return null;
  for (let c = 0; c < 3; c += 1) if (Math.abs(actual[c] - f * expected[c]) > 3 + 0.06 * f * expected[c]) return null;
  return f;
}

const everywhere = (p: Picture): Region => ({ x0: 0, y0: 0, x1: p.width, y1: p.height });

/** Pixels of `region` that are a shade of `expected`, with their shade. */
function matches(p: Picture, expected: Rgba, r: Region): Array<{ x: number; y: number; f: number }> {
  const found = [];
  for (let y = r.y0; y < r.y1; y += 1) {
    for (let x = r.x0; x < r.x1; x += 1) {
      const f = shadeOf(pixel(p, x, y), expected);
      if (f !== null) found.push({ x, y, f });
    }
  }
  return found;
}

function boxOf(points: Array<{ x: number; y: number }>): Region | null {
  if (points.length === 0) return null;
  const xs = points.map((m) => m.x);
  const ys = points.map((m) => m.y);
  return { x0: Math.min(...xs), y0: Math.min(...ys), x1: Math.max(...xs) + 1, y1: Math.max(...ys) + 1 };
}

/** Number of pixels that are a shade of `expected`. */
export function count(p: Picture, expected: Rgba, r: Region = everywhere(p)): number {
  return matches(p, expected, r).length;
}

/**
 * Number of pixels that are a shade of `expected` together with their eight neighbours. An
 * anti-aliased edge mixes two colours in a line one pixel wide, and such a mix can happen to be
 * a shade of a third colour; a face that really shows covers whole blocks.
 */
export function solidCount(p: Picture, expected: Rgba, r: Region = everywhere(p)): number {
  const hit = new Set(matches(p, expected, r).map(({ x, y }) => y * p.width + x));
  let n = 0;
  for (const at of hit) {
    const x = at % p.width;
    let all = x > 0 && x < p.width - 1;
    for (let dy = -p.width; all && dy <= p.width; dy += p.width) for (let dx = -1; dx <= 1; dx += 1) if (!hit.has(at + dy + dx)) all = false;
    if (all) n += 1;
  }
  return n;
}

/** Share of the opaque pixels that are a shade of `expected`. */
export function share(p: Picture, expected: Rgba): number {
  let opaque = 0;
  for (let i = 3; i < p.data.length; i += 4) if (p.data[i] >= 250) opaque += 1;
  return opaque === 0 ? 0 : count(p, expected) / opaque;
}

/** The bounding box of the pixels that are a shade of `expected`. */
export function colorBox(p: Picture, expected: Rgba): Region | null {
  return boxOf(matches(p, expected, everywhere(p)));
}

/** The bounding box of the opaque pixels. */
export function opaqueBox(p: Picture): Region | null {
  const points = [];
  for (let y = 0; y < p.height; y += 1) for (let x = 0; x < p.width; x += 1) if (pixel(p, x, y)[3] >= 250) points.push({ x, y });
  return boxOf(points);
}

/** Number of pixels neither transparent nor opaque (a soft shadow, say). */
export function translucent(p: Picture, r: Region = everywhere(p)): number {
  let n = 0;
  for (let y = r.y0; y < r.y1; y += 1) {
    for (let x = r.x0; x < r.x1; x += 1) {
      const alpha = pixel(p, x, y)[3];
      if (alpha > 0 && alpha < 250) n += 1;
    }
  }
  return n;
}

/** Number of half-transparent near-black pixels: the soft shadow (anti-aliased edges keep their colour). */
export function shadowPixels(p: Picture, r: Region = everywhere(p)): number {
  let n = 0;
  for (let y = r.y0; y < r.y1; y += 1) {
    for (let x = r.x0; x < r.x1; x += 1) {
      const [red, green, blue, alpha] = pixel(p, x, y);
      if (alpha > 0 && alpha < 250 && red + green + blue < 30) n += 1;
    }
  }
  return n;
}

export type Corner = 'top-left' | 'top-right' | 'bottom-left' | 'bottom-right';

/**
 * Where a face's marker texel (its first texture texel, drawn MARKER_SHADE as bright) shows:
 * the corner of the face's bounding box nearest to the marker pixels. Tells a face that is
 * drawn mirrored or upside down from one that is right. Null when the face or marker is absent.
 */
export function markerCorner(p: Picture, expected: Rgba, r: Region = everywhere(p)): Corner | null {
  const found = matches(p, expected, r);
  if (found.length === 0) return null;
  const brightest = Math.max(...found.map((m) => m.f));
  const marker = found.filter((m) => Math.abs(m.f / brightest - MARKER_SHADE) < 0.12);
  if (marker.length === 0 || marker.length === found.length) return null;
  const box = boxOf(found)!;
  const mx = marker.reduce((sum, m) => sum + m.x + 0.5, 0) / marker.length;
  const my = marker.reduce((sum, m) => sum + m.y + 0.5, 0) / marker.length;
  return `${my < (box.y0 + box.y1) / 2 ? 'top' : 'bottom'}-${mx < (box.x0 + box.x1) / 2 ? 'left' : 'right'}`;
}
