// Painting skins texel by texel in the game's layout: used for the built-in default skins and
// for the generated test and demo skins (our own art, never the game's assets).
import { capeFaces, FACE_NAMES, PART_NAMES, partFaces, type FaceName, type Layer, type PartName } from '../shared/skin-layout.ts';

export type Rgba = [number, number, number, number];

/** Decides the colour of texel (u, v) of a face; u, v run 0..w-1, 0..h-1 in 64-unit texels. */
export type Painter = (part: PartName, layer: Layer, face: FaceName, u: number, v: number, w: number, h: number) => Rgba | null;

/**
 * Paints every face of every part of both layers into a square RGBA skin of side 64 * k. The
 * painter is asked once per 64-unit texel (filling k x k pixels), or with `perPixel` once per
 * pixel, in pixel coordinates (u, v, w, h all k times larger), for HD detail.
 */
export function paintSkin(k: number, slim: boolean, painter: Painter, perPixel = false): Buffer {
  const side = 64 * k;
  const data = Buffer.alloc(side * side * 4);
  const step = perPixel ? k : 1;
  const block = k / step;
  for (const layer of ['inner', 'outer'] as const) {
    for (const part of PART_NAMES) {
      const faces = partFaces(part, layer, slim);
      for (const face of FACE_NAMES) {
        const r = faces[face];
        for (let v = 0; v < r.h * step; v += 1) {
          for (let u = 0; u < r.w * step; u += 1) {
            const color = painter(part, layer, face, u, v, r.w * step, r.h * step);
            if (color) fill(data, side, r.x * k + u * block, r.y * k + v * block, block, color);
          }
        }
      }
    }
  }
  return data;
}

/** Paints the six faces of the cape into a 64 x 32 RGBA texture. */
export function paintCape(color: (face: FaceName, u: number, v: number) => Rgba): Buffer {
  const data = Buffer.alloc(64 * 32 * 4);
  const faces = capeFaces();
  for (const face of FACE_NAMES) {
    const r = faces[face];
    for (let v = 0; v < r.h; v += 1) for (let u = 0; u < r.w; u += 1) fill(data, 64, r.x + u, r.y + v, 1, color(face, u, v));
  }
  return data;
}

function fill(data: Buffer, side: number, x: number, y: number, k: number, [r, g, b, a]: Rgba): void {
  for (let dy = 0; dy < k; dy += 1) {
    for (let dx = 0; dx < k; dx += 1) {
      const o = ((y + dy) * side + x + dx) * 4;
      data[o] = r;
      data[o + 1] = g;
      data[o + 2] = b;
      data[o + 3] = a;
    }
  }
}
