// Images made in-process from one of a player's textures, no render farm: the cape's front face
// (GET /v1/cape/{name}/{size}) and the skin as the renderer draws it (GET /v1/skin/{name}?processed=1).
// Both are answered by ImageRenderer.replyDrawn, so formats, ETags and caching are the other images'.
import sharp from 'sharp';
import type { NormalizedCape, NormalizedSkin } from '../../renderer/skin-normalize.ts';
import { CAPE_SIZE, capeFaces } from '../../shared/skin-layout.ts';

/** Width of a cape image `height` pixels high: the face's 10:16, rounded. */
export const capeWidth = (height: number): number => Math.max(1, Math.round((height * CAPE_SIZE.w) / CAPE_SIZE.h));

/** Raw RGBA as a PNG (sharp: in libuv's pool, off the event loop). */
const rgbaPng = (data: Buffer, width: number, height: number): Promise<Buffer> => sharp(data, { raw: { width, height, channels: 4 } }).png().toBuffer();

/**
 * The cape's front face (10x16 texels at (1, 1) of a 64x32 texture, times the scale of an HD
 * cape), `height` pixels high: each pixel is the texel under it (nearest neighbour, as the avatar
 * does), so texels stay sharp at any size and the colours are the texture's own.
 */
export function capeFront(cape: NormalizedCape, height: number): Promise<Buffer> {
  const k = cape.width / 64;
  const face = capeFaces().front;
  const [left, top, w, h] = [face.x * k, face.y * k, face.w * k, face.h * k];
  const width = capeWidth(height);
  const out = Buffer.alloc(width * height * 4);
  for (let y = 0; y < height; y += 1) {
    const row = (top + Math.floor((y * h) / height)) * cape.width + left;
    for (let x = 0; x < width; x += 1) {
      const from = (row + Math.floor((x * w) / width)) * 4;
      cape.data.copy(out, (y * width + x) * 4, from, from + 4);
    }
  }
  return rgbaPng(out, width, height);
}

/** The normalised skin (legacy skins converted, the base layer opaque) as a PNG of its own size. */
export const processedSkinPng = (skin: NormalizedSkin): Promise<Buffer> => rgbaPng(skin.data, skin.size, skin.size);
