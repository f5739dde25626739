// The 2D avatar: the face with its hat layer, scaled with nearest-neighbour texels, optionally
// cut to a circle and put on a colour. No browser: pixels in JS, the PNG encoded by sharp.
import sharp from 'sharp';
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

/** The 8x8-unit face (with hat) at the skin's own resolution. */
export function faceTexels(skin: NormalizedSkin, helm: boolean): { data: Buffer; side: number } {
  const k = skin.size / 64;
  const side = 8 * k;
  const out = Buffer.alloc(side * side * 4);
  for (let y = 0; y < side; y += 1) {
    for (let x = 0; x < side; x += 1) {
      const o = (y * side + x) * 4;
      skin.data.copy(out, o, ((8 * k + y) * skin.size + 8 * k + x) * 4, ((8 * k + y) * skin.size + 8 * k + x) * 4 + 4);
      if (helm) blend(out, o, skin.data, ((8 * k + y) * skin.size + 40 * k + x) * 4);
    }
  }
  return { data: out, side };
}

/** One output row of the face: texels stretched to `size` pixels, on the background if any. */
function scaledRow(face: { data: Buffer; side: number }, sy: number, size: number, bg: [number, number, number] | null): Buffer {
  const row = Buffer.alloc(size * 4);
  for (let x = 0; x < size; x += 1) {
    const o = x * 4;
    if (bg) {
      row[o] = bg[0];
      row[o + 1] = bg[1];
      row[o + 2] = bg[2];
      row[o + 3] = 255;
    }
    blend(row, o, face.data, (sy * face.side + Math.floor((x * face.side) / size)) * 4);
  }
  return row;
}

/**
 * Nearest-neighbour scaling repeats rows, so each distinct row is built once and copied; a circle
 * keeps, per row, the span of pixels whose centres are inside it. sharp only encodes the PNG.
 */
export async function renderAvatar(skin: NormalizedSkin, o: AvatarOptions): Promise<Buffer> {
  const face = faceTexels(skin, o.helm);
  const { size } = o;
  const bg = o.bg ? ([parseInt(o.bg.slice(0, 2), 16), parseInt(o.bg.slice(2, 4), 16), parseInt(o.bg.slice(4, 6), 16)] as [number, number, number]) : null;
  const out = Buffer.alloc(size * size * 4);
  const r = size / 2;
  let row: Buffer | null = null;
  let rowFor = -1;
  for (let y = 0; y < size; y += 1) {
    const sy = Math.floor((y * face.side) / size);
    if (sy !== rowFor) {
      row = scaledRow(face, sy, size, bg);
      rowFor = sy;
    }
    let from = 0;
    let to = size;
    if (o.shape === 'circle') {
      const dy = y + 0.5 - r;
      const half = Math.sqrt(Math.max(0, r * r - dy * dy));
      from = Math.max(0, Math.ceil(r - half - 0.5));
      to = Math.min(size, Math.floor(r + half - 0.5) + 1);
    }
    if (to > from) row!.copy(out, (y * size + from) * 4, from * 4, to * 4);
  }
  return sharp(out, { raw: { width: size, height: size, channels: 4 } }).png({ compressionLevel: 6 }).toBuffer();
}
