// Parameters of GET /v1/turntable/{name}[/{size}]: the render's own options (the same
// declarations: a turntable's first frame is the still render with the same query), the frame
// count, the speed and the format; and the canonical key of a turntable (cache and ETag).
import type { AnimationFormat } from '../../renderer/animate.ts';
import { between, choice, inQuery, type Param, type Params } from '../http/params.ts';
import { imageOptions, optionsKey, RENDER_OPTIONS, sizeParam, type ImageOptions } from './image-params.ts';

/**
 * Largest turntable side. The frames of one turntable are drawn in one WebGL frame, read back at
 * once and held together until encoded: 72 frames of 256 px are 18.9 MB of RGBA (a 1024 x 4608
 * frame, inside every WebGL implementation's 8192 px limit); at 512 px they would be 75 MB and
 * 2048 x 9216, past it.
 */
export const TURNTABLE_MAX_SIZE = 256;
const TURNTABLE_SIZE = 128;

const frames = inQuery('frames', 'frames in one full turn', between('integer', 8, 72, 36), { example: 36 });
const fps = inQuery('fps', 'frames a second (GIF rounds the delay to hundredths of a second)', between('integer', 1, 50, 12), { example: 12 });
const format = inQuery('format', 'animated WebP (lossless), APNG or GIF (256 colours, 1-bit transparency)', choice(['webp', 'apng', 'gif'], 'webp'));

export interface TurntableOptions {
  /** The still's options: the first frame is drawn at `yaw`, each next one 360/frames further. */
  still: ImageOptions;
  frames: number; fps: number; format: AnimationFormat;
}

/** The parameters after the name: the size, the render's options, then the animation's. */
export function turntableParams(sizeIn: 'path' | 'query'): Param[] {
  return [sizeParam(sizeIn, TURNTABLE_SIZE, 'pixels (a square frame)', TURNTABLE_MAX_SIZE), ...RENDER_OPTIONS, frames, fps, format];
}

export function turntableOptions(params: Params): TurntableOptions {
  return { still: imageOptions('render', params), frames: params.frames as number, fps: params.fps as number, format: params.format as AnimationFormat };
}

/**
 * The yaw of each frame: the `yaw` asked for first, turning by increasing yaw (the figure's left
 * side comes next), each brought into -180..180 as a still's yaw is, so a frame is drawn from the
 * very numbers the still render at that yaw is (355 and -5 differ in their last bits).
 */
export function frameYaws(o: TurntableOptions): number[] {
  return Array.from({ length: o.frames }, (_, i) => {
    const yaw = (o.still.yaw + (i * 360) / o.frames) % 360;
    return yaw > 180 ? yaw - 360 : yaw < -180 ? yaw + 360 : yaw;
  });
}

/** Canonical text of what decides a turntable's bytes. */
export function turntableKey(o: TurntableOptions): string {
  return `turntable:${o.frames}:${o.fps}:${o.format}:${optionsKey(o.still)}`;
}
