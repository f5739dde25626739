// Generated test and demo skins: every face of every box has its own colour (faceColor), so a
// test can tell from one output pixel which face of which part it sees. The outer layer is a
// checker of its face colour and transparency, so the inner layer shows through. The first
// texel of every inner face (and of every cape face) is a half-bright marker, so a test can tell
// a mirrored or upside-down face from a right one. With a `look`, the skin or cape is one of the
// real-looking demo drawings of skin-looks.ts instead.
import sharp from 'sharp';
import { PART_NAMES, FACE_NAMES, type FaceName, type Layer, type PartName } from '../../shared/skin-layout.ts';
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

/** The marker texel of every inner face (its top-left in the texture) is this much darker. */
export const MARKER_SHADE = 0.5;
const marked = ([r, g, b, a]: Rgba): Rgba => [Math.round(r * MARKER_SHADE), Math.round(g * MARKER_SHADE), Math.round(b * MARKER_SHADE), a];

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

/** The test pattern: a colour per face, eyes, a checkered outer layer, marker texels. */
function patternPainter(seed: number): Painter {
  return (part, layer, face, u, v) => {
    if (part === 'head' && layer === 'inner' && face === 'front' && EYES.some(([x, y]) => x === u && y === v)) return EYE_COLOR;
    if (layer === 'outer' && (u + v) % 2 === 1) return null;
    const color = tint(faceColor(part, layer, face), seed);
    return layer === 'inner' && u === 0 && v === 0 ? marked(color) : color;
  };
}

/** A demo look, asked per pixel (HD detail) with coordinates in 64-unit texels. */
function lookPainter(look: SkinLook, k: number): Painter {
  const paint = LOOKS[look];
  return (part, layer, face, u, v, w, h) => paint({ part, layer, face, x: (u + 0.5) / k, y: (v + 0.5) / k, w: w / k, h: h / k });
}

export interface SkinOptions { slim?: boolean; legacy?: boolean; scale?: number; seed?: number; look?: SkinLook }

export async function drawSkin(opts: SkinOptions = {}): Promise<Buffer> {
  const k = opts.scale ?? 1;
  const data = opts.look ? paintSkin(k, !!opts.slim, lookPainter(opts.look, k), true) : paintSkin(k, !!opts.slim, patternPainter(opts.seed ?? 0));
  const side = 64 * k;
  const image = sharp(data, { raw: { width: side, height: side, channels: 4 } });
  // Legacy skins are the top half only: the left limbs do not exist in that format.
  return (opts.legacy ? image.extract({ left: 0, top: 0, width: side, height: side / 2 }) : image).png().toBuffer();
}

export async function drawCape(opts: { legacy?: boolean; seed?: number; look?: CapeLook } = {}): Promise<Buffer> {
  const look = opts.look;
  const data = paintCape((face, u, v) => {
    if (look) return capeLook(look, face, u, v);
    const color = tint(faceColor('cape', 'inner', face), opts.seed ?? 0);
    return u === 0 && v === 0 ? marked(color) : color;
  });
  const image = sharp(data, { raw: { width: 64, height: 32, channels: 4 } });
  return (opts.legacy ? image.extract({ left: 0, top: 0, width: 22, height: 17 }) : image).png().toBuffer();
}
