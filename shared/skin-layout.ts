// Skin and cape texture layout (64x64 units; HD skins scale every number by width / 64).
// Box faces follow the game's UV rule: see docs/upstream.md A7.

export type FaceName = 'top' | 'bottom' | 'right' | 'front' | 'left' | 'back';
export const FACE_NAMES: readonly FaceName[] = ['top', 'bottom', 'right', 'front', 'left', 'back'];

export type PartName = 'head' | 'body' | 'rightArm' | 'leftArm' | 'rightLeg' | 'leftLeg';
export const PART_NAMES: readonly PartName[] = ['head', 'body', 'rightArm', 'leftArm', 'rightLeg', 'leftLeg'];

export type Layer = 'inner' | 'outer';

export interface Rect { x: number; y: number; w: number; h: number }
export interface BoxSize { w: number; h: number; d: number }

/** The six face rectangles of a box whose texture origin is (u, v). */
export function boxFaces(u: number, v: number, { w, h, d }: BoxSize): Record<FaceName, Rect> {
  return {
    top: { x: u + d, y: v, w, h: d },
    bottom: { x: u + d + w, y: v, w, h: d },
    right: { x: u, y: v + d, w: d, h },
    front: { x: u + d, y: v + d, w, h },
    left: { x: u + d + w, y: v + d, w: d, h },
    back: { x: u + 2 * d + w, y: v + d, w, h },
  };
}

interface PartLayout { inner: [number, number]; outer: [number, number]; size: BoxSize }

const PARTS: Record<PartName, PartLayout> = {
  head: { inner: [0, 0], outer: [32, 0], size: { w: 8, h: 8, d: 8 } },
  body: { inner: [16, 16], outer: [16, 32], size: { w: 8, h: 12, d: 4 } },
  rightArm: { inner: [40, 16], outer: [40, 32], size: { w: 4, h: 12, d: 4 } },
  leftArm: { inner: [32, 48], outer: [48, 48], size: { w: 4, h: 12, d: 4 } },
  rightLeg: { inner: [0, 16], outer: [0, 32], size: { w: 4, h: 12, d: 4 } },
  leftLeg: { inner: [16, 48], outer: [0, 48], size: { w: 4, h: 12, d: 4 } },
};

/** Box size of a part; slim arms are 3 texels wide. */
export function partSize(part: PartName, slim: boolean): BoxSize {
  const size = PARTS[part].size;
  return slim && (part === 'rightArm' || part === 'leftArm') ? { ...size, w: 3 } : size;
}

/** Face rectangles of one part's layer, in 64-unit texture coordinates. */
export function partFaces(part: PartName, layer: Layer, slim = false): Record<FaceName, Rect> {
  const [u, v] = PARTS[part][layer];
  return boxFaces(u, v, partSize(part, slim));
}

/** Cape texture: 64x32 units, a 10x16x1 box at (0, 0). */
export const CAPE_SIZE: BoxSize = { w: 10, h: 16, d: 1 };
export function capeFaces(): Record<FaceName, Rect> {
  return boxFaces(0, 0, CAPE_SIZE);
}

/**
 * The elytra in the same texture: each wing a 10x20x2 box at (22, 0), so (22,0)-(46,22); the
 * right wing is the game's mirrored box (ElytraModel: texOffs(22, 0), mirror() for the right).
 */
export const ELYTRA_SIZE: BoxSize = { w: 10, h: 20, d: 2 };
export function elytraFaces(): Record<FaceName, Rect> {
  return boxFaces(22, 0, ELYTRA_SIZE);
}

export const SKIN_UNIT = 64;
export const MAX_SKIN_BYTES = 2 * 1024 * 1024;

/** Default skins of the modern client, in table order (docs/upstream.md A6). */
export const DEFAULT_SKIN_NAMES = ['alex', 'ari', 'efe', 'kai', 'makena', 'noor', 'steve', 'sunny', 'zuri'] as const;
export type DefaultSkinName = (typeof DEFAULT_SKIN_NAMES)[number];

/**
 * Poses of the 3D render. Angles are degrees about the part's pivot (shoulder, hip, neck), in the
 * figure's axes (x towards its left side, y up, z towards its front), as the rotation matrix
 * Rz * Ry * Rx (the game's order); positive x swings a hanging part's lower end backwards, as
 * the game's xRot does. `move` shifts the part (skin texels), `lower` the whole figure. `cape` is
 * the cape's tilt back from the body (degrees; 10 at rest): it swings back with speed as in the
 * game, far enough that the legs and swinging arms never pass through it; the elytra with it.
 */
export interface PartPose { rotate?: [number, number, number]; move?: [number, number, number] }
export interface Pose { lower?: number; cape?: number; parts: Partial<Record<PartName, PartPose>> }

export const POSE_NAMES = ['standing', 'walking', 'running', 'crouching', 'waving', 'crossed-arms', 'sitting'] as const;
export type PoseName = (typeof POSE_NAMES)[number];

export const POSES: Record<PoseName, Pose> = {
  standing: { parts: {} },
  // Mid-stride the swing lifts the feet: lowered by 2 to bring them down (more would enlarge the frame).
  walking: { lower: 2, cape: 35, parts: {
    rightArm: { rotate: [-32, 0, -3] }, leftArm: { rotate: [32, 0, 3] },
    rightLeg: { rotate: [35, 0, 0] }, leftLeg: { rotate: [-35, 0, 0] },
  } },
  running: { lower: 2, cape: 60, parts: {
    head: { rotate: [8, 0, 0] },
    rightArm: { rotate: [-70, 0, -6] }, leftArm: { rotate: [60, 0, 6] },
    rightLeg: { rotate: [55, 0, 0] }, leftLeg: { rotate: [-60, 0, 0] },
  } },
  // The game's sneak: the body leans 0.5 rad forward, head and arms come down with it, legs step
  // back; the cape hangs further from the leaning back (the game adds 25 degrees).
  crouching: { cape: 25, parts: {
    head: { move: [0, -4.2, 0] }, body: { rotate: [28.6, 0, 0], move: [0, -3.2, 0] },
    rightArm: { rotate: [22.9, 0, -3], move: [0, -3.2, 0] }, leftArm: { rotate: [22.9, 0, 3], move: [0, -3.2, 0] },
    rightLeg: { move: [0, -0.2, -4] }, leftLeg: { move: [0, -0.2, -4] },
  } },
  waving: { parts: {
    head: { rotate: [0, -10, 0] },
    rightArm: { rotate: [0, 0, -150] }, leftArm: { rotate: [0, 0, 4] },
  } },
  'crossed-arms': { parts: {
    rightArm: { rotate: [-55, 48, 0] }, leftArm: { rotate: [-47, -48, 0] },
  } },
  // Sitting on an edge: legs forward and a little apart, hands on the knees. Spread 18 degrees
  // each (the game's riding pose) the thighs left a see-through gap: 5, and each leg moved 1.1
  // inwards, keeps the inner edges touching from hip to knee.
  sitting: { lower: 6, parts: {
    rightArm: { rotate: [-36, 0, -2] }, leftArm: { rotate: [-36, 0, 2] },
    rightLeg: { rotate: [-81, -5, 0], move: [1.1, 0, 0] }, leftLeg: { rotate: [-81, 5, 0], move: [-1.1, 0, 0] },
  } },
};
