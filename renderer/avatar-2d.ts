// The 2D avatar: the face with its hat layer, scaled with nearest-neighbour texels, optionally
// cut to a circle and put on a colour. Built in JS on a small buffer; sharp only encodes the PNG.
import sharp from 'sharp';
import type { NormalizedSkin } from './skin-normalize.ts';

export interface AvatarOptions { size: number; shape: 'square' | 'circle'; helm: boolean; bg: string | null }

function parseColor(hex: string): [number, number, number] {
  return [parseInt(hex.slice(0, 2), 16), parseInt(hex.slice(2, 4), 16), parseInt(hex.slice(4, 6), 16)];
}

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

export async function renderAvatar(skin: NormalizedSkin, o: AvatarOptions): Promise<Buffer> {
  const face = faceTexels(skin, o.helm);
  const { size } = o;
  const out = Buffer.alloc(size * size * 4);
  const bg = o.bg ? parseColor(o.bg) : null;
  const r = size / 2;
  for (let y = 0; y < size; y += 1) {
    const sy = Math.floor((y * face.side) / size);
    for (let x = 0; x < size; x += 1) {
      const d = (y * size + x) * 4;
      // Pixel centres outside the circle stay transparent.
      if (o.shape === 'circle' && (x + 0.5 - r) ** 2 + (y + 0.5 - r) ** 2 > r * r) continue;
      if (bg) {
        out[d] = bg[0];
        out[d + 1] = bg[1];
        out[d + 2] = bg[2];
        out[d + 3] = 255;
      }
      blend(out, d, face.data, (sy * face.side + Math.floor((x * face.side) / size)) * 4);
    }
  }
  return sharp(out, { raw: { width: size, height: size, channels: 4 } }).png({ compressionLevel: 6 }).toBuffer();
}
