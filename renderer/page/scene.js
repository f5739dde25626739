// Runs inside the headless Chromium page: draws players with three.js and answers PNG data URLs.
// One WebGL canvas kept out of the document (no compositor), a minimal shader (nearest texel,
// alpha discard, one fixed shade per face: the game's directional light), orthographic camera
// fitted to what is drawn so the figure is centred with a margin at any yaw and pitch.
import * as THREE from 'three';

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

function material(texture, doubleSide) {
  return new THREE.ShaderMaterial({
    vertexShader: VERTEX,
    fragmentShader: FRAGMENT,
    uniforms: { map: { value: texture } },
    side: doubleSide ? THREE.DoubleSide : THREE.FrontSide,
  });
}

// BoxGeometry face order: +x, -x, +y, -y, +z, -z. The figure faces +z, so +x is its left side.
const FACE_ORDER = ['left', 'right', 'top', 'bottom', 'front', 'back'];

function boxFaces(u, v, w, h, d) {
  return {
    top: [u + d, v, w, d], bottom: [u + d + w, v, w, d],
    right: [u, v + d, d, h], front: [u + d, v + d, w, h],
    left: [u + d + w, v + d, d, h], back: [u + 2 * d + w, v + d, w, h],
  };
}

/** A box of size (w, h, d) units whose texture starts at (u, v) of a texW x texH layout. */
function texturedBox(w, h, d, u, v, texW, texH, inflate) {
  const geometry = new THREE.BoxGeometry(w + inflate * 2, h + inflate * 2, d + inflate * 2);
  const faces = boxFaces(u, v, w, h, d);
  const uv = geometry.getAttribute('uv');
  FACE_ORDER.forEach((name, face) => {
    const [x, y, fw, fh] = faces[name];
    const x0 = x / texW, x1 = (x + fw) / texW, y0 = y / texH, y1 = (y + fh) / texH;
    // Vertex order per face: top-left, top-right, bottom-left, bottom-right (seen from outside).
    const corners = [[x0, y0], [x1, y0], [x0, y1], [x1, y1]];
    corners.forEach(([cu, cv], i) => uv.setXY(face * 4 + i, cu, cv));
  });
  uv.needsUpdate = true;
  return geometry;
}

// Part layout: size, inner and outer texture origins, centre (units; feet at y = 0).
function parts(slim) {
  const arm = slim ? 3 : 4;
  const armX = 4 + arm / 2;
  return {
    head: { size: [8, 8, 8], inner: [0, 0], outer: [32, 0], at: [0, 28, 0], inflate: 0.5 },
    body: { size: [8, 12, 4], inner: [16, 16], outer: [16, 32], at: [0, 18, 0], inflate: 0.25 },
    rightArm: { size: [arm, 12, 4], inner: [40, 16], outer: [40, 32], at: [-armX, 18, 0], inflate: 0.25 },
    leftArm: { size: [arm, 12, 4], inner: [32, 48], outer: [48, 48], at: [armX, 18, 0], inflate: 0.25 },
    rightLeg: { size: [4, 12, 4], inner: [0, 16], outer: [0, 32], at: [-2, 6, 0], inflate: 0.25 },
    leftLeg: { size: [4, 12, 4], inner: [16, 48], outer: [0, 48], at: [2, 6, 0], inflate: 0.25 },
  };
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

let shadowTexture = null;
function shadowMesh() {
  if (!shadowTexture) {
    const c = document.createElement('canvas');
    c.width = c.height = 64;
    const g = c.getContext('2d');
    const gradient = g.createRadialGradient(32, 32, 0, 32, 32, 32);
    gradient.addColorStop(0, 'rgba(0,0,0,0.45)');
    gradient.addColorStop(1, 'rgba(0,0,0,0)');
    g.fillStyle = gradient;
    g.fillRect(0, 0, 64, 64);
    shadowTexture = new THREE.CanvasTexture(c);
  }
  const mesh = new THREE.Mesh(new THREE.PlaneGeometry(20, 12), new THREE.MeshBasicMaterial({ map: shadowTexture, transparent: true, depthWrite: false }));
  mesh.rotation.x = -Math.PI / 2;
  mesh.position.y = 0.01;
  mesh.renderOrder = -1;
  return mesh;
}

/** Builds the scene of one job; returns it with the points that must fit in the picture. */
function buildScene(job, skinTexture, capeTexture) {
  const scene = new THREE.Scene();
  const inner = material(skinTexture, false);
  const outer = material(skinTexture, true);
  const names = job.kind === 'head' || job.kind === 'cube' ? ['head'] : ['head', 'body', 'rightArm', 'leftArm', 'rightLeg', 'leftLeg'];
  const layout = parts(job.slim);
  const points = [];
  for (const name of names) {
    const p = layout[name];
    const layers = job.outer ? ['inner', 'outer'] : ['inner'];
    for (const layer of layers) {
      const inflate = layer === 'outer' ? p.inflate : 0;
      const [u, v] = p[layer];
      const geometry = partGeometry(`${name}:${layer}:${job.slim}`, () => texturedBox(p.size[0], p.size[1], p.size[2], u, v, 64, 64, inflate));
      const mesh = new THREE.Mesh(geometry, layer === 'outer' ? outer : inner);
      mesh.position.set(...p.at);
      scene.add(mesh);
      for (const sx of [-1, 1]) for (const sy of [-1, 1]) for (const sz of [-1, 1]) {
        points.push(new THREE.Vector3(p.at[0] + sx * (p.size[0] / 2 + inflate), p.at[1] + sy * (p.size[1] / 2 + inflate), p.at[2] + sz * (p.size[2] / 2 + inflate)));
      }
    }
  }
  if (capeTexture && names.length > 1) {
    // The cape's "front" texture faces away from the body: turn the box half round.
    const geometry = partGeometry('cape', () => texturedBox(10, 16, 1, 0, 0, 64, 32, 0));
    const cape = new THREE.Mesh(geometry, material(capeTexture, false));
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
  return { scene, points };
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

const textures = new Map();
function texture(key, base64, width, height) {
  let t = textures.get(key);
  if (!t) {
    t = rgbaTexture(base64, width, height);
    textures.set(key, t);
    // A page keeps the textures of its recent jobs only.
    if (textures.size > 64) {
      const [oldKey, old] = textures.entries().next().value;
      old.dispose();
      textures.delete(oldKey);
    }
  }
  return t;
}

function renderOne(job) {
  const skin = texture(job.skinKey, job.skin, job.skinSize, job.skinSize);
  const cape = job.cape ? texture(job.capeKey, job.cape, job.capeWidth, job.capeHeight) : null;
  const { scene, points } = buildScene(job, skin, cape);
  const width = job.size;
  const height = job.kind === 'body' ? job.size * 2 : job.size;
  const yaw = THREE.MathUtils.degToRad(job.kind === 'body' ? (job.view === 'back' ? 180 : 0) : job.yaw);
  const pitch = THREE.MathUtils.degToRad(job.kind === 'body' ? 0 : job.pitch);
  const target = job.kind === 'head' || job.kind === 'cube' ? new THREE.Vector3(0, 28, 0) : new THREE.Vector3(0, 16, 0);
  const camera = new THREE.OrthographicCamera(-1, 1, 1, -1, 0.1, 400);
  camera.position.set(target.x + 100 * Math.sin(yaw) * Math.cos(pitch), target.y + 100 * Math.sin(pitch), target.z + 100 * Math.cos(yaw) * Math.cos(pitch));
  // Straight down or up: keep "up" meaning towards the figure's back so the view is stable.
  camera.up.set(0, 1, 0);
  if (Math.abs(Math.cos(pitch)) < 1e-6) camera.up.set(-Math.sin(yaw), 0, -Math.cos(yaw));
  camera.lookAt(target);
  fitCamera(camera, points, width, height, job.scale ?? 1);
  renderer.setSize(width, height, false);
  if (job.bg) renderer.setClearColor(new THREE.Color(`#${job.bg}`), 1);
  else renderer.setClearColor(0x000000, 0);
  renderer.render(scene, camera);
  return canvas.toDataURL('image/png');
}

/** Renders jobs in order; each answer is a PNG data URL or {error}. */
window.renderJobs = (jobs) => jobs.map((job) => {
  try {
    return renderOne(job);
  } catch (error) {
    return { error: String(error && error.message || error) };
  }
});

window.webglInfo = () => {
  const gl = renderer.getContext();
  const debug = gl.getExtension('WEBGL_debug_renderer_info');
  return { renderer: debug ? gl.getParameter(debug.UNMASKED_RENDERER_WEBGL) : gl.getParameter(gl.RENDERER), version: gl.getParameter(gl.VERSION) };
};
window.sceneReady = true;
