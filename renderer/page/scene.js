// Runs inside the headless Chromium page: draws players with three.js and answers PNG data URLs.
// One WebGL canvas kept out of the document (no compositor), a minimal shader (nearest texel,
// alpha discard, one fixed shade per face: the game's directional light), orthographic camera
// fitted to what is drawn so the figure is centred with a margin at any yaw and pitch.
import * as THREE from 'three';
import LAYOUT from '/skin-layout.js';
import { TEXTURE_LIMIT } from '/page-settings.js';

// Colours are texel values, not colours to manage: what the skin says is what the PNG gets.
THREE.ColorManagement.enabled = false;

const canvas = document.createElement('canvas');
const renderer = new THREE.WebGLRenderer({ canvas, alpha: true, antialias: false, premultipliedAlpha: false, preserveDrawingBuffer: false });
renderer.setPixelRatio(1);
renderer.outputColorSpace = THREE.LinearSRGBColorSpace;

const VERTEX = `
varying vec2 vUv;
varying float vShade;
void main() {
  vUv = uv;
  // Object-space normal: the shade belongs to the face, whatever the view.
  vec3 n = normal;
  vShade = n.y > 0.5 ? 1.0 : (n.y < -0.5 ? 0.5 : (abs(n.z) > 0.5 ? 0.85 : 0.7));
  gl_Position = projectionMatrix * modelViewMatrix * vec4(position, 1.0);
}`;
const FRAGMENT = `
uniform sampler2D map;
varying vec2 vUv;
varying float vShade;
void main() {
  vec4 texel = texture2D(map, vUv);
  if (texel.a < 0.5) discard;
  gl_FragColor = vec4(texel.rgb * vShade, 1.0);
}`;

function material(texture) {
  return new THREE.ShaderMaterial({
    vertexShader: VERTEX,
    fragmentShader: FRAGMENT,
    uniforms: { map: { value: texture } },
  });
}

// BoxGeometry face order: +x, -x, +y, -y, +z, -z. The figure faces +z, so +x is its left side.
const FACE_ORDER = ['left', 'right', 'top', 'bottom', 'front', 'back'];

const UV_INSET = 0.002;

/** A box of `size` units whose faces show `faces` (texture rectangles) of a texW x texH layout. */
function texturedBox({ w, h, d }, faces, texW, texH, inflate) {
  const geometry = new THREE.BoxGeometry(w + inflate * 2, h + inflate * 2, d + inflate * 2);
  const uv = geometry.getAttribute('uv');
  FACE_ORDER.forEach((name, face) => {
    const r = faces[name];
    // Pulled in by a sliver of a texel: interpolated coordinates at a face's very edge must not
    // land in the neighbouring texel row (another part's colour, or an opaque pixel where a hat
    // has a hole), which SwiftShader otherwise draws as a one-pixel seam.
    const x0 = (r.x + UV_INSET) / texW, x1 = (r.x + r.w - UV_INSET) / texW;
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

/**
 * Where each part stands (units; feet at y = 0) and how far its outer layer stands off it; its
 * size and texture rectangles come from shared/skin-layout.ts (served as /skin-layout.js).
 */
function parts(slim) {
  const model = LAYOUT.parts[slim ? 'slim' : 'classic'];
  const armX = 4 + model.rightArm.size.w / 2;
  const place = { head: [0, 28, 0], body: [0, 18, 0], rightArm: [-armX, 18, 0], leftArm: [armX, 18, 0], rightLeg: [-2, 6, 0], leftLeg: [2, 6, 0] };
  return Object.fromEntries(Object.entries(model).map(([name, p]) => [name, { ...p, at: place[name], inflate: name === 'head' ? 0.5 : 0.25 }]));
}

const geometryCache = new Map();
function partGeometry(key, build) {
  let geometry = geometryCache.get(key);
  if (!geometry) {
    geometry = build();
    geometryCache.set(key, geometry);
  }
  return geometry;
}

function rgbaTexture(base64, width, height) {
  const bytes = Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
  const texture = new THREE.DataTexture(bytes, width, height, THREE.RGBAFormat);
  texture.magFilter = THREE.NearestFilter;
  texture.minFilter = THREE.NearestFilter;
  texture.generateMipmaps = false;
  texture.colorSpace = THREE.NoColorSpace;
  texture.needsUpdate = true;
  return texture;
}

// One soft shadow for every job: a new geometry and material per job would leak GPU buffers
// (nothing disposes them) and cost an upload each time.
let shadow = null;
function shadowMesh() {
  if (!shadow) {
    const c = document.createElement('canvas');
    c.width = c.height = 64;
    const g = c.getContext('2d');
    const gradient = g.createRadialGradient(32, 32, 0, 32, 32, 32);
    gradient.addColorStop(0, 'rgba(0,0,0,0.45)');
    gradient.addColorStop(1, 'rgba(0,0,0,0)');
    g.fillStyle = gradient;
    g.fillRect(0, 0, 64, 64);
    shadow = {
      geometry: new THREE.PlaneGeometry(20, 12),
      material: new THREE.MeshBasicMaterial({ map: new THREE.CanvasTexture(c), transparent: true, depthWrite: false }),
    };
  }
  const mesh = new THREE.Mesh(shadow.geometry, shadow.material);
  mesh.rotation.x = -Math.PI / 2;
  mesh.position.y = 0.01;
  mesh.renderOrder = -1;
  return mesh;
}

/** One geometry for several boxes: one draw call per layer instead of one per box. */
function mergeBoxes(boxes) {
  const positions = [], normals = [], uvs = [], indices = [];
  let offset = 0;
  for (const { geometry, at } of boxes) {
    const p = geometry.getAttribute('position'), n = geometry.getAttribute('normal'), t = geometry.getAttribute('uv');
    for (let i = 0; i < p.count; i += 1) {
      positions.push(p.getX(i) + at[0], p.getY(i) + at[1], p.getZ(i) + at[2]);
      normals.push(n.getX(i), n.getY(i), n.getZ(i));
      uvs.push(t.getX(i), t.getY(i));
    }
    const index = geometry.getIndex();
    for (let i = 0; i < index.count; i += 1) indices.push(index.getX(i) + offset);
    offset += p.count;
  }
  const merged = new THREE.BufferGeometry();
  merged.setAttribute('position', new THREE.Float32BufferAttribute(positions, 3));
  merged.setAttribute('normal', new THREE.Float32BufferAttribute(normals, 3));
  merged.setAttribute('uv', new THREE.Float32BufferAttribute(uvs, 2));
  merged.setIndex(indices);
  return merged;
}

const HEAD_ONLY = ['head'];
const WHOLE = ['head', 'body', 'rightArm', 'leftArm', 'rightLeg', 'leftLeg'];

/** The merged geometry of one layer of the figure (or of the head alone), cached. */
function layerGeometry(names, layer, slim) {
  return partGeometry(`${names.length}:${layer}:${slim}`, () => {
    const layout = parts(slim);
    return mergeBoxes(names.map((name) => {
      const p = layout[name];
      return { geometry: texturedBox(p.size, p[layer], 64, 64, layer === 'outer' ? p.inflate : 0), at: p.at };
    }));
  });
}

/** The corners that must fit in the picture, per figure shape (cached). */
function figurePoints(names, outer, slim) {
  return partGeometry(`points:${names.length}:${outer}:${slim}`, () => {
    const layout = parts(slim);
    const points = [];
    for (const name of names) {
      const p = layout[name];
      const inflate = outer ? p.inflate : 0;
      for (const sx of [-1, 1]) for (const sy of [-1, 1]) for (const sz of [-1, 1]) {
        points.push(new THREE.Vector3(p.at[0] + sx * (p.size.w / 2 + inflate), p.at[1] + sy * (p.size.h / 2 + inflate), p.at[2] + sz * (p.size.d / 2 + inflate)));
      }
    }
    return points;
  });
}

// One material per texture, for both layers. Outer boxes are drawn front faces only: their
// insides show only through holes on the far side, and skipping them is ~15% faster on SwiftShader.
const materials = new Map();
function materialFor(texture) {
  let m = materials.get(texture);
  if (!m) {
    m = material(texture);
    materials.set(texture, m);
  }
  return m;
}

// One scene and one camera, refilled per job: three.js keeps render lists and states per scene,
// so a new scene per job would rebuild them every time.
const scene = new THREE.Scene();
const camera = new THREE.OrthographicCamera(-1, 1, 1, -1, 0.1, 400);

/** Fills the scene for one job; returns the points that must fit in the picture. */
function buildScene(job, skinTexture, capeTexture) {
  scene.clear();
  const skin = materialFor(skinTexture);
  const names = job.kind === 'head' || job.kind === 'cube' ? HEAD_ONLY : WHOLE;
  scene.add(new THREE.Mesh(layerGeometry(names, 'inner', job.slim), skin));
  if (job.outer) scene.add(new THREE.Mesh(layerGeometry(names, 'outer', job.slim), skin));
  const points = [...figurePoints(names, job.outer, job.slim)];
  if (capeTexture && names.length > 1) {
    // The cape's "front" texture faces away from the body: turn the box half round.
    const geometry = partGeometry('cape', () => texturedBox(LAYOUT.cape.size, LAYOUT.cape.faces, 64, 32, 0));
    const cape = new THREE.Mesh(geometry, materialFor(capeTexture));
    const pivot = new THREE.Group();
    pivot.position.set(0, 24, -2.5);
    pivot.rotation.x = THREE.MathUtils.degToRad(10);
    cape.position.set(0, -8, -0.5);
    cape.rotation.y = Math.PI;
    pivot.add(cape);
    scene.add(pivot);
    pivot.updateMatrixWorld(true);
    const box = new THREE.Box3().setFromObject(cape);
    points.push(box.min, box.max, new THREE.Vector3(box.min.x, box.max.y, box.min.z), new THREE.Vector3(box.max.x, box.min.y, box.max.z));
  }
  if (job.shadow && names.length > 1) {
    scene.add(shadowMesh());
    points.push(new THREE.Vector3(-7, 0, -4), new THREE.Vector3(7, 0, 4));
  }
  return points;
}

function fitCamera(camera, points, width, height, scale) {
  camera.updateMatrixWorld(true);
  const inverse = camera.matrixWorldInverse;
  let minX = Infinity, maxX = -Infinity, minY = Infinity, maxY = -Infinity;
  for (const p of points) {
    const q = p.clone().applyMatrix4(inverse);
    minX = Math.min(minX, q.x); maxX = Math.max(maxX, q.x);
    minY = Math.min(minY, q.y); maxY = Math.max(maxY, q.y);
  }
  const cx = (minX + maxX) / 2, cy = (minY + maxY) / 2;
  const margin = 1.08;
  let halfW = ((maxX - minX) / 2) * margin, halfH = ((maxY - minY) / 2) * margin;
  // Keep texels square: widen whichever side is short for the output's aspect.
  const aspect = width / height;
  if (halfW / halfH < aspect) halfW = halfH * aspect; else halfH = halfW / aspect;
  halfW /= scale; halfH /= scale;
  camera.left = cx - halfW; camera.right = cx + halfW; camera.top = cy + halfH; camera.bottom = cy - halfH;
  camera.updateProjectionMatrix();
}

// The worker mirrors this map's keys and order, and sends a texture's bytes only when it is new.
const textures = new Map();
function texture({ key, base64, width, height }) {
  let t = textures.get(key);
  if (!t) {
    if (!base64) throw new Error(`texture ${key} is not in the page`);
    t = rgbaTexture(base64, width, height);
    textures.set(key, t);
    // A page keeps the textures of its recent jobs only (the worker mirrors this order).
    if (textures.size > TEXTURE_LIMIT) {
      const [oldKey, old] = textures.entries().next().value;
      materials.get(old)?.dispose();
      materials.delete(old);
      old.dispose();
      textures.delete(oldKey);
    }
  }
  return t;
}

function outputSize(job) {
  return { width: job.size, height: job.kind === 'body' ? job.size * 2 : job.size };
}

/** Draws one job into the tile whose lower-left corner is (x, y) of the canvas. */
function drawTile(job, x, y) {
  const skin = texture(job.skin);
  const cape = job.cape ? texture(job.cape) : null;
  const points = buildScene(job, skin, cape);
  const { width, height } = outputSize(job);
  const yaw = THREE.MathUtils.degToRad(job.kind === 'body' ? (job.view === 'back' ? 180 : 0) : job.yaw);
  const pitch = THREE.MathUtils.degToRad(job.kind === 'body' ? 0 : job.pitch);
  const target = job.kind === 'head' || job.kind === 'cube' ? new THREE.Vector3(0, 28, 0) : new THREE.Vector3(0, 16, 0);
  camera.position.set(target.x + 100 * Math.sin(yaw) * Math.cos(pitch), target.y + 100 * Math.sin(pitch), target.z + 100 * Math.cos(yaw) * Math.cos(pitch));
  // Straight down or up: keep "up" meaning towards the figure's back so the view is stable.
  camera.up.set(0, 1, 0);
  if (Math.abs(Math.cos(pitch)) < 1e-6) camera.up.set(-Math.sin(yaw), 0, -Math.cos(yaw));
  camera.lookAt(target);
  fitCamera(camera, points, width, height, job.scale ?? 1);
  renderer.setViewport(x, y, width, height);
  renderer.setScissor(x, y, width, height);
  if (job.bg) renderer.setClearColor(new THREE.Color(`#${job.bg}`), 1);
  else renderer.setClearColor(0x000000, 0);
  renderer.render(scene, camera);
}

// PNGs are encoded from a CPU-backed 2D canvas: no GPU readback per image.
const encoder = document.createElement('canvas').getContext('2d', { willReadFrequently: true });
const TILES_PER_ROW = 4;

/**
 * Draws jobs of one output size side by side in one frame, reads the frame back once, and
 * encodes each tile. Many small readbacks cost far more than one large one on SwiftShader.
 */
function renderGroup(jobs) {
  const { width, height } = outputSize(jobs[0]);
  const cols = Math.min(TILES_PER_ROW, jobs.length);
  const rows = Math.ceil(jobs.length / cols);
  // Resizing reallocates the drawing buffer: only when the frame size changes.
  if (canvas.width !== width * cols || canvas.height !== height * rows) renderer.setSize(width * cols, height * rows, false);
  renderer.setScissorTest(true);
  const answers = jobs.map((job, i) => {
    try {
      drawTile(job, (i % cols) * width, (rows - 1 - Math.floor(i / cols)) * height);
      return null;
    } catch (error) {
      return { error: String((error && error.message) || error) };
    }
  });
  const gl = renderer.getContext();
  const frame = new Uint8Array(canvas.width * canvas.height * 4);
  gl.readPixels(0, 0, canvas.width, canvas.height, gl.RGBA, gl.UNSIGNED_BYTE, frame);
  // Setting a canvas's size clears and reallocates it even when the size is unchanged.
  if (encoder.canvas.width !== width || encoder.canvas.height !== height) {
    encoder.canvas.width = width;
    encoder.canvas.height = height;
  }
  const image = encoder.createImageData(width, height);
  return answers.map((answer, i) => {
    if (answer) return answer;
    const left = (i % cols) * width;
    const top = Math.floor(i / cols) * height;
    // readPixels rows run bottom-up; the tile's first output row is the frame's row from the top.
    for (let row = 0; row < height; row += 1) {
      const from = ((canvas.height - 1 - (top + row)) * canvas.width + left) * 4;
      image.data.set(frame.subarray(from, from + width * 4), row * width * 4);
    }
    encoder.putImageData(image, 0, 0);
    return encoder.canvas.toDataURL('image/png');
  });
}

/** Renders jobs (grouped by output size); each answer is a PNG data URL or {error}, in order. */
window.renderJobs = (jobs) => {
  // Take in new textures in job order first: the worker's mirror of this cache counts on it.
  for (const job of jobs) {
    texture(job.skin);
    if (job.cape) texture(job.cape);
  }
  const answers = new Array(jobs.length);
  const groups = new Map();
  jobs.forEach((job, i) => {
    const { width, height } = outputSize(job);
    const key = `${width}x${height}`;
    if (!groups.has(key)) groups.set(key, []);
    groups.get(key).push(i);
  });
  for (const indices of groups.values()) {
    const results = renderGroup(indices.map((i) => jobs[i]));
    indices.forEach((i, n) => { answers[i] = results[n]; });
  }
  return answers;
};

window.webglInfo = () => {
  const gl = renderer.getContext();
  const debug = gl.getExtension('WEBGL_debug_renderer_info');
  return { renderer: debug ? gl.getParameter(debug.UNMASKED_RENDERER_WEBGL) : gl.getParameter(gl.RENDERER), version: gl.getParameter(gl.VERSION) };
};
window.sceneReady = true;
