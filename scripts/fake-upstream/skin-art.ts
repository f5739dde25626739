// Generated test and demo skins: every face of every box has its own colour (faceColor), so a
// test can tell from one output pixel which face of which part it sees. The outer layer is a
// checker of its face colour and transparency, so the inner layer shows through. The first
// texel of every inner face (and of every cape face) is a half-bright marker, so a test can tell
// a mirrored or upside-down face from a right one. With a `look`, the skin or cape is one of the
// real-looking demo drawings of skin-looks.ts instead. A generated player's skin (with `number`)
// is the test pattern in colours of its own, with its number written in binary on the fronts of
// the body and limbs, so every generated player has a distinct picture and texture hash.
import sharp from 'sharp';
import { CAPE_SIZE, elytraFaces, PART_NAMES, FACE_NAMES, type FaceName, type Layer, type PartName } from '../../shared/skin-layout.ts';
import { paintCape, paintSkin, type Painter, type Rgba } from '../../renderer/skin-paint.ts';
import { capeLook, LOOKS, type CapeLook, type SkinLook } from './skin-looks.ts';

const PARTS: readonly (PartName | 'cape')[] = [...PART_NAMES, 'cape'];

/** A distinct opaque colour per (part, layer, face): hue by part and face, lightness by layer. */
export function faceColor(part: PartName | 'cape', layer: Layer, face: FaceName): Rgba {
  const p = PARTS.indexOf(part);
  const f = FACE_NAMES.indexOf(face);
  const hue = ((p * 6 + f) * 360) / 42;
  const lightness = layer === 'inner' ? 0.45 : 0.72;
  return [...hsl(hue, 0.85, lightness), 255] as Rgba;
}

/** The head's front face carries two "eyes" at known texels so orientation is testable. */
export const EYE_COLOR: Rgba = [255, 255, 255, 255];
export const EYES = [[1, 3], [6, 3]] as const;

const shade = ([r, g, b, a]: Rgba, f: number): Rgba => [Math.round(r * f), Math.round(g * f), Math.round(b * f), a];

/** The marker texel of every inner face (its top-left in the texture) is this much darker. */
export const MARKER_SHADE = 0.5;
const marked = (color: Rgba): Rgba => shade(color, MARKER_SHADE);

function hsl(h: number, s: number, l: number): [number, number, number] {
  const a = s * Math.min(l, 1 - l);
  const f = (n: number) => {
    const k = (n + h / 30) % 12;
    return Math.round(255 * (l - a * Math.max(-1, Math.min(k - 3, 9 - k, 1))));
  };
  return [f(0), f(8), f(4)];
}

/**
 * Seeds darken the face colours a little (generated players differ, byte for byte); the scale is
 * uniform, so every pixel stays a shade of its face colour. Seed 0 keeps them exact.
 */
function tint([r, g, b, a]: Rgba, seed: number): Rgba {
  const f = 1 - ((seed * 37) % 16) / 100;
  return [Math.round(r * f), Math.round(g * f), Math.round(b * f), a];
}

/** Bits of a generated player's number (1 to 6 digits fit in 20). */
const NUMBER_BITS = 20;
/** A set bit darkens its texel to this share of the colour. */
const BIT_SHADE = 0.6;

/** A colour per channel from the seed (each channel kept at 0.55 to 1 of the face colour). */
function seedColour([r, g, b, a]: Rgba, seed: number): Rgba {
  const f = (shift: number) => 0.55 + (((seed >>> shift) & 255) / 255) * 0.45;
  return [Math.round(r * f(0)), Math.round(g * f(8)), Math.round(b * f(16)), a];
}

/** Whether texel (u, v) of a w-wide face carries a set bit of `number` (bits repeat along the rows). */
function bitAt(number: number, u: number, v: number, w: number): boolean {
  return ((number >>> ((v * w + u) % NUMBER_BITS)) & 1) === 1;
}

/**
 * The test pattern: a colour per face, eyes, a checkered outer layer, marker texels. With a
 * `number` (generated players) the colours come from the seed and the number is written in
 * binary on the inner front faces of the body and limbs, where a render shows it.
 */
function patternPainter(seed: number, number?: number): Painter {
  return (part, layer, face, u, v, w) => {
    if (part === 'head' && layer === 'inner' && face === 'front' && EYES.some(([x, y]) => x === u && y === v)) return EYE_COLOR;
    if (layer === 'outer' && (u + v) % 2 === 1) return null;
    if (number !== undefined) {
      const color = seedColour(faceColor(part, layer, face), seed);
      const written = layer === 'inner' && face === 'front' && part !== 'head' && bitAt(number, u, v, w);
      return written ? shade(color, BIT_SHADE) : color;
    }
    const color = tint(faceColor(part, layer, face), seed);
    return layer === 'inner' && u === 0 && v === 0 ? marked(color) : color;
  };
}

/** A demo look, asked per pixel (HD detail) with coordinates in 64-unit texels. */
function lookPainter(look: SkinLook, k: number): Painter {
  const paint = LOOKS[look];
  return (part, layer, face, u, v, w, h) => paint({ part, layer, face, x: (u + 0.5) / k, y: (v + 0.5) / k, w: w / k, h: h / k });
}

export interface SkinOptions { slim?: boolean; legacy?: boolean; scale?: number; seed?: number; number?: number; look?: SkinLook }
export interface CapeOptions { legacy?: boolean; seed?: number; number?: number; look?: CapeLook }

/** Raw RGBA pixels, row by row, before encoding (the texture hash is taken from these). */
export interface Pixels { data: Buffer; width: number; height: number }

/** The top-left w x h of an image. */
function crop({ data, width }: Pixels, w: number, h: number): Pixels {
  const out = Buffer.alloc(w * h * 4);
  for (let y = 0; y < h; y++) data.copy(out, y * w * 4, y * width * 4, (y * width + w) * 4);
  return { data: out, width: w, height: h };
}

export function skinPixels(opts: SkinOptions = {}): Pixels {
  const k = opts.scale ?? 1;
  const painter = opts.look ? lookPainter(opts.look, k) : patternPainter(opts.seed ?? 0, opts.number);
  const side = 64 * k;
  const full = { data: paintSkin(k, !!opts.slim, painter, !!opts.look), width: side, height: side };
  // Legacy skins are the top half only: the left limbs do not exist in that format.
  return opts.legacy ? crop(full, side, side / 2) : full;
}

export function capePixels(opts: CapeOptions = {}): Pixels {
  const { look, seed = 0, number } = opts;
  const data = paintCape((face, u, v) => {
    if (look) return capeLook(look, face, u, v);
    if (number !== undefined) {
      const color = seedColour(faceColor('cape', 'inner', face), seed);
      return face === 'front' && bitAt(number, u, v, CAPE_SIZE.w) ? shade(color, BIT_SHADE) : color;
    }
    const color = tint(faceColor('cape', 'inner', face), seed);
    return u === 0 && v === 0 ? marked(color) : color;
  });
  // The elytra's part (every official cape texture has one): the look's plain cloth, or the
  // pattern's outer-layer colours, so a test tells wings from cape.
  for (const face of FACE_NAMES) {
    const r = elytraFaces()[face];
    for (let v = 0; v < r.h; v += 1) for (let u = 0; u < r.w; u += 1) {
      const color = look ? capeLook(look, 'back', u % CAPE_SIZE.w, v % CAPE_SIZE.h) : tint(faceColor('cape', 'outer', face), seed);
      data.set(!look && u === 0 && v === 0 ? marked(color) : color, ((r.y + v) * 64 + r.x + u) * 4);
    }
  }
  const full = { data, width: 64, height: 32 };
  return opts.legacy ? crop(full, 22, 17) : full;
}

export function encodePng({ data, width, height }: Pixels): Promise<Buffer> {
  return sharp(data, { raw: { width, height, channels: 4 } }).png().toBuffer();
}

export const drawSkin = (opts: SkinOptions = {}): Promise<Buffer> => encodePng(skinPixels(opts));
export const drawCape = (opts: CapeOptions = {}): Promise<Buffer> => encodePng(capePixels(opts));
