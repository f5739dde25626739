// Several players in one picture (GET /v1/group/{size}?names=): the names a group takes and how
// its figures are put side by side. The figures themselves are renders (images.ts renderPng).
import sharp from 'sharp';
import { ApiError } from '../../shared/errors.ts';

/** Players in one group at most: each is a render of its own, charged to the client as one. */
export const GROUP_MAX = 8;

/**
 * The names and UUIDs of `names=`, in the order given. The same player may come twice (drawn
 * twice, rendered once: the render cache holds the figure).
 */
export function groupNames(raw: string): string[] {
  const names = raw.split(',');
  if (names.includes('')) throw new ApiError('bad_request', { detail: { zh: 'names 中有空的条目', en: 'names holds an empty entry' } });
  if (names.length > GROUP_MAX) {
    throw new ApiError('bad_request', { detail: { zh: `一张合影最多 ${GROUP_MAX} 名玩家`, en: `a group holds at most ${GROUP_MAX} players` } });
  }
  return names;
}

/**
 * The figures (each a `size` x `size` PNG render) side by side, left to right, on one canvas
 * `size` high. Copied row by row, not blended: each figure's pixels are its render's exactly.
 */
export async function composeGroup(figures: readonly Buffer[], size: number): Promise<Buffer> {
  const raws = await Promise.all(figures.map((png) => sharp(png).ensureAlpha().raw().toBuffer()));
  const width = figures.length * size;
  const out = Buffer.alloc(width * size * 4);
  raws.forEach((raw, i) => {
    for (let y = 0; y < size; y += 1) raw.copy(out, (y * width + i * size) * 4, y * size * 4, (y + 1) * size * 4);
  });
  return sharp(out, { raw: { width, height: size, channels: 4 } }).png().toBuffer();
}
