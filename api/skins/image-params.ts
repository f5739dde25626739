// Parameters of the image endpoints, declared once per kind (defaults, ranges, allowed values:
// read by api/http/params.ts and described in /openapi.json), and one canonical key per option
// set (the render cache and the ETag are derived from it, so equal requests share one image).
import type { Limbs, ViewOptions } from '../../renderer/jobs.ts';
import { POSE_NAMES, type PoseName } from '../../shared/skin-layout.ts';
import { ApiError } from '../../shared/errors.ts';
import { between, choice, flag, inPath, inQuery, type Param, type Params } from '../http/params.ts';

export type ImageKind = 'avatar' | 'head' | 'body' | 'render' | 'cube' | 'bust';
export const IMAGE_KINDS: readonly ImageKind[] = ['avatar', 'head', 'body', 'render', 'cube', 'bust'];

export interface ImageOptions extends ViewOptions {
  kind: ImageKind;
  scale: number | null;
  shape: 'square' | 'circle';
  view: 'front' | 'back';
  /** Only `render` and `bust` take a pose; the others stand. */
  pose: PoseName;
  /** `render` and `bust`: a perspective camera's vertical field of view in degrees; 0 (every other kind) is orthographic. */
  fov: number;
  /** The model the skin is drawn on instead of the player's own (images.ts); null where it changes no pixel (avatar, head, cube). */
  model: Model | null;
  /** `render` and `body`: what hangs on the back (the cape, the elytra from the cape texture or grey wings without one, or nothing). */
  equip: Equip;
  /** `render`, `bust` and `body`: degrees added to the pose's head and limb angles; null when all are 0. */
  limbs: Limbs | null;
  /**
   * Upside down, as the game draws Dinnerbone and Grumm. The parameter says whether such a player
   * may be flipped; images.ts keeps it true only for them, so everyone else shares one key.
   */
  flip: boolean;
}

export const EQUIPS = ['cape', 'elytra', 'none'] as const;
export type Equip = (typeof EQUIPS)[number];
export const MODELS = ['classic', 'slim'] as const;
export type Model = (typeof MODELS)[number];

/**
 * The default view of the record's isometric address (/v1/render/{name}, no size) and of the
 * cube (an isometric cube by the spec's words): without `yaw` and `pitch` they show three faces.
 * The sized render keeps the spec's table (yaw 0, pitch 0), as do the turntable, groups and uploads. Turned 35 degrees towards the figure's left side, as the
 * head is, so the face stays the widest (cos 35 = 0.82 of its width, the side 0.57); from 30 degrees
 * above, the elevation of the 2:1 isometric of game art, so the top shows at over half the front's
 * height. Explicit values keep their meaning: yaw=0&pitch=0 is the front view.
 */
export const ISOMETRIC = { yaw: 35, pitch: 30 } as const;

const SIZE_RANGE = { min: 8, max: 512 } as const;

function color(raw: string): string | null {
  if (raw === 'transparent') return null;
  const hex = raw.replace(/^#/, '');
  if (!/^[0-9a-fA-F]{6}$/.test(hex)) throw new ApiError('bad_request', { detail: { zh: 'bg 必须是 RRGGBB 十六进制颜色', en: 'bg must be a RRGGBB hex colour' } });
  return hex.toLowerCase();
}

/** The size in pixels, in the path or in the query (not both: api/http/params.ts refuses that). */
export function sizeParam(where: 'path' | 'query', fallback: number, description = 'pixels', max: number = SIZE_RANGE.max): Param {
  const schema = between('integer', SIZE_RANGE.min, max, fallback);
  return where === 'path' ? inPath('size', description, schema, { example: fallback }) : inQuery('size', description, schema, { example: fallback });
}

const yaw = (fallback: number) => inQuery('yaw', 'degrees; 0 = front, 90 = the figure\'s left side', between('number', -180, 180, fallback));
const pitch = (fallback: number) => inQuery('pitch', 'degrees; positive looks down from above', between('number', -90, 90, fallback));
const helm = flag('helm', 1, '0 drops the hat layer (as outer=0 does)');
const outer = flag('outer', 1, '0 hides the second skin layer (as helm=0 does)');
const shadow = (fallback: 0 | 1) => flag('shadow', fallback, 'shadow under the feet');
// Checked by color(): the document says it in words (a regular expression is no help to a reader).
const bg = inQuery('bg', 'background colour: six hex digits RRGGBB (`336699`; a leading `#` is allowed, sent as `%23`), or `transparent` (the default)', { type: 'string' }, { example: '336699', read: color });
const scale = inQuery('scale', 'zoom of the figure (default fits the canvas)', between('number', 0.25, 4));
const shape = inQuery('shape', 'outline', choice(['square', 'circle'], 'square'));
const view = inQuery('view', 'side shown', choice(['front', 'back'], 'front'));
const pose = inQuery('pose', 'how the figure stands', choice(POSE_NAMES, 'standing'), { example: 'waving' });
const equip = inQuery('equip', 'what hangs on the back: the cape, the elytra drawn from the cape texture (plain grey wings when the player has no cape), or nothing', choice(EQUIPS, 'cape'), { example: 'elytra' });
const flip = flag('flip', 1, 'players named Dinnerbone or Grumm are drawn upside down, as the game draws them; 0 draws them upright');
/** An angle added to the pose's own: 0 (the default) leaves the part as the pose has it. */
const angle = (name: string, description: string) => inQuery(name, `degrees added to the pose's own: ${description}`, between('number', -180, 180, 0), { example: 30 });
const swing = (name: string, limb: string, joint: string) => angle(name, `the figure's ${limb} swings forward at the ${joint} (negative: back; 180 points it straight up)`);
/** The head's and limbs' angles (RenderJob.limbs), each with its parameter. */
const LIMB_PARAMS: ReadonlyArray<[keyof Limbs, Param]> = [
  ['headYaw', angle('head_yaw', 'the head turns towards the figure\'s left (negative: its right)')],
  ['headPitch', angle('head_pitch', 'the head nods down (negative: looks up)')],
  ['armLeft', swing('arm_left', 'left arm', 'shoulder')], ['armRight', swing('arm_right', 'right arm', 'shoulder')],
  ['legLeft', swing('leg_left', 'left leg', 'hip')], ['legRight', swing('leg_right', 'right leg', 'hip')],
];
const limbs = LIMB_PARAMS.map(([, param]) => param);
// Below 10 degrees a perspective is an orthographic view from far off; 1-9 are refused by imageOptions.
const fov = inQuery('fov', 'field of view in degrees: 0 (the default) draws an orthographic view, 10 to 90 a perspective one (the wider, the stronger), the figure framed alike', between('number', 0, 90, 0), { example: 40 });
const model = inQuery('model', 'the model the skin is drawn on: classic (arms 4 texels wide) or slim (3); default the player\'s own (an upload\'s: guessed from its pixels)', choice(MODELS), { example: 'slim' });

/** The options of `render` (GET of a player, POST of an upload), in the order the docs list them. */
export const RENDER_OPTIONS: readonly Param[] = [yaw(0), pitch(0), shadow(1), outer, helm, bg, scale, pose, equip, flip, fov, model, ...limbs];

/**
 * Per kind: the default size, the options that change its pixels (those optionsKey reads), and the
 * others, which every kind checks alike but this one does not use.
 */
const KINDS: Record<ImageKind, { summary: string; size: number; options: readonly Param[]; unused: readonly Param[] }> = {
  avatar: { summary: '2D face with its hat layer, square or round', size: 128, options: [shape, helm, outer, bg], unused: [yaw(0), pitch(0), shadow(0), scale, view, equip, flip, fov, model, ...limbs] },
  head: { summary: '3D head', size: 128, options: [yaw(35), pitch(20), helm, outer, bg, shadow(0), scale, flip], unused: [shape, view, equip, fov, model, ...limbs] },
  body: { summary: 'Full body, front or back (size wide, twice as tall)', size: 256, options: [view, outer, helm, bg, equip, flip, model, ...limbs], unused: [yaw(0), pitch(0), shadow(0), scale, shape, fov] },
  render: { summary: '3D render of the figure at any yaw and pitch', size: 256, options: RENDER_OPTIONS, unused: [shape, view] },
  cube: { summary: 'The head as a cube with its hat', size: 256, options: [yaw(ISOMETRIC.yaw), pitch(ISOMETRIC.pitch), helm, outer, bg, shadow(0), scale, flip], unused: [shape, view, equip, fov, model, ...limbs] },
  // The front, as a portrait is; no shadow (the feet are not drawn) and nothing on the back (a cape
  // hangs past the waist, out of the frame).
  bust: { summary: 'Bust: the head and the upper body to the waist, arms included, in 3D at any yaw and pitch', size: 256, options: [yaw(0), pitch(0), outer, helm, bg, scale, pose, flip, fov, model, ...limbs], unused: [shape, view, shadow(0), equip] },
};

// Every kind reads every option alike (a wrong value is still refused), so clients may send one
// set of options to all of them; the ones this kind does not use are described as deprecated.
const unused = (p: Param): Param => ({ ...p, deprecated: true, description: `${p.description}. Accepted for compatibility; this image does not use it.` });

export const imageSummary = (kind: ImageKind) => KINDS[kind].summary;

/** /v1/render/{name}, the record's isometric address: the render's options with the isometric view by default. */
const ISOMETRIC_RENDER: readonly Param[] = RENDER_OPTIONS.map((p) => (p.name === 'yaw' ? yaw(ISOMETRIC.yaw) : p.name === 'pitch' ? pitch(ISOMETRIC.pitch) : p));

/** The parameters of GET /v1/<kind>/{name}[/{size}] after the name: the size, then the options. */
export function imageParams(kind: ImageKind, sizeIn: 'path' | 'query'): Param[] {
  const { size, options, unused: others } = KINDS[kind];
  return [sizeParam(sizeIn, size), ...(kind === 'render' && sizeIn === 'query' ? ISOMETRIC_RENDER : options), ...others.map(unused)];
}

/** The options of an image request from its parameters as read. */
export function imageOptions(kind: ImageKind, params: Params): ImageOptions {
  const p = params as Partial<Record<string, unknown>>;
  const figure = kind === 'render' || kind === 'bust';
  const fieldOfView = figure ? p.fov as number : 0;
  if (fieldOfView > 0 && fieldOfView < 10) throw new ApiError('bad_request', { detail: { zh: 'fov 必须是 0 或 10 到 90 之间的数字', en: 'fov must be 0 or a number from 10 to 90' } });
  return {
    kind,
    size: p.size as number,
    yaw: p.yaw as number,
    pitch: p.pitch as number,
    shadow: p.shadow as boolean,
    // `helm` (avatar, head, cube) and `outer` (body, render) both switch the second layer.
    outer: (p.outer as boolean) && (p.helm as boolean),
    bg: (p.bg as string | null | undefined) ?? null,
    scale: (p.scale as number | undefined) ?? null,
    shape: p.shape as ImageOptions['shape'],
    view: p.view as ImageOptions['view'],
    pose: figure ? p.pose as PoseName : 'standing',
    equip: kind === 'render' || kind === 'body' ? p.equip as Equip : 'none',
    flip: kind !== 'avatar' && (p.flip as boolean),
    limbs: figure || kind === 'body' ? limbsOf(p) : null,
    fov: fieldOfView,
    // Only the arms differ: a head alone is the same on either model.
    model: figure || kind === 'body' ? (p.model as Model | undefined) ?? null : null,
  };
}

/** Default and range of each render option, for the player record (from the same declarations). */
export function renderOptionsInfo(): Record<string, unknown> {
  const info = (p: Param) => {
    const s = p.schema as { type?: string; default?: unknown; minimum?: number; maximum?: number; enum?: unknown[] };
    if (p.name === 'bg') return { default: 'transparent', format: 'RRGGBB' };
    if (s.enum) return { default: s.default, values: s.enum };
    return { default: s.default ?? null, min: s.minimum, max: s.maximum };
  };
  const shown = [sizeParam('query', KINDS.render.size), ...RENDER_OPTIONS.filter((p) => p.name !== 'helm')];
  return Object.fromEntries(shown.map((p) => [p.name, info(p)]));
}

/**
 * The renderer's look: part of every key, so a change to how images are drawn (raise it then)
 * never serves an image or a 304 of the old look. 2: translucent outer layer, light from the
 * viewer, smoothed edges, fixed framing, poses, avatar backgrounds in circle corners. 3: the outer
 * layer from both sides, no specks where layers meet, thighs closed sitting, the cape swinging with
 * the pose, the frame holding the elytra.
 */
const LOOK = 3;

// In the key only when not 0: orthographic images keep the keys (and ETags) of before `fov`. The
// model is not here: images.ts draws the subject on it, and its textures' key says the model.
const perspective = (o: ImageOptions) => (o.fov ? `:fov${o.fov}` : '');

/** The head's and limbs' angles asked for, or null when all are 0: the pose as it is. */
function limbsOf(p: Partial<Record<string, unknown>>): Limbs | null {
  const angles = Object.fromEntries(LIMB_PARAMS.map(([key, param]) => [key, (p[param.name] as number | undefined) ?? 0])) as unknown as Limbs;
  return Object.values(angles).some((a) => a !== 0) ? angles : null;
}

// In the key only when some angle is not 0, as `fov`: images without them keep their keys and ETags.
const limbsKey = (o: ImageOptions) => (o.limbs ? `:limbs${LIMB_PARAMS.map(([key]) => o.limbs![key]).join(',')}` : '');

/** Canonical text of the options that change the pixels of this kind of image. */
export function optionsKey(o: ImageOptions): string {
  switch (o.kind) {
    case 'avatar': return `${LOOK}:avatar:${o.size}:${o.shape}:${+o.outer}:${o.bg ?? '-'}`;
    case 'body': return `${LOOK}:body:${o.size}:${o.view}:${+o.outer}:${o.bg ?? '-'}:${o.equip}:${+o.flip}${limbsKey(o)}`;
    case 'render': return `${LOOK}:render:${o.size}:${o.yaw}:${o.pitch}:${+o.shadow}:${+o.outer}:${o.bg ?? '-'}:${o.scale ?? '-'}:${o.pose}:${o.equip}:${+o.flip}${perspective(o)}${limbsKey(o)}`;
    case 'bust': return `${LOOK}:bust:${o.size}:${o.yaw}:${o.pitch}:${+o.outer}:${o.bg ?? '-'}:${o.scale ?? '-'}:${o.pose}:${+o.flip}${perspective(o)}${limbsKey(o)}`;
    default: return `${LOOK}:${o.kind}:${o.size}:${o.yaw}:${o.pitch}:${+o.shadow}:${+o.outer}:${o.bg ?? '-'}:${o.scale ?? '-'}:${+o.flip}`;
  }
}
