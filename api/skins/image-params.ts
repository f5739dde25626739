// Parameters of the image endpoints: defaults, ranges and one canonical key per option set
// (the render cache and the ETag are derived from it, so equal requests share one image).
import type { Context } from 'koa';
import { ApiError } from '../../shared/errors.ts';
import type { ViewOptions } from '../../renderer/jobs.ts';
import { POSE_NAMES, type PoseName } from '../../shared/skin-layout.ts';
import { queryFlag, queryParam } from '../http/body.ts';

export type ImageKind = 'avatar' | 'head' | 'body' | 'render' | 'cube';

export interface ImageOptions extends ViewOptions {
  kind: ImageKind;
  scale: number | null;
  shape: 'square' | 'circle';
  view: 'front' | 'back';
  /** Only `render` takes a pose; the others stand. */
  pose: PoseName;
}

const DEFAULTS: Record<ImageKind, Omit<ImageOptions, 'kind'>> = {
  avatar: { size: 128, yaw: 0, pitch: 0, shadow: false, outer: true, bg: null, scale: null, shape: 'square', view: 'front', pose: 'standing' },
  head: { size: 128, yaw: 35, pitch: 20, shadow: false, outer: true, bg: null, scale: null, shape: 'square', view: 'front', pose: 'standing' },
  body: { size: 256, yaw: 0, pitch: 0, shadow: false, outer: true, bg: null, scale: null, shape: 'square', view: 'front', pose: 'standing' },
  render: { size: 256, yaw: 0, pitch: 0, shadow: true, outer: true, bg: null, scale: null, shape: 'square', view: 'front', pose: 'standing' },
  cube: { size: 256, yaw: 0, pitch: 0, shadow: false, outer: true, bg: null, scale: null, shape: 'square', view: 'front', pose: 'standing' },
};

export const SIZE_RANGE = { min: 8, max: 512 } as const;

/** Plain decimal numbers only: Number() would also take "0x40", "1e2", " 64" and "064". */
const INTEGER = /^-?(0|[1-9]\d*)$/;
const DECIMAL = /^-?(0|[1-9]\d*)(\.\d+)?$/;

function number(ctx: Context, name: string, fallback: number, min: number, max: number, integer: boolean, raw = queryParam(ctx, name)): number {
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!(integer ? INTEGER : DECIMAL).test(raw) || value < min || value > max) {
    throw new ApiError('bad_request', { detail: {
      zh: `${name} 必须是 ${min} 到 ${max} 之间的${integer ? '整数' : '数字'}`,
      en: `${name} must be ${integer ? 'an integer' : 'a number'} from ${min} to ${max}`,
    } });
  }
  return value;
}

function choice<T extends string>(ctx: Context, name: string, fallback: T, allowed: readonly T[]): T {
  const raw = queryParam(ctx, name);
  if (raw === undefined) return fallback;
  if (!(allowed as readonly string[]).includes(raw)) {
    throw new ApiError('bad_request', { detail: { zh: `${name} 只能是 ${allowed.join(' 或 ')}`, en: `${name} must be ${allowed.join(' or ')}` } });
  }
  return raw as T;
}

function color(ctx: Context): string | null {
  const raw = queryParam(ctx, 'bg');
  if (raw === undefined || raw === 'transparent') return null;
  const hex = raw.replace(/^#/, '');
  if (!/^[0-9a-fA-F]{6}$/.test(hex)) throw new ApiError('bad_request', { detail: { zh: 'bg 必须是 RRGGBB 十六进制颜色', en: 'bg must be a RRGGBB hex colour' } });
  return hex.toLowerCase();
}

/** Reads and validates every option of an image request; the size may come from the path. */
export function parseImageOptions(ctx: Context, kind: ImageKind): ImageOptions {
  const d = DEFAULTS[kind];
  const inQuery = queryParam(ctx, 'size');
  if (ctx.params.size !== undefined && inQuery !== undefined) {
    throw new ApiError('bad_request', { detail: { zh: 'size 只能在路径或查询参数中给出一次', en: 'size is given both in the path and in the query' } });
  }
  const size = number(ctx, 'size', d.size, SIZE_RANGE.min, SIZE_RANGE.max, true, ctx.params.size ?? inQuery);
  const helm = queryFlag(ctx, 'helm', true);
  return {
    kind,
    size,
    yaw: number(ctx, 'yaw', d.yaw, -180, 180, false),
    pitch: number(ctx, 'pitch', d.pitch, -90, 90, false),
    shadow: queryFlag(ctx, 'shadow', d.shadow),
    // `helm` (avatar, head, cube) and `outer` (body, render) both switch the second layer.
    outer: queryFlag(ctx, 'outer', d.outer) && helm,
    bg: color(ctx),
    scale: queryParam(ctx, 'scale') === undefined ? null : number(ctx, 'scale', 1, 0.25, 4, false),
    shape: choice(ctx, 'shape', d.shape, ['square', 'circle'] as const),
    view: choice(ctx, 'view', d.view, ['front', 'back'] as const),
    pose: kind === 'render' ? choice(ctx, 'pose', d.pose, POSE_NAMES) : d.pose,
  };
}

/**
 * The renderer's look: part of every key, so a change to how images are drawn (raise it then)
 * never serves an image or a 304 of the old look. 2: translucent outer layer, light from the
 * viewer, smoothed edges, fixed framing, poses, avatar backgrounds in circle corners.
 */
const LOOK = 2;

/** Canonical text of the options that change the pixels of this kind of image. */
export function optionsKey(o: ImageOptions): string {
  switch (o.kind) {
    case 'avatar': return `${LOOK}:avatar:${o.size}:${o.shape}:${+o.outer}:${o.bg ?? '-'}`;
    case 'body': return `${LOOK}:body:${o.size}:${o.view}:${+o.outer}:${o.bg ?? '-'}`;
    case 'render': return `${LOOK}:render:${o.size}:${o.yaw}:${o.pitch}:${+o.shadow}:${+o.outer}:${o.bg ?? '-'}:${o.scale ?? '-'}:${o.pose}`;
    default: return `${LOOK}:${o.kind}:${o.size}:${o.yaw}:${o.pitch}:${+o.shadow}:${+o.outer}:${o.bg ?? '-'}:${o.scale ?? '-'}`;
  }
}
