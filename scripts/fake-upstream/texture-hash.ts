// The authlib-injector texture hash (docs/upstream.md A4): SHA-256 over the pixels, not the file, so
// the same picture saved by different encoders keeps one address.
import { createHash } from 'node:crypto';
import sharp from 'sharp';

/**
 * Hash of raw RGBA pixels (row-major, 4 bytes a pixel): width and height as big-endian uint32,
 * then every pixel column by column as ARGB, with RGB zeroed where alpha is 0.
 */
export function pixelHash(width: number, height: number, rgba: Uint8Array): string {
  const buf = Buffer.alloc(8 + width * height * 4);
  buf.writeUInt32BE(width, 0);
  buf.writeUInt32BE(height, 4);
  let pos = 8;
  for (let x = 0; x < width; x++) {
    for (let y = 0; y < height; y++) {
      const i = (y * width + x) * 4;
      const alpha = rgba[i + 3];
      buf[pos] = alpha;
      if (alpha !== 0) {
        buf[pos + 1] = rgba[i];
        buf[pos + 2] = rgba[i + 1];
        buf[pos + 3] = rgba[i + 2];
      }
      pos += 4;
    }
  }
  return createHash('sha256').update(buf).digest('hex');
}

/** Pixel hash of a PNG (or any image sharp reads). */
export async function textureHash(image: Buffer): Promise<string> {
  const { data, info } = await sharp(image).toColourspace('srgb').ensureAlpha().raw({ depth: 'uchar' }).toBuffer({ resolveWithObject: true });
  return pixelHash(info.width, info.height, data);
}
