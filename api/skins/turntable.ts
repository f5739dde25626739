// Parameters of GET /v1/turntable/{name}[/{size}]: the render's own options (the same
// declarations: a turntable's first frame is the still render with the same query), the frame
// count, the speed and the format; and the canonical key of a turntable (cache and ETag).
import type { AnimationFormat } from '../../renderer/animate.ts';
import { ApiError } from '../../shared/errors.ts';
import { between, choice, inQuery, type Param, type Params } from '../http/params.ts';
import { explicitFormat } from './image-format.ts';
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
// No default in the schema: an extension may name the format instead (turntableOptions).
const format = inQuery('format', 'animated WebP (lossless), APNG or GIF (256 colours, 1-bit transparency); default webp; also chosen by an extension on the last path segment: `/128.gif`, `/128.png` (APNG)', choice(['webp', 'apng', 'gif']), { example: 'gif' });

/** What a file of that name holds: `.png` is the APNG (a PNG reader shows its first frame). */
const EXTENSIONS: Readonly<Record<string, AnimationFormat>> = { webp: 'webp', gif: 'gif', png: 'apng', apng: 'apng' };
// A name ([A-Za-z0-9_-], a Bedrock name's dot first) and a size end in no dot: after at least one
// character, a dot and a word that starts with a letter are an extension, known or not (`96.5`
// stays a bad size).
const EXTENSION = /(?<=.)\.([A-Za-z][A-Za-z0-9]{0,9})$/;

/**
 * The last path segment without its extension, and the format that names. An extension that
 * names no animation (`.avif`, `.jpg`) is refused by name: left on, it would read as a bad size.
 */
export function splitTurntableExtension(segment: string): { base: string; format: AnimationFormat | null } {
  const match = EXTENSION.exec(segment);
  if (!match) return { base: segment, format: null };
  const format = EXTENSIONS[match[1].toLowerCase()];
  if (!format) {
    throw new ApiError('bad_request', { detail: { zh: `不支持扩展名 ${match[0]}：转盘动画只有 webp、gif 或 png（APNG）格式`, en: `no ${match[0]} here: turntables are webp, gif or png (APNG)` } });
  }
  return { base: segment.slice(0, match.index), format };
}

export interface TurntableOptions {
  /** The still's options: the first frame is drawn at `yaw`, each next one 360/frames further. */
  still: ImageOptions;
  frames: number; fps: number; format: AnimationFormat;
}

/** The parameters after the name: the size, the render's options, then the animation's. */
export function turntableParams(sizeIn: 'path' | 'query'): Param[] {
  return [sizeParam(sizeIn, TURNTABLE_SIZE, 'pixels (a square frame)', TURNTABLE_MAX_SIZE), ...RENDER_OPTIONS, frames, fps, format];
}

/** The options of a request; `extension` is the format its path's extension named, if any. */
export function turntableOptions(params: Params, extension?: AnimationFormat | null): TurntableOptions {
  const format = explicitFormat(params.format as AnimationFormat | undefined, extension) ?? 'webp';
  return { still: imageOptions('render', params), frames: params.frames as number, fps: params.fps as number, format };
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
