// TEMPORARY stand-in for skin-art.ts (being written in parallel); same API, flat colours.
import sharp from 'sharp';

function flat(width: number, height: number, seed: number): Promise<Buffer> {
  const background = { r: seed & 255, g: (seed >> 8) & 255, b: (seed >> 16) & 255, alpha: 1 };
  return sharp({ create: { width, height, channels: 4, background } }).png().toBuffer();
}

export function drawSkin(opts: { slim?: boolean; legacy?: boolean; scale?: number; seed?: number }): Promise<Buffer> {
  const scale = opts.scale ?? 1;
  return flat(64 * scale, (opts.legacy ? 32 : 64) * scale, (opts.seed ?? 0) + (opts.slim ? 7 : 0));
}

export function drawCape(opts: { legacy?: boolean; seed?: number } = {}): Promise<Buffer> {
  return opts.legacy ? flat(22, 17, opts.seed ?? 0) : flat(64, 32, opts.seed ?? 0);
}
