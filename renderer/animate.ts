// Frames (the farm's PNGs, one size) into one looping animation: WebP and GIF by sharp, APNG by
// our own writer (apng-encode.ts: libvips writes none).
import sharp from 'sharp';
import { encodeApng } from './apng-encode.ts';

export type AnimationFormat = 'webp' | 'apng' | 'gif';
export const ANIMATION_TYPES: Record<AnimationFormat, string> = { webp: 'image/webp', apng: 'image/apng', gif: 'image/gif' };

/**
 * CPU ms each encoder takes per megapixel of frames (issue #38: 36 frames of 128 px and 72 of
 * 256 px, docs/benchmarks.md "Work per client"): what a turntable costs its client. APNG only
 * re-chunks the frames' PNGs (~5 ms for 72 frames).
 */
export const ANIMATION_ENCODE_MS_PER_MEGAPIXEL: Record<AnimationFormat, number> = { webp: 200, apng: 2, gif: 300 };

/**
 * The animation of `frames` at `fps`, looping forever.
 * - WebP: lossless with exact RGB (a decoded frame is the PNG's pixels; alpha kept), effort 1:
 *   for 36 frames of 128 px 173 ms of CPU against 368 at the default 4, for 5% more bytes.
 * - APNG: lossless, the PNGs' own data; the delay exact (1/fps s).
 * - GIF: 256 colours and 1-bit transparency. Delays are in hundredths of a second (12 fps
 *   plays at 12.5). On a transparent background a half-covered edge pixel becomes either
 *   transparent or opaque in its own colour (libvips cuts alpha at half), so silhouettes are
 *   jagged where the PNG's are smooth; with `bg` every pixel is opaque and edges stay smoothed.
 *   Frames that happen to be equal are kept, so the frame count is always `frames.length`.
 * WebP and GIF delays are whole milliseconds: round(1000 / fps).
 */
export async function encodeAnimation(frames: Buffer[], format: AnimationFormat, fps: number): Promise<Buffer> {
  if (format === 'apng') return encodeApng(frames, 1, fps);
  // One delay per frame: a single number delays only the first (sharp 0.35 with join).
  const delay = frames.map(() => Math.round(1000 / fps));
  const joined = sharp(frames, { join: { animated: true } });
  return format === 'webp'
    ? joined.webp({ lossless: true, exact: true, effort: 1, loop: 0, delay }).toBuffer()
    : joined.gif({ loop: 0, delay, keepDuplicateFrames: true }).toBuffer();
}
