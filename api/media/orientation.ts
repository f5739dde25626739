// Orientation from displayed pixel size. Squares are neither landscape nor portrait: they are
// served by unfiltered picks only, so a "portrait" request never gets a file that is not taller.
import type { Dimensions, Orientation } from './types.ts';

export const ORIENTATION_FILTERS = ['landscape', 'portrait'] as const;
export type OrientationFilter = (typeof ORIENTATION_FILTERS)[number];

export function orientationOf({ width, height }: Dimensions): Orientation {
  if (width > height) return 'landscape';
  if (height > width) return 'portrait';
  return 'square';
}

/** EXIF orientations 5 to 8 turn the picture a quarter, so width and height trade places. */
export function applyExifOrientation(size: Dimensions, exifOrientation: number | undefined): Dimensions {
  return exifOrientation !== undefined && exifOrientation >= 5 && exifOrientation <= 8
    ? { width: size.height, height: size.width }
    : size;
}

/**
 * orientation=auto: portrait for a phone, landscape otherwise. The client hint decides when sent
 * (Chromium sends Sec-CH-UA-Mobile unasked); else the words phones put in their User-Agent.
 */
export function orientationForClient(mobileHint: string, userAgent: string): OrientationFilter {
  if (mobileHint === '?1') return 'portrait';
  if (mobileHint === '?0') return 'landscape';
  return /Mobile|Android|iPhone/.test(userAgent) ? 'portrait' : 'landscape';
}
