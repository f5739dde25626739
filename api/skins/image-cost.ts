// What an image that must be drawn and encoded costs its client's work budget (the `work` rate
// group, IMAGE_WORK_BUDGET): estimated CPU milliseconds, pixels x the measured cost of a
// megapixel of drawing and of encoding in the format asked for (docs/benchmarks.md, "Work per
// client"). Counting requests let one client ask for 120 AVIF bodies a minute, ~114 CPU-seconds.
import { ANIMATION_ENCODE_MS_PER_MEGAPIXEL } from '../../renderer/animate.ts';
import { encodeMsPerMegapixel, type ImageFormat } from './image-format.ts';
import type { ImageOptions } from './image-params.ts';
import type { TurntableOptions } from './turntable.ts';

/**
 * CPU ms of drawing a megapixel (the service and Chromium together): a 512 px body (0.5 MP) took
 * 130 ms. The 2D avatar costs less; charged alike, a 64 px avatar still costs only 2.
 */
const DRAW_MS_PER_MEGAPIXEL = 250;

/** Pixels of an image: a body is twice as tall as wide, every other kind square. */
export const pixelsOf = (o: Pick<ImageOptions, 'kind' | 'size'>): number => (o.kind === 'body' ? 2 : 1) * o.size * o.size;

const cost = (megapixels: number, msPerMegapixel: number) => Math.max(1, Math.ceil(megapixels * msPerMegapixel));

/** A still drawn as PNG, then encoded as `format` (WebP, AVIF) when that is asked for. */
export function stillCost(o: Pick<ImageOptions, 'kind' | 'size'>, format: ImageFormat): number {
  return drawnCost(pixelsOf(o), format);
}

/**
 * An image of `pixels` drawn as PNG and encoded as `format`: a cape image, a processed skin, a
 * group (its figures' pixels together: one render each, then the whole encoded).
 */
export function drawnCost(pixels: number, format: ImageFormat): number {
  return cost(pixels / 1e6, DRAW_MS_PER_MEGAPIXEL + encodeMsPerMegapixel(format, pixels));
}

/** A turntable: every frame drawn, then all encoded into one animation. */
export function turntableCost(o: TurntableOptions): number {
  return cost((o.frames * pixelsOf(o.still)) / 1e6, DRAW_MS_PER_MEGAPIXEL + ANIMATION_ENCODE_MS_PER_MEGAPIXEL[o.format]);
}
