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
 * `turn` turns the whole figure about its middle (0, 16, 0) before `lower`, for poses that do not
 * stand (lying, leaning back): the render's frame is then centred on that middle where it ends up.
 * `shadow` is the shadow's width (x) and depth (z) where the figure covers more ground than the
 * standing one's 18 x 11 (lying), so that it shows round the figure.
 */
export interface PartPose { rotate?: [number, number, number]; move?: [number, number, number] }
export interface Pose { lower?: number; cape?: number; turn?: [number, number, number]; shadow?: [number, number]; parts: Partial<Record<PartName, PartPose>> }

export const POSE_NAMES = [
  'standing', 'walking', 'running', 'crouching', 'waving', 'crossed-arms', 'sitting',
  'marching', 'cheering', 'pointing', 'relaxing', 'sleeping', 'dead', 'archer', 'kicking', 'lunging', 'facepalm', 'cowering', 'reading',
] as const;
export type PoseName = (typeof POSE_NAMES)[number];

// The game's sneak without its arms: crouching and cowering share it.
const CROUCH: Pose['parts'] = {
  head: { move: [0, -4.2, 0] }, body: { rotate: [28.6, 0, 0], move: [0, -3.2, 0] },
  rightLeg: { move: [0, -0.2, -4] }, leftLeg: { move: [0, -0.2, -4] },
};

// Lying flat: turned a quarter round about x (face up or down), then about y so that the figure
// lies across the picture at yaw 0, and lowered 11.5 so the back (or the face) of the head with
// its hat, which reaches furthest from the body's middle plane, rests on the ground. The cape
// lies flat against the back; the shadow is as long as the figure and wider than its arms.
const LYING = { lower: 11.5, cape: 0, shadow: [34, 20] as [number, number] };

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
  crouching: { cape: 25, parts: { ...CROUCH,
    rightArm: { rotate: [22.9, 0, -3], move: [0, -3.2, 0] }, leftArm: { rotate: [22.9, 0, 3], move: [0, -3.2, 0] },
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
  // Below: negative x swings a limb forward (-90 points it ahead, -180 straight up), y turns a
  // raised limb in towards the figure's left (positive) or right, z swings an arm out sideways
  // (negative for the right one). The cape tilts back further than any leg or arm swings back.
  // A stiff parade step: one knee high, the opposite arm swung up ahead.
  marching: { cape: 35, parts: {
    rightArm: { rotate: [30, 0, -3] }, leftArm: { rotate: [-75, 0, 3] },
    rightLeg: { rotate: [-65, 0, 0] }, leftLeg: { rotate: [4, 0, 0] },
  } },
  // Both arms thrown up in a V, face to the sky, feet a little apart.
  cheering: { parts: {
    head: { rotate: [-18, 0, 0] },
    rightArm: { rotate: [-10, 0, -155] }, leftArm: { rotate: [-10, 0, 155] },
    rightLeg: { rotate: [0, 0, -6] }, leftLeg: { rotate: [0, 0, 6] },
  } },
  // The right arm straight out ahead at shoulder height, the head turned along it.
  pointing: { parts: {
    head: { rotate: [0, -12, 0] },
    rightArm: { rotate: [-90, -12, 0] }, leftArm: { rotate: [0, 0, 4] },
  } },
  // Sitting on the ground leaning back 25 degrees on straight arms, legs stretched out ahead: the
  // legs (65 ahead of the leaning body) lie level on the ground, lowered 10.4, the arms hang
  // straight down to it behind the hips. The cape (and the elytra) tilts 68 from the leaning
  // back to stay above the ground (the frame holds no longer lean).
  relaxing: { turn: [-25, 0, 0], lower: 10.4, cape: 68, parts: {
    head: { rotate: [15, 0, 0] },
    rightArm: { rotate: [25, 0, -10] }, leftArm: { rotate: [25, 0, 10] },
    rightLeg: { rotate: [-65, 0, -3] }, leftLeg: { rotate: [-65, 0, 3] },
  } },
  // On the back, face up (head to the viewer's left at yaw 0), arms at the sides; with the head
  // on the ground the body is 2.5 above it, so arms and legs slope down 14 and 12 degrees to it,
  // and the cape under the back slopes down 5 to stay below the legs.
  sleeping: { ...LYING, cape: 5, turn: [-90, 90, 0], parts: {
    rightArm: { rotate: [14, 0, -5] }, leftArm: { rotate: [14, 0, 5] },
    rightLeg: { rotate: [12, 0, 0] }, leftLeg: { rotate: [12, 0, 0] },
  } },
  // Face down (head to the viewer's right at yaw 0), arms and legs flung out, sloping down to the
  // ground as sleeping's do.
  dead: { ...LYING, turn: [90, 90, 0], parts: {
    rightArm: { rotate: [-14, 0, -70] }, leftArm: { rotate: [-14, 0, 55] },
    rightLeg: { rotate: [-12, 0, -14] }, leftLeg: { rotate: [-12, 0, 10] },
  } },
  // Drawing a bow: the left arm holds it out ahead and to the left, the right pulls the string
  // across the chest, the head looks along the arrow, feet apart.
  archer: { parts: {
    head: { rotate: [0, 30, 0] },
    rightArm: { rotate: [-90, 60, 0] }, leftArm: { rotate: [-90, 28, 0] },
    rightLeg: { rotate: [10, 0, -6] }, leftLeg: { rotate: [-10, 0, 6] },
  } },
  // The right leg kicked up ahead, arms out for balance, the right one back.
  kicking: { cape: 40, parts: {
    head: { rotate: [8, 0, 0] },
    rightArm: { rotate: [35, 0, -25] }, leftArm: { rotate: [-30, 0, 25] },
    rightLeg: { rotate: [-85, 0, 0] },
  } },
  // A long step: the front leg 38 degrees ahead, the back one 38 behind, lowered 2 so both feet
  // stay on the ground (a longer step would leave the frame); the right arm thrusts ahead, the
  // left swings back.
  lunging: { lower: 2, cape: 45, parts: {
    rightArm: { rotate: [-80, 0, 0] }, leftArm: { rotate: [40, 0, 8] },
    rightLeg: { rotate: [-38, 0, 0] }, leftLeg: { rotate: [38, 0, 0] },
  } },
  // The right hand over the face (up, ahead and in to the middle), the head bowed into it.
  facepalm: { parts: {
    head: { rotate: [12, 0, 0] },
    rightArm: { rotate: [-129, 43, 0] }, leftArm: { rotate: [0, 0, 4] },
  } },
  // Crouched (the sneak's body and legs), head ducked, both arms up over it.
  cowering: { cape: 25, parts: { ...CROUCH,
    head: { rotate: [25, 0, 0], move: [0, -4.2, 0] },
    rightArm: { rotate: [-150, 28, 0], move: [0, -3.2, 0] }, leftArm: { rotate: [-150, -28, 0], move: [0, -3.2, 0] },
  } },
  // Holding a book at chest height: both arms ahead and down, in towards the middle, the head
  // bowed to look at it.
  reading: { parts: {
    head: { rotate: [28, 0, 0] },
    rightArm: { rotate: [-50, 22, 0] }, leftArm: { rotate: [-50, -22, 0] },
  } },
};