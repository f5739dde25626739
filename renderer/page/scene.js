// @ts-check
// Runs inside the headless Chromium page: draws players with three.js and answers PNG data URLs.
// One WebGL canvas kept out of the document (no compositor); a minimal shader (nearest texel, a
// light that comes from the viewer), the outer layer blended back to front, an orthographic
// camera whose scale depends only on the output size and `scale`, silhouettes smoothed after
// readback (edges.js).
import * as THREE from 'three';
import { LAYOUT, TEXTURE_BYTES } from './page-settings.js';
import { finishTile } from './edges.js';
import { unpackTexels } from './texels.js';
/** @import { PageAnswer, PageApi, PartLayout } from './api.ts' */
/** @import { Limbs, PageJob, PageTexels, PageTexture } from '../jobs.ts' */
/** @import { BoxSize, FaceName, PartName, PartPose, PoseName, Rect } from '../../shared/skin-layout.ts' */
/** @typedef {[number, number, number]} Vec3 */
/** @typedef {PartLayout & { at: Vec3, inflate: number }} Part A part as the model places it. */
/** @typedef {{ from: number, to: number, centre: THREE.Vector3 }} BoxRange One box's indices in a merged geometry, and its centre. */

// Colours are texel values, not colours to manage: what the skin says is what the PNG gets.
THREE.ColorManagement.enabled = false;

const canvas = document.createElement('canvas');
// No MSAA: on SwiftShader it doubled the cost of a render; edges.js smooths silhouettes instead.
const renderer = new THREE.WebGLRenderer({ canvas, alpha: true, antialias: false, premultipliedAlpha: false, preserveDrawingBuffer: false });
renderer.setPixelRatio(1);
renderer.outputColorSpace = THREE.LinearSRGBColorSpace;

// A context lost once (its GPU process died: a driver crash, an OOM kill) is never trusted again,
// even restored: three.js restores it with what it can rebuild, and a restored page drew every
// render without its shadow. Checked before and after every batch; the worker replaces the page.
let contextLost = false;
canvas.addEventListener('webglcontextlost', () => { contextLost = true; });
function checkContext() {
  contextLost ||= renderer.getContext().isContextLost();
  if (contextLost) throw new Error('the WebGL context was lost');
}

// Light from the viewer's upper left, in view space: a face turned to the viewer keeps 97% of its
// texel colour, faces turned away darken to the ambient 60%, so the figure reads as 3D from
// every angle without greying the front.
const LIGHT = new THREE.Vector3(-0.25, 0.35, 1).normalize();
const AMBIENT = 0.6;

const VERTEX = `
varying vec2 vUv;
varying float vShade;
void main() {
  vUv = uv;
  vec3 n = normalize(normalMatrix * normal);
  vShade = ${AMBIENT.toFixed(2)} + ${(1 - AMBIENT).toFixed(2)} * max(dot(n, vec3(${LIGHT.toArray().map((v) => v.toFixed(5)).join(', ')})), 0.0);
  gl_Position = projectionMatrix * modelViewMatrix * vec4(position, 1.0);
}`;
// The drawing buffer holds premultiplied colour (blending and edge smoothing mix it right);
// finishTile (edges.js) turns it into the PNG's straight colour or puts it over the background.
const FRAGMENT = `
uniform sampler2D map;
varying vec2 vUv;
varying float vShade;
void main() {
  vec4 texel = texture2D(map, vUv);
#ifdef BLEND
  if (texel.a < 0.002) discard;
  gl_FragColor = vec4(texel.rgb * vShade * texel.a, texel.a);
#else
  if (texel.a < 0.5) discard;
  gl_FragColor = vec4(texel.rgb * vShade, 1.0);
#endif
}`;

/**
 * Opaque with holes (inner layer, cape), or blended (the outer layer, translucent as in the game).
 * Three materials in all, their texture switched per job: one per texture cost a program lookup
 * and uniform setup for every new skin, and their disposal.
 * @param {boolean} blend
 */
function material(blend) {
  return new THREE.ShaderMaterial({
    vertexShader: VERTEX,
    fragmentShader: FRAGMENT,
    uniforms: { map: { value: null } },
    defines: blend ? { BLEND: '' } : {},
    transparent: blend,
    premultipliedAlpha: true,
  });
}
const MATERIALS = { skin: material(false), outer: material(true), cape: material(false) };

/**
 * The material `name` drawing `texture` (each render uploads its uniforms afresh).
 * @param {keyof typeof MATERIALS} name
 * @param {THREE.Texture} texture
 */
function materialFor(name, texture) {
  const m = MATERIALS[name];
  m.uniforms.map.value = texture;
  return m;
}

// BoxGeometry face order: +x, -x, +y, -y, +z, -z. The figure faces +z, so +x is its left side.
/** @type {FaceName[]} */
const FACE_ORDER = ['left', 'right', 'top', 'bottom', 'front', 'back'];

const UV_INSET = 0.002;

/**
 * A box of `size` units whose faces show `faces` (texture rectangles) of a texW x texH layout.
 * @param {BoxSize} size
 * @param {Record<FaceName, Rect>} faces
 * @param {number} texW
 * @param {number} texH
 * @param {number} inflate
 * @param {boolean} [mirror] the game's mirrored box (the right wing of the elytra): each face flipped left to right, left and right faces swapped
 */
function texturedBox({ w, h, d }, faces, texW, texH, inflate, mirror = false) {
  const geometry = new THREE.BoxGeometry(w + inflate * 2, h + inflate * 2, d + inflate * 2);
  const uv = geometry.getAttribute('uv');
  FACE_ORDER.forEach((name, face) => {
    const r = faces[mirror && name === 'left' ? 'right' : mirror && name === 'right' ? 'left' : name];
    // Pulled in by a sliver of a texel: interpolated coordinates at a face's very edge must not
    // land in the neighbouring texel row (another part's colour, or an opaque pixel where a hat
    // has a hole), which SwiftShader otherwise draws as a one-pixel seam.
    const left = (r.x + UV_INSET) / texW, right = (r.x + r.w - UV_INSET) / texW;
    const [x0, x1] = mirror ? [right, left] : [left, right];
    const top = (r.y + UV_INSET) / texH, bottom = (r.y + r.h - UV_INSET) / texH;
    // The game draws the bottom face as if seen from above, through the box: its first texture
    // row is the back edge, not the front one, so it runs upside down compared with the others.
    const [y0, y1] = name === 'bottom' ? [bottom, top] : [top, bottom];
    // Vertex order per face: top-left, top-right, bottom-left, bottom-right (seen from outside).
    const corners = [[x0, y0], [x1, y0], [x0, y1], [x1, y1]];
    corners.forEach(([cu, cv], i) => uv.setXY(face * 4 + i, cu, cv));
  });
  uv.needsUpdate = true;
  return geometry;
}

// Where each part stands (units; feet at y = 0) and the joint it turns about in a pose.
/** @type {{ head: Vec3, body: Vec3, rightLeg: Vec3, leftLeg: Vec3 }} */
const PLACE = { head: [0, 28, 0], body: [0, 18, 0], rightLeg: [-2, 6, 0], leftLeg: [2, 6, 0] };
/** @type {Record<PartName, Vec3>} */
const PIVOT = { head: [0, 24, 0], body: [0, 24, 0], rightArm: [-5, 22, 0], leftArm: [5, 22, 0], rightLeg: [-2, 12, 0], leftLeg: [2, 12, 0] };

// Inner faces that lie on another part when standing (arms on the body, legs on each other and
// under the body): never visible, and drawn at the same depth as their neighbour they showed as
// one-pixel seams. In other poses limbs turn away and these faces can show, so all are drawn.
/** @type {Partial<Record<PartName, FaceName[]>>} */
const HIDDEN_STANDING = { body: ['top', 'bottom'], rightArm: ['left'], leftArm: ['right'], rightLeg: ['top', 'left'], leftLeg: ['top', 'right'] };

// How far each part's outer layer stands off its box (the game's 0.5 for the hat, 0.25 for the
// rest). Where two parts' layers meet they share planes (jacket and sleeves or trousers, one
// trouser leg and the other), which drew as specks of either; a hundredth of a texel more for
// one of them keeps the jacket over sleeves and trousers, the sleeves over trousers, the left
// trouser leg over the right, as a polygon offset would without a draw call per part.
/** @type {Record<PartName, number>} */
const OUTER_INFLATE = { head: 0.5, body: 0.28, rightArm: 0.27, leftArm: 0.27, leftLeg: 0.26, rightLeg: 0.25 };

/**
 * Size, texture rectangles, place and outer-layer offset of each part; sizes and rectangles come
 * from shared/skin-layout.ts (served in /page-settings.js).
 * @param {boolean} slim
 * @returns {Record<PartName, Part>}
 */
function parts(slim) {
  const model = LAYOUT.parts[slim ? 'slim' : 'classic'];
  const armX = 4 + model.rightArm.size.w / 2;
  /** @type {Record<PartName, Vec3>} */
  const place = { ...PLACE, rightArm: [-armX, 18, 0], leftArm: [armX, 18, 0] };
  return /** @type {Record<PartName, Part>} */ (Object.fromEntries(Object.entries(model).map(([name, p]) => [name, { ...p, at: place[/** @type {PartName} */ (name)], inflate: OUTER_INFLATE[/** @type {PartName} */ (name)] }])));
}

/** @type {(list: Vec3) => Vec3} */
const degrees = (list) => /** @type {Vec3} */ (list.map((d) => THREE.MathUtils.degToRad(d)));

// The standing figure's middle: a pose's `turn` turns the whole figure about it.
const MIDDLE = 16;

// Which angle of which part each of a job's limb angles adds to, and with what sign: the head's
// pitch and yaw are the pose's x and y as they are; limbs swing forward, which is negative x.
/** @type {Record<keyof Limbs, [PartName, 0 | 1, 1 | -1]>} */
const LIMB_ANGLES = { headYaw: ['head', 1, 1], headPitch: ['head', 0, 1], armLeft: ['leftArm', 0, -1], armRight: ['rightArm', 0, -1], legLeft: ['leftLeg', 0, -1], legRight: ['rightLeg', 0, -1] };

/**
 * Where a part of a posed figure goes: about its joint (the pose's angles plus the job's limb
 * angles), then moved; the whole figure turned about its middle, then lowered.
 * @param {PoseName} pose
 * @param {PartName} name
 * @param {Limbs} [limbs]
 */
function poseMatrix(pose, name, limbs) {
  const { rotate = [0, 0, 0], move = [0, 0, 0] } = LAYOUT.poses[pose].parts[name] ?? /** @type {PartPose} */ ({});
  /** @type {Vec3} */
  const angles = [...rotate];
  if (limbs) for (const [limb, [part, axis, sign]] of Object.entries(LIMB_ANGLES)) if (part === name) angles[axis] += sign * limbs[/** @type {keyof Limbs} */ (limb)];
  const pivot = new THREE.Vector3(...PIVOT[name]);
  const { lower = 0, turn } = LAYOUT.poses[pose];
  const figureMatrix = new THREE.Matrix4().makeTranslation(0, -lower, 0);
  if (turn) {
    figureMatrix.multiply(new THREE.Matrix4().makeTranslation(0, MIDDLE, 0))
      .multiply(new THREE.Matrix4().makeRotationFromEuler(new THREE.Euler(...degrees(turn), 'ZYX')))
      .multiply(new THREE.Matrix4().makeTranslation(0, -MIDDLE, 0));
  }
  return figureMatrix.multiply(new THREE.Matrix4().makeTranslation(pivot.x + move[0], pivot.y + move[1], pivot.z + move[2]))
    .multiply(new THREE.Matrix4().makeRotationFromEuler(new THREE.Euler(...degrees(angles), 'ZYX')))
    .multiply(new THREE.Matrix4().makeTranslation(-pivot.x, -pivot.y, -pivot.z));
}

/**
 * A part's box in a pose: its pose matrix times its place.
 * @param {PoseName} pose
 * @param {PartName} name
 * @param {Part} p
 * @param {Limbs} [limbs]
 */
function partMatrix(pose, name, p, limbs) {
  return poseMatrix(pose, name, limbs).multiply(new THREE.Matrix4().makeTranslation(...p.at));
}

// The cape hangs from the top of the body's back (its inside touching the body, as in the game),
// tilted back by the pose's `cape` angle (10 degrees at rest, more the faster the pose, so the
// legs never pass through it); its "front" texture faces away from the body, so the box is
// turned half round. It moves with the body.
/** @param {PoseName} pose */
const capeTilt = (pose) => THREE.MathUtils.degToRad(LAYOUT.poses[pose].cape ?? 10);
/** @param {PoseName} pose */
function capeMatrix(pose) {
  return poseMatrix(pose, 'body')
    .multiply(new THREE.Matrix4().makeTranslation(0, 24, -2))
    .multiply(new THREE.Matrix4().makeRotationX(capeTilt(pose)))
    .multiply(new THREE.Matrix4().makeTranslation(0, -8, -0.5))
    .multiply(new THREE.Matrix4().makeRotationY(Math.PI));
}

// The elytra as the game's ElytraModel has it: two 10x20x2 boxes (texture at 22,0 of the cape
// texture, the right wing mirrored) grown by 1 on every side, hung from the outer top corners
// of the body's back 2 texels behind it, tilted back 15 degrees and out 15; tilted back further
// in the poses that swing the cape, as it is. Crouching, the game spreads them 45 degrees and
// tilts them 40 from the upright, 11.4 from our leaning body.
// The left wing stands a hundredth of a texel off the right one: the two share a plane.
/** @param {PoseName} pose */
function elytraMatrices(pose) {
  const crouching = pose === 'crouching';
  const spread = THREE.MathUtils.degToRad(crouching ? 45 : 15);
  const tilt = crouching ? THREE.MathUtils.degToRad(40) - THREE.MathUtils.degToRad(LAYOUT.poses.crouching.parts.body?.rotate?.[0] ?? 0) : capeTilt(pose) + THREE.MathUtils.degToRad(5);
  return [1, -1].map((side) => poseMatrix(pose, 'body')
    .multiply(new THREE.Matrix4().makeTranslation(side * 5, 24, -2))
    .multiply(new THREE.Matrix4().makeRotationFromEuler(new THREE.Euler(tilt, 0, side * spread, 'ZYX')))
    .multiply(new THREE.Matrix4().makeTranslation(-side * 5, -10, -1)));
}

/**
 * Both wings, in one geometry, drawn from both sides (the game draws them without culling).
 * @param {PoseName} pose
 */
function elytraGeometry(pose) {
  return cached(`elytra:${pose}`, () => {
    const { size, faces } = LAYOUT.elytra;
    const [left, right] = elytraMatrices(pose);
    return mergeBoxes([
      { geometry: texturedBox(size, faces, 64, 32, 1.01), matrix: left },
      { geometry: texturedBox(size, faces, 64, 32, 1, true), matrix: right },
    ], true);
  });
}

/** @type {Map<string, unknown>} */
const geometryCache = new Map();
/**
 * @template T
 * @param {string} key
 * @param {() => T} build
 * @returns {T}
 */
function cached(key, build) {
  let value = /** @type {T | undefined} */ (geometryCache.get(key));
  if (!value) {
    value = build();
    geometryCache.set(key, value);
  }
  return value;
}

/**
 * @param {PageTexels} texels
 * @param {number} width
 * @param {number} height
 */
function rgbaTexture(texels, width, height) {
  return texelTexture(unpackTexels(texels, new Uint8Array(width * height * 4)), width, height);
}

/**
 * A texture of RGBA bytes drawn texel by texel, as the skin says (no filtering, no colour space).
 * @param {Uint8Array} data
 * @param {number} width
 * @param {number} height
 */
function texelTexture(data, width, height) {
  const texture = new THREE.DataTexture(data, width, height, THREE.RGBAFormat);
  texture.magFilter = THREE.NearestFilter;
  texture.minFilter = THREE.NearestFilter;
  texture.generateMipmaps = false;
  texture.colorSpace = THREE.NoColorSpace;
  texture.needsUpdate = true;
  return texture;
}

/**
 * Refills an evicted texture of the same size in place: three.js then updates its GL texture (texSubImage2D) instead of making one.
 * @param {THREE.DataTexture} texture
 * @param {PageTexels} texels
 */
function refill(texture, texels) {
  unpackTexels(texels, /** @type {Uint8Array} */ (texture.image.data));
  texture.userData = {};
  texture.needsUpdate = true;
  return texture;
}

/**
 * Whether the rectangles of the cape (an elytra-only texture) or of the elytra (a cape-only one)
 * in a cape texture are all transparent: then that thing is not drawn.
 * @param {THREE.DataTexture} texture
 * @param {'cape' | 'elytra'} thing
 */
function blankIn(texture, thing) {
  const known = texture.userData[thing];
  if (known !== undefined) return known;
  const { width } = texture.image;
  const data = /** @type {Uint8Array} */ (texture.image.data);
  const k = width / 64;
  const { w, h, d } = LAYOUT[thing].size;
  const left = thing === 'elytra' ? 22 : 0;
  let blank = true;
  for (let y = 0; y < (h + d) * k && blank; y += 1) for (let x = left * k; x < (left + (w + d) * 2) * k; x += 1) if (data[(y * width + x) * 4 + 3] !== 0) { blank = false; break; }
  texture.userData[thing] = blank;
  return blank;
}

/** @type {THREE.DataTexture | null} */
let greyWings = null;
/**
 * Wings for a player without a cape texture, where the game shows its default elytra: our own
 * art, plain grey feathers (lighter slanting rows, a darker rim), on the elytra's rectangles of a
 * 64x32 cape texture. Made once; neither a player's texture nor counted among them.
 */
function greyElytra() {
  if (!greyWings) {
    const data = new Uint8Array(64 * 32 * 4);
    for (const r of Object.values(LAYOUT.elytra.faces)) {
      for (let y = r.y; y < r.y + r.h; y += 1) {
        for (let x = r.x; x < r.x + r.w; x += 1) {
          const rim = x === r.x || y === r.y || x === r.x + r.w - 1 || y === r.y + r.h - 1;
          const grey = rim ? 96 : (x + y) % 3 === 0 ? 168 : 144;
          data.set([grey, grey, grey, 255], (y * 64 + x) * 4);
        }
      }
    }
    greyWings = texelTexture(data, 64, 32);
  }
  return greyWings;
}

// The shadow's visible ellipse (the gradient reaches zero at the plane's inscribed ellipse).
const SHADOW = { w: 18, d: 11 };
/**
 * A pose's shadow: the standing one's, or its own where the figure covers more ground (lying).
 * @param {PoseName} pose
 */
function shadowSize(pose) {
  const own = LAYOUT.poses[pose].shadow;
  return own ? { w: own[0], d: own[1] } : SHADOW;
}

// One soft shadow for every job, stretched to the pose's: a new geometry and material per job
// would leak GPU buffers (nothing disposes them) and cost an upload each time.
/** @type {THREE.Mesh | null} */
let shadow = null;
/** @param {PoseName} pose */
function shadowMesh(pose) {
  if (!shadow) {
    const c = document.createElement('canvas');
    c.width = c.height = 64;
    const g = /** @type {CanvasRenderingContext2D} */ (c.getContext('2d'));
    const gradient = g.createRadialGradient(32, 32, 0, 32, 32, 32);
    gradient.addColorStop(0, 'rgba(0,0,0,0.45)');
    gradient.addColorStop(1, 'rgba(0,0,0,0)');
    g.fillStyle = gradient;
    g.fillRect(0, 0, 64, 64);
    const map = new THREE.CanvasTexture(c);
    map.colorSpace = THREE.NoColorSpace;
    const mesh = new THREE.Mesh(
      new THREE.PlaneGeometry(SHADOW.w, SHADOW.d),
      new THREE.MeshBasicMaterial({ map, transparent: true, depthWrite: false, premultipliedAlpha: true }),
    );
    mesh.rotation.x = -Math.PI / 2;
    mesh.position.y = 0.01;
    mesh.renderOrder = -1;
    shadow = mesh;
  }
  // The plane is turned flat: its own y runs along the ground's z.
  const { w, d } = shadowSize(pose);
  shadow.scale.set(w / SHADOW.w, d / SHADOW.d, 1);
  return shadow;
}

/**
 * One geometry for several boxes (one draw call per layer), each box moved by its matrix, faces
 * in `hidden[name]` left out. Remembers each box's index range and centre, for sorting.
 * Two-sided: each box's faces come twice, first turned inwards (reversed, their normals too),
 * then as they are; culling then draws a box's far faces from inside before its near faces,
 * whatever the view, which is the order blending needs within a convex box.
 * @param {Array<{ geometry: THREE.BufferGeometry, matrix: THREE.Matrix4, hidden?: FaceName[] }>} boxes
 * @param {boolean} [twoSided]
 */
function mergeBoxes(boxes, twoSided = false) {
  /** @type {number[]} */
  const indices = [];
  /** @type {BoxRange[]} */
  const ranges = [];
  const positions = [], normals = [], uvs = [];
  const v = new THREE.Vector3();
  for (const { geometry, matrix, hidden = [] } of boxes) {
    const from = indices.length;
    for (const inwards of twoSided ? [true, false] : [false]) {
      const offset = positions.length / 3;
      const normalMatrix = new THREE.Matrix3().getNormalMatrix(matrix);
      const p = geometry.getAttribute('position'), n = geometry.getAttribute('normal'), t = geometry.getAttribute('uv');
      for (let i = 0; i < p.count; i += 1) {
        v.fromBufferAttribute(p, i).applyMatrix4(matrix);
        positions.push(v.x, v.y, v.z);
        v.fromBufferAttribute(n, i).applyMatrix3(normalMatrix).normalize().multiplyScalar(inwards ? -1 : 1);
        normals.push(v.x, v.y, v.z);
        uvs.push(t.getX(i), t.getY(i));
      }
      const index = /** @type {THREE.BufferAttribute} */ (geometry.getIndex());
      FACE_ORDER.forEach((face, f) => {
        if (hidden.includes(face)) return;
        for (let i = f * 6; i < f * 6 + 6; i += 3) {
          const [a, b, c] = [i, i + 1, i + 2].map((k) => index.getX(k) + offset);
          indices.push(...(inwards ? [a, c, b] : [a, b, c]));
        }
      });
    }
    ranges.push({ from, to: indices.length, centre: new THREE.Vector3().setFromMatrixPosition(matrix) });
  }
  const merged = new THREE.BufferGeometry();
  merged.setAttribute('position', new THREE.Float32BufferAttribute(positions, 3));
  merged.setAttribute('normal', new THREE.Float32BufferAttribute(normals, 3));
  merged.setAttribute('uv', new THREE.Float32BufferAttribute(uvs, 2));
  merged.setIndex(indices);
  merged.userData = { ranges, order: '' };
  return merged;
}

/** @type {PartName[]} */
const HEAD_ONLY = ['head'];
/** @type {PartName[]} */
const WHOLE = ['head', 'body', 'rightArm', 'leftArm', 'rightLeg', 'leftLeg'];
/** The head and the upper body to the waist: no legs. @type {PartName[]} */
const BUST = ['head', 'body', 'rightArm', 'leftArm'];

// Geometries of a job's limb angles: any angle may come, so they are not cached; buildScene
// disposes them when it builds the next job (the draws that use them have been issued by then).
/** @type {THREE.BufferGeometry[]} */
const oneOff = [];

/**
 * The merged geometry of one layer of the figure (or of the head alone) in a pose, cached
 * unless limb angles turn its parts.
 * @param {PartName[]} names
 * @param {'inner' | 'outer'} layer
 * @param {boolean} slim
 * @param {PoseName} pose
 * @param {Limbs} [limbs]
 */
function layerGeometry(names, layer, slim, pose, limbs) {
  const build = () => {
    const layout = parts(slim);
    return mergeBoxes(names.map((name) => {
      const p = layout[name];
      return {
        geometry: texturedBox(p.size, p[layer], 64, 64, layer === 'outer' ? p.inflate : 0),
        matrix: partMatrix(pose, name, p, limbs),
        // A bust's body has no legs under it: its bottom shows.
        hidden: layer === 'inner' && pose === 'standing' && !limbs && names.length > 1 ? HIDDEN_STANDING[name]?.filter((face) => face !== 'bottom' || names === WHOLE) : [],
      };
    }), layer === 'outer');
  };
  if (!limbs) return cached(`${names.length}:${layer}:${slim}:${pose}`, build);
  const geometry = build();
  oneOff.push(geometry);
  return geometry;
}

/**
 * Orders the boxes of a blended layer back to front for this view, so a translucent texel always
 * blends over what lies behind it (within a box, mergeBoxes puts the far faces first).
 * @param {THREE.BufferGeometry} geometry
 * @param {THREE.Vector3} towardsViewer
 */
function sortBackToFront(geometry, towardsViewer) {
  const { ranges } = /** @type {{ ranges: BoxRange[] }} */ (geometry.userData);
  const order = ranges.map((r, i) => i).sort((a, b) => ranges[a].centre.dot(towardsViewer) - ranges[b].centre.dot(towardsViewer));
  const key = order.join();
  if (key === geometry.userData.order) return;
  geometry.userData.order = key;
  const index = /** @type {THREE.BufferAttribute} */ (geometry.getIndex());
  const original = geometry.userData.original ??= index.array.slice();
  let at = 0;
  for (const i of order) {
    index.array.set(original.subarray(ranges[i].from, ranges[i].to), at);
    at += ranges[i].to - ranges[i].from;
  }
  index.needsUpdate = true;
}

/**
 * Corners of a box of half sizes (x, y, z) under a matrix.
 * @param {THREE.Matrix4} matrix
 * @param {number} x
 * @param {number} y
 * @param {number} z
 */
function corners(matrix, x, y, z) {
  /** @type {THREE.Vector3[]} */
  const points = [];
  for (const sx of [-1, 1]) for (const sy of [-1, 1]) for (const sz of [-1, 1]) points.push(new THREE.Vector3(sx * x, sy * y, sz * z).applyMatrix4(matrix));
  return points;
}

/**
 * The corners of the elytra's wings in a pose.
 * @param {PoseName} pose
 */
function elytraPoints(pose) {
  const { w, h, d } = LAYOUT.elytra.size;
  return elytraMatrices(pose).flatMap((m) => corners(m, w / 2 + 1, h / 2 + 1, d / 2 + 1));
}

/**
 * The corners of some parts of the figure in a pose (limbs turned by a job's angles), with their outer layer.
 * @param {PartName[]} names
 * @param {PoseName} pose
 * @param {boolean} slim
 * @param {Limbs} [limbs]
 */
function partPoints(names, pose, slim, limbs) {
  const layout = parts(slim);
  return names.flatMap((name) => {
    const p = layout[name];
    return corners(partMatrix(pose, name, p, limbs), p.size.w / 2 + p.inflate, p.size.h / 2 + p.inflate, p.size.d / 2 + p.inflate);
  });
}

/**
 * Everything a render may draw in a pose: boxes with their outer layer, the cape (or the elytra), the shadow.
 * @param {PoseName} pose
 * @param {boolean} slim
 * @param {boolean} elytra
 * @param {Limbs} [limbs]
 */
function posePoints(pose, slim, elytra, limbs) {
  const points = partPoints(WHOLE, pose, slim, limbs);
  const { w, h, d } = LAYOUT.cape.size;
  points.push(...(elytra ? elytraPoints(pose) : corners(capeMatrix(pose), w / 2, h / 2, d / 2)));
  const ground = shadowSize(pose);
  for (let i = 0; i < 32; i += 1) {
    const a = (i / 32) * Math.PI * 2;
    points.push(new THREE.Vector3((ground.w / 2) * Math.cos(a), 0, (ground.d / 2) * Math.sin(a)));
  }
  return points;
}

/**
 * The middle of a pose's frame: the standing figure's middle for every upright pose (walking's
 * `lower` only brings its feet down onto the shadow), or for a turned pose (lying, leaning back)
 * its own middle where the turn and `lower` put it, so a lying figure is framed round itself.
 * @param {PoseName} pose
 */
function poseCentre(pose) {
  const { turn, lower = 0 } = LAYOUT.poses[pose];
  return new THREE.Vector3(0, MIDDLE - (turn ? lower : 0), 0);
}

/**
 * The sphere around everything a render may draw, with the elytra or without: its radius the
 * largest reach from its middle of any pose, so a texel is as large in all; `centre` is the
 * upright poses' middle (poseCentre gives each pose's).
 * @param {boolean} elytra
 */
function renderFrame(elytra) {
  const reaches = /** @type {PoseName[]} */ (Object.keys(LAYOUT.poses)).flatMap((pose) => {
    const centre = poseCentre(pose);
    return [false, true].flatMap((slim) => posePoints(pose, slim, elytra)).map((p) => p.distanceTo(centre));
  });
  return { centre: poseCentre('standing'), radius: Math.max(...reaches) };
}

/**
 * A bust's sphere in each pose: round its head, body and arms of either model (about the middle
 * of their bounds, so a lying bust is framed round itself). One per pose, not one for all as
 * renders have: the arms raised in some poses would leave a standing bust half its size. A texel
 * is still as large at any yaw and pitch of one pose.
 */
function bustFrames() {
  return new Map(/** @type {PoseName[]} */ (Object.keys(LAYOUT.poses)).map((pose) => {
    const points = [false, true].flatMap((slim) => partPoints(BUST, pose, slim));
    const centre = new THREE.Box3().setFromPoints(points).getCenter(new THREE.Vector3());
    return [pose, { centre, radius: Math.max(...points.map((p) => p.distanceTo(centre))) }];
  }));
}

/**
 * The sphere every view of a kind is fitted to: a sphere's outline has the same size from every
 * direction, so one skin texel is as large at any yaw, pitch and pose, with or without the shadow,
 * cape or outer layer; only `size` and `scale` change it. Renders: every pose, cape and shadow of
 * either model around the figure's middle; head and cube: the head with its hat; busts: the head,
 * body and arms in each pose (bustFrames). The elytra's
 * 22-texel wings, tilted back or spread, reach far beyond the figure: renders that draw them have
 * a sphere of their own (a third larger), so the others keep their texel size.
 */
const FRAMES = {
  render: renderFrame(false),
  elytra: renderFrame(true),
  head: { centre: new THREE.Vector3(0, 28, 0), radius: 4.5 * Math.sqrt(3) },
  bust: bustFrames(),
};

/**
 * The corners the body view (front or back, standing, limbs turned by the job's angles) is fitted
 * to, with the wings when drawn (they spread wider than the arms); cached without limb angles.
 * @param {boolean} outer
 * @param {boolean} slim
 * @param {boolean} elytra
 * @param {Limbs} [limbs]
 */
function bodyPoints(outer, slim, elytra, limbs) {
  const build = () => {
    const layout = parts(slim);
    return WHOLE.flatMap((name) => {
      const p = layout[name];
      const inflate = outer ? p.inflate : 0;
      return corners(partMatrix('standing', name, p, limbs), p.size.w / 2 + inflate, p.size.h / 2 + inflate, p.size.d / 2 + inflate);
    }).concat(elytra ? elytraPoints('standing') : []);
  };
  return limbs ? build() : cached(`points:${outer}:${slim}:${elytra}`, build);
}

// One scene and one camera, refilled per job: three.js keeps render lists and states per scene,
// so a new scene per job would rebuild them every time.
const scene = new THREE.Scene();
const camera = new THREE.OrthographicCamera(-1, 1, 1, -1, 0.1, 400);
// The camera of a job with a field of view (`fov`), fitted per job (perspectiveFor).
const perspective = new THREE.PerspectiveCamera();
// The frame's sphere fills this much less than the whole view: anti-aliased edges stay inside.
const MARGIN = 1.02;
// The figure (not its shadow), turned upside down for Dinnerbone and Grumm as the game turns them:
// half round about the axis the viewer looks along at yaw 0, through the middle of the frame, so
// the framing (a sphere, or the body's corners turned with it) holds it as it holds the upright one.
const figure = new THREE.Group();
figure.matrixAutoUpdate = false;

/**
 * Where a job's figure turns when upside down: the middle of its frame.
 * @param {PageJob} job
 */
const flipCentre = (job) => (job.kind === 'body' ? FRAMES.render : frameOf(job, null)).centre;

/**
 * Whether the elytra is drawn instead of the cape: from the cape texture's elytra art, or without
 * a cape texture our grey wings (a cape texture without elytra art draws none).
 * @param {PageJob} job
 * @param {THREE.DataTexture | null} capeTexture
 */
const drawsElytra = (job, capeTexture) => Boolean(job.elytra && (!capeTexture || !blankIn(capeTexture, 'elytra')));

/**
 * Fills the scene for one job, for a camera looking from `towardsViewer`.
 * @param {PageJob} job
 * @param {THREE.DataTexture} skinTexture
 * @param {THREE.DataTexture | null} capeTexture
 * @param {THREE.Vector3} towardsViewer
 */
function buildScene(job, skinTexture, capeTexture, towardsViewer) {
  for (const geometry of oneOff.splice(0)) geometry.dispose();
  scene.clear();
  figure.clear();
  scene.add(figure);
  const centre = flipCentre(job);
  figure.matrix.identity();
  // Seen from the turned figure, the viewer is turned too (x and y change sign).
  const viewer = towardsViewer.clone();
  if (job.flip) {
    figure.matrix.makeTranslation(centre.x, centre.y, centre.z).multiply(new THREE.Matrix4().makeRotationZ(Math.PI)).multiply(new THREE.Matrix4().makeTranslation(-centre.x, -centre.y, -centre.z));
    viewer.set(-viewer.x, -viewer.y, viewer.z);
  }
  const whole = job.kind === 'render' || job.kind === 'body';
  const names = whole ? WHOLE : job.kind === 'bust' ? BUST : HEAD_ONLY;
  const pose = job.kind === 'render' || job.kind === 'bust' ? job.pose ?? 'standing' : 'standing';
  figure.add(new THREE.Mesh(layerGeometry(names, 'inner', job.slim, pose, job.limbs), materialFor('skin', skinTexture)));
  if (job.outer) {
    const geometry = layerGeometry(names, 'outer', job.slim, pose, job.limbs);
    sortBackToFront(geometry, viewer);
    const outer = new THREE.Mesh(geometry, materialFor('outer', skinTexture));
    outer.renderOrder = 1;
    figure.add(outer);
  }
  if (whole && drawsElytra(job, capeTexture)) {
    figure.add(new THREE.Mesh(elytraGeometry(pose), materialFor('cape', capeTexture ?? greyElytra())));
  } else if (capeTexture && whole && !job.elytra && !blankIn(capeTexture, 'cape')) {
    const geometry = cached('cape', () => texturedBox(LAYOUT.cape.size, LAYOUT.cape.faces, 64, 32, 0));
    const cape = new THREE.Mesh(geometry, materialFor('cape', capeTexture));
    cape.matrixAutoUpdate = false;
    cape.matrix.copy(cached(`cape:${pose}`, () => capeMatrix(pose)));
    figure.add(cape);
  }
  if (job.shadow && job.kind === 'render') scene.add(shadowMesh(pose));
}

/**
 * The sphere a job's view is fitted to, round the middle of its pose (`body` is fitted to its
 * corners instead).
 * @param {PageJob} job
 * @param {THREE.DataTexture | null} cape
 * @returns {{ centre: THREE.Vector3, radius: number }}
 */
function frameOf(job, cape) {
  const pose = job.pose ?? 'standing';
  if (job.kind === 'render') {
    const elytra = drawsElytra(job, cape);
    const frame = { centre: poseCentre(pose), radius: FRAMES[elytra ? 'elytra' : 'render'].radius };
    return job.limbs ? holding(frame, posePoints(pose, job.slim, elytra, job.limbs)) : frame;
  }
  if (job.kind === 'bust') {
    const frame = /** @type {{ centre: THREE.Vector3, radius: number }} */ (FRAMES.bust.get(pose));
    return job.limbs ? holding(frame, partPoints(BUST, pose, job.slim, job.limbs)) : frame;
  }
  return FRAMES.head;
}

/**
 * A frame grown, where a job's limb angles swing a limb past it, to hold every point: the same
 * sphere at every yaw (a turntable keeps its size), so nothing leaves the picture.
 * @param {{ centre: THREE.Vector3, radius: number }} frame
 * @param {THREE.Vector3[]} points
 */
function holding(frame, points) {
  return { centre: frame.centre, radius: Math.max(frame.radius, ...points.map((p) => p.distanceTo(frame.centre))) };
}

/**
 * Fits the perspective camera to a job with a field of view, as the orthographic view is fitted:
 * it stands where the frame's sphere spans the field of view across the output's short side (its
 * outline a circle touching the edges, as in the orthographic view), and `scale` zooms as there.
 * Answers that distance from the sphere's centre.
 * @param {PageJob} job
 * @param {THREE.DataTexture | null} cape
 * @param {number} aspect
 */
function perspectiveFor(job, cape, aspect) {
  const fov = /** @type {number} */ (job.fov);
  const radius = frameOf(job, cape).radius * MARGIN;
  const half = THREE.MathUtils.degToRad(fov) / 2;
  const distance = radius / Math.sin(Math.min(half, Math.atan(Math.tan(half) * aspect)));
  perspective.fov = fov;
  perspective.aspect = aspect;
  perspective.zoom = job.scale ?? 1;
  // Everything drawn lies in the sphere.
  perspective.near = distance - radius * 1.1;
  perspective.far = distance + radius * 1.1;
  perspective.updateProjectionMatrix();
  return distance;
}

/**
 * Half sizes of the view: the frame's sphere, or for `body` the figure's corners, fitted to the output.
 * @param {PageJob} job
 * @param {THREE.DataTexture | null} cape
 * @param {number} width
 * @param {number} height
 */
function fitCamera(job, cape, width, height) {
  let cx = 0, cy = 0, halfW, halfH;
  if (job.kind === 'body') {
    camera.updateMatrixWorld(true);
    let minX = Infinity, maxX = -Infinity, minY = Infinity, maxY = -Infinity;
    for (const p of bodyPoints(job.outer, job.slim, drawsElytra(job, cape), job.limbs)) {
      const q = p.clone().applyMatrix4(figure.matrix).applyMatrix4(camera.matrixWorldInverse);
      minX = Math.min(minX, q.x); maxX = Math.max(maxX, q.x);
      minY = Math.min(minY, q.y); maxY = Math.max(maxY, q.y);
    }
    cx = (minX + maxX) / 2; cy = (minY + maxY) / 2;
    halfW = ((maxX - minX) / 2) * 1.08; halfH = ((maxY - minY) / 2) * 1.08;
  } else {
    // The camera looks at the sphere's centre: it is the middle of the picture.
    halfW = halfH = frameOf(job, cape).radius * MARGIN;
  }
  // Keep texels square: widen whichever side is short for the output's aspect.
  const aspect = width / height;
  if (halfW / halfH < aspect) halfW = halfH * aspect; else halfH = halfW / aspect;
  const scale = job.scale ?? 1;
  halfW /= scale; halfH /= scale;
  camera.left = cx - halfW; camera.right = cx + halfW; camera.top = cy + halfH; camera.bottom = cy - halfH;
  camera.updateProjectionMatrix();
}

// Textures by key, least recently used first, and their bytes in all. The worker mirrors this
// map (PageTextures in render-worker.ts) and sends a texture's bytes only when the page lacks it.
/** @type {Map<string, THREE.DataTexture | null>} */
const textures = new Map();
let textureBytes = 0;
/** @param {THREE.DataTexture} t */
const bytesOf = (t) => t.image.width * t.image.height * 4;

/**
 * A texture the batch has taken in.
 * @param {PageTexture} wanted
 */
function texture({ key }) {
  const t = textures.get(key);
  if (!t) throw new Error(`texture ${key} is not in the page`);
  return t;
}

/**
 * Takes in a batch's textures in job order (new ones sent with their bytes, known ones moved to
 * the newest end), then drops the least recently used beyond TEXTURE_BYTES, never one of the
 * batch's own: a batch never loses a texture it is about to draw. New textures are made last, from the dropped ones of their size
 * where there are any (refilled in place); the rest are disposed. One that is neither here nor
 * sent fails its own job only.
 * @param {PageJob[]} jobs
 */
function takeIn(jobs) {
  /** @type {Array<PageTexture & { texels: PageTexels }>} */
  const fresh = [];
  for (const job of jobs) {
    for (const wanted of job.cape ? [job.skin, job.cape] : [job.skin]) {
      const known = textures.get(wanted.key);
      if (known !== undefined) {
        textures.delete(wanted.key);
        textures.set(wanted.key, known);
      } else if (wanted.texels) {
        textures.set(wanted.key, null);
        textureBytes += wanted.width * wanted.height * 4;
        fresh.push(/** @type {PageTexture & { texels: PageTexels }} */ (wanted));
      }
    }
  }
  const own = new Set(jobs.flatMap((job) => (job.cape ? [job.skin.key, job.cape.key] : [job.skin.key])));
  /** @type {THREE.DataTexture[]} */
  const dropped = [];
  for (const [key, old] of textures) {
    if (textureBytes <= TEXTURE_BYTES) break;
    // The batch's own are kept whatever they weigh (the worker sends batches that fit, or one job).
    if (own.has(key)) continue;
    textures.delete(key);
    // Only this batch's new textures are not made yet (null), and those are its own.
    const made = /** @type {THREE.DataTexture} */ (old);
    textureBytes -= bytesOf(made);
    dropped.push(made);
  }
  for (const wanted of fresh) {
    const spare = dropped.findIndex((t) => t.image.width === wanted.width && t.image.height === wanted.height);
    const made = spare >= 0 ? refill(dropped.splice(spare, 1)[0], wanted.texels) : rgbaTexture(wanted.texels, wanted.width, wanted.height);
    textures.set(wanted.key, made);
    // Uploaded now, before the frame's first draw: an upload between two tiles' draws
    // interrupts the frame (ANGLE ends and restarts its render pass).
    renderer.initTexture(made);
  }
  for (const old of dropped) old.dispose();
}

/** @param {PageJob} job */
function outputSize(job) {
  return { width: job.size, height: job.kind === 'body' ? job.size * 2 : job.size };
}

/**
 * Draws one job into the tile whose lower-left corner is (x, y) of the canvas.
 * @param {PageJob} job
 * @param {number} x
 * @param {number} y
 */
function drawTile(job, x, y) {
  const skin = texture(job.skin);
  const cape = job.cape ? texture(job.cape) : null;
  const { width, height } = outputSize(job);
  const yaw = THREE.MathUtils.degToRad(job.kind === 'body' ? (job.view === 'back' ? 180 : 0) : job.yaw);
  const pitch = THREE.MathUtils.degToRad(job.kind === 'body' ? 0 : job.pitch);
  const target = job.kind === 'body' ? new THREE.Vector3(0, 16, 0) : frameOf(job, cape).centre;
  const towardsViewer = new THREE.Vector3(Math.sin(yaw) * Math.cos(pitch), Math.sin(pitch), Math.cos(yaw) * Math.cos(pitch));
  const view = job.fov ? perspective : camera;
  view.position.copy(target).addScaledVector(towardsViewer, job.fov ? perspectiveFor(job, cape, width / height) : 100);
  // Straight down or up: keep "up" meaning towards the figure's back so the view is stable.
  view.up.set(0, 1, 0);
  if (Math.abs(Math.cos(pitch)) < 1e-6) view.up.set(-Math.sin(yaw), 0, -Math.cos(yaw));
  view.lookAt(target);
  buildScene(job, skin, cape, towardsViewer);
  if (!job.fov) fitCamera(job, cape, width, height);
  renderer.setViewport(x, y, width, height);
  renderer.setScissor(x, y, width, height);
  // Always on transparent: the edges are smoothed against it, the background goes in after.
  renderer.setClearColor(0x000000, 0);
  renderer.render(scene, view);
}

// The frame's and a tile's pixels, kept from batch to batch: new ones per batch (half a MB and
// more) were garbage that grew the page's heap by hundreds of MB before V8 collected it.
const readback = {
  frameBytes: new Uint8Array(0),
  tile: /** @type {ImageData | null} */ (null),
  /** @param {number} length the frame's bytes, in a buffer of the drawing buffer's size (see holdFrame) */
  frame(length) {
    const size = canvas.width * canvas.height * 4;
    if (this.frameBytes.length !== size) this.frameBytes = new Uint8Array(size);
    return this.frameBytes.subarray(0, length);
  },
  /**
   * @param {number} width
   * @param {number} height
   */
  image(width, height) {
    if (this.tile?.width !== width || this.tile?.height !== height) this.tile = encoder.createImageData(width, height);
    return /** @type {ImageData} */ (this.tile);
  },
};

// PNGs are encoded from a CPU-backed 2D canvas: no GPU readback per image.
const encoder = /** @type {CanvasRenderingContext2D} */ (document.createElement('canvas').getContext('2d', { willReadFrequently: true }));
const TILES_PER_ROW = 4;

/**
 * Makes the drawing buffer hold a frame of width x height, drawn in its lower-left corner.
 * Resizing reallocates it and waits for the GPU process (12% of a page's time when it followed
 * every change of batch size), so it grows to hold what comes and shrinks only for a frame under
 * a quarter of it: a page back to small batches (after a turntable) gives the memory back.
 * @param {number} width
 * @param {number} height
 */
function holdFrame(width, height) {
  const fits = canvas.width >= width && canvas.height >= height;
  if (fits && width * height * 4 >= canvas.width * canvas.height) return;
  if (fits) renderer.setSize(width, height, false);
  else renderer.setSize(Math.max(width, canvas.width), Math.max(height, canvas.height), false);
}

/** @typedef {{ left: number, top: number, width: number, height: number }} Tile A job's place in the frame, from its top left. */

/**
 * Places a batch's tiles in one frame: tallest first, in rows as wide as TILES_PER_ROW of the
 * widest (tiles of one size: TILES_PER_ROW a row). `order` is the jobs' order in the frame, the
 * tiles of one size together.
 * @param {PageJob[]} jobs
 * @returns {{ tiles: Tile[], order: number[], width: number, height: number }}
 */
function layOut(jobs) {
  const sizes = jobs.map(outputSize);
  const rowWidth = TILES_PER_ROW * Math.max(...sizes.map((s) => s.width));
  /** @type {Tile[]} */
  const tiles = new Array(jobs.length);
  let left = 0, top = 0, rowHeight = 0, width = 0;
  const order = sizes.map((_, i) => i).sort((a, b) => sizes[b].height - sizes[a].height || sizes[b].width - sizes[a].width || a - b);
  for (const i of order) {
    const size = sizes[i];
    if (left + size.width > rowWidth) {
      top += rowHeight;
      left = 0;
      rowHeight = 0;
    }
    tiles[i] = { left, top, ...size };
    left += size.width;
    rowHeight = Math.max(rowHeight, size.height);
    width = Math.max(width, left);
  }
  return { tiles, order, width, height: top + rowHeight };
}

/**
 * Draws a batch side by side in one frame, whatever its sizes, reads the frame back once (each
 * readback waits for the GPU process; many small ones cost far more than one large one on
 * SwiftShader), and encodes each tile. Answers a PNG data URL or {error} per job, in order.
 * A texture's texels come packed (texels.js) in the call, and only when the page lacks it. (Sent instead as
 * one binary body the page fetched, they cost the worker and the browser about 0.5 ms more a
 * texture, and saved the page under 0.1 ms.)
 * @param {PageJob[]} jobs
 * @returns {PageAnswer[]}
 */
function renderBatch(jobs) {
  checkContext();
  takeIn(jobs);
  const { tiles, order, width: frameWidth, height: frameHeight } = layOut(jobs);
  holdFrame(frameWidth, frameHeight);
  renderer.setScissorTest(true);
  /** @type {Array<PageAnswer | null>} */
  const failed = jobs.map((job, i) => {
    const { left, top, height } = tiles[i];
    try {
      drawTile(job, left, frameHeight - top - height);
      return null;
    } catch (error) {
      return { error: String((error instanceof Error && error.message) || error) };
    }
  });
  const gl = renderer.getContext();
  const frame = readback.frame(frameWidth * frameHeight * 4);
  gl.readPixels(0, 0, frameWidth, frameHeight, gl.RGBA, gl.UNSIGNED_BYTE, frame);
  /** @type {PageAnswer[]} */
  const answers = new Array(jobs.length);
  // In the frame's order: the encoder's canvas is resized once per size.
  for (const i of order) answers[i] = failed[i] ?? encodeTile(frame, frameWidth, frameHeight, tiles[i], jobs[i].bg);
  // A loss known by now spoilt the frame: nothing of this batch is an answer. (The page may learn
  // of a loss only after answering; the worker checks the GPU process then.)
  checkContext();
  return answers;
}

/**
 * A tile of the read-back frame as a PNG data URL: smoothed, over `bg` when given.
 * @param {Uint8Array} frame
 * @param {number} frameWidth
 * @param {number} frameHeight
 * @param {Tile} tile
 * @param {string | null} bg
 */
function encodeTile(frame, frameWidth, frameHeight, { left, top, width, height }, bg) {
  // Setting a canvas's size clears and reallocates it even when the size is unchanged.
  if (encoder.canvas.width !== width || encoder.canvas.height !== height) {
    encoder.canvas.width = width;
    encoder.canvas.height = height;
  }
  const image = readback.image(width, height);
  // readPixels rows run bottom-up; the tile's first output row is the frame's row from the top.
  for (let row = 0; row < height; row += 1) {
    const from = ((frameHeight - 1 - (top + row)) * frameWidth + left) * 4;
    image.data.set(frame.subarray(from, from + width * 4), row * width * 4);
  }
  finishTile(image.data, width, height, bg ? [0, 2, 4].map((at) => parseInt(bg.slice(at, at + 2), 16)) : null);
  encoder.putImageData(image, 0, 0);
  return encoder.canvas.toDataURL('image/png');
}

/**
 * What the page offers the worker (through main.js, as window.skinfarm).
 * @type {PageApi}
 */
export const api = {
  renderBatch,
  /** What the page holds, for the farm's memory checks and tests. */
  memory: () => ({
    textures: textures.size,
    textureBytes,
    glTextures: renderer.info.memory.textures,
    glGeometries: renderer.info.memory.geometries,
    // Shader programs compiled: a new skin must not add one.
    glPrograms: renderer.info.programs?.length ?? 0,
  }),
  webglInfo: () => {
    const gl = renderer.getContext();
    const debug = gl.getExtension('WEBGL_debug_renderer_info');
    return { renderer: debug ? gl.getParameter(debug.UNMASKED_RENDERER_WEBGL) : gl.getParameter(gl.RENDERER), version: gl.getParameter(gl.VERSION) };
  },
};
