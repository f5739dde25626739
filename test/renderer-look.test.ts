// How renders look (issue #16), at pixel level on generated skins: translucent outer texels
// blended, a front face at 95% or more of its texel, smoothed silhouettes with crisp texels, the
// cape on the body's back, one texel size whatever the angle or shadow, faces that can never be
// seen left out, and poses. Real Chromium (SwiftShader WebGL); PNGs land in
// test-artifacts/renderer-look/.
import test from 'ava';
import sharp from 'sharp';
import { RenderFarm } from '../renderer/farm.ts';
import type { RenderJob } from '../renderer/jobs.ts';
import { finishTile } from '../renderer/page/edges.js';
import { paintCape, paintSkin, type Painter, type Rgba } from '../renderer/skin-paint.ts';
import { normalizeCape, normalizeSkin, type NormalizedSkin } from '../renderer/skin-normalize.ts';
import { drawCape, drawSkin, faceColor } from '../scripts/fake-upstream/skin-art.ts';
import { silentLogger } from '../shared/log.ts';
import { elytraFaces, FACE_NAMES, POSE_NAMES } from '../shared/skin-layout.ts';
import { colorBox, count, decodePng, markerCorner, opaqueBox, pixel, saveArtifact, shadeOf, shadowPixels, solidCount, translucent, type Picture } from './helpers/png.ts';

let farm: RenderFarm;
let classic: NormalizedSkin;

test.before(async () => {
  farm = await RenderFarm.create({ workers: 2, gpu: 'off' }, silentLogger);
  classic = await normalizeSkin(await drawSkin({}));
});
test.after.always(() => farm?.close());

async function render(name: string, job: Partial<RenderJob> = {}): Promise<Picture> {
  const png = await farm.render({ kind: 'render', skin: classic, slim: false, size: 128, yaw: 0, pitch: 0, shadow: false, outer: false, bg: null, ...job });
  saveArtifact('renderer-look', name, png);
  return decodePng(png);
}

async function paintedSkin(painter: Painter): Promise<NormalizedSkin> {
  return normalizeSkin(await sharp(paintSkin(1, false, painter), { raw: { width: 64, height: 64, channels: 4 } }).png().toBuffer());
}

const inner = (part: Parameters<typeof faceColor>[0], face: Parameters<typeof faceColor>[2]) => faceColor(part, 'inner', face);

/** The shades (multiples of `color`) of the pixels that show it, sorted. */
function shades(p: Picture, color: Rgba): number[] {
  const found: number[] = [];
  for (let y = 0; y < p.height; y += 1) for (let x = 0; x < p.width; x += 1) {
    const f = shadeOf(pixel(p, x, y), color);
    if (f !== null) found.push(f);
  }
  return found.sort((a, b) => a - b);
}
const median = (values: number[]) => values[Math.floor(values.length / 2)];

test('translucent outer texels are blended over the inner layer, neither colour alone', async (t) => {
  const under: Rgba = [40, 90, 200, 255];
  const band: Rgba = [240, 200, 40, 255];
  // The hat's front: rows 1-2 at alpha 100 (a visor the old renderer dropped), rows 5-6 at
  // alpha 204 (hair it drew solid); the rest of the outer layer empty.
  const skin = await paintedSkin((part, layer, face, u, v) => {
    if (layer === 'inner') return under;
    if (part !== 'head' || face !== 'front') return null;
    if (v === 1 || v === 2) return [band[0], band[1], band[2], 100];
    if (v === 5 || v === 6) return [band[0], band[1], band[2], 204];
    return null;
  });
  const p = await render('translucent-band', { kind: 'head', skin, outer: true, size: 128 });
  const mix = (alpha: number): Rgba => [0, 1, 2].map((c) => (band[c] * alpha + under[c] * (255 - alpha)) / 255).concat(255) as unknown as Rgba;
  t.true(solidCount(p, mix(100)) > 50, 'the visor: blended');
  t.true(solidCount(p, mix(204)) > 50, 'the hair: blended');
  t.is(solidCount(p, band), 0, 'never the outer colour alone');
  t.true(solidCount(p, under) > 200, 'the face shows where the hat is empty');
});

test('a front face keeps 95% or more of its texel colour; sides are darker', async (t) => {
  const front = await render('light-front', { size: 256 });
  for (const part of ['head', 'body', 'leftLeg'] as const) {
    const f = median(shades(front, inner(part, 'front')));
    t.true(f >= 0.95 && f <= 1.01, `${part} front at ${f}`);
  }
  const turned = await render('light-yaw45', { size: 256, yaw: 45, pitch: 20 });
  const lit = median(shades(turned, inner('head', 'front')));
  const side = median(shades(turned, inner('head', 'left')));
  const top = median(shades(turned, inner('head', 'top')));
  t.true(side < lit - 0.08 && top < lit + 0.05 && Math.abs(top - side) > 0.03, `front ${lit}, side ${side}, top ${top}: three tones`);
});

test('slanted silhouettes have partly covered pixels; texels inside stay crisp', async (t) => {
  const p = await render('edges-slanted', { yaw: 30, pitch: 20 });
  t.true(translucent(p) > 40, `${translucent(p)} partly covered pixels along the edges`);
  // Inside the head's front: only its own texels (face, marker, eyes), no in-between colours.
  const front = await render('edges-front', { size: 256 });
  const box = colorBox(front, inner('head', 'front'))!;
  const colours = new Set<string>();
  for (let y = box.y0 + 2; y < box.y1 - 2; y += 1) for (let x = box.x0 + 2; x < box.x1 - 2; x += 1) colours.add(pixel(front, x, y).join());
  t.true(colours.size <= 3, `${colours.size} colours inside the face`);
});

test('edge smoothing: a staircase becomes a ramp, straight edges and the inside stay as drawn', (t) => {
  // 16 x 8, premultiplied: opaque white below a line rising one row every four columns.
  const width = 16, height = 8;
  const data = new Uint8ClampedArray(width * height * 4);
  const edge = (x: number) => 6 - Math.floor(x / 4);
  for (let y = 0; y < height; y += 1) for (let x = 0; x < width; x += 1) if (y >= edge(x)) data.set([255, 255, 255, 255], (y * width + x) * 4);
  const before = Uint8ClampedArray.from(data);
  finishTile(data, width, height, null);
  const alpha = (x: number, y: number) => data[(y * width + x) * 4 + 3];
  const changed = [];
  for (let i = 3; i < data.length; i += 4) if (data[i] !== before[i]) changed.push(i);
  t.true(changed.length >= 8, `${changed.length} pixels along the staircase changed`);
  for (let x = 0; x < width; x += 1) t.is(alpha(x, 7), 255, 'the bottom row (no edge) stays opaque');
  // Above a step the empty pixel gains, next to it the full one loses: 0 < alpha < 255.
  t.true(alpha(3, 5) > 0 && alpha(3, 5) < 255 && alpha(4, 5) > 0 && alpha(4, 5) < 255, `${alpha(3, 5)}, ${alpha(4, 5)}`);
  t.deepEqual([...data.subarray((5 * width + 3) * 4, (5 * width + 3) * 4 + 3)], [255, 255, 255], 'straight colour: still white');
  // A square with straight sides keeps its corners and edges.
  const square = new Uint8ClampedArray(8 * 8 * 4);
  for (let y = 2; y < 6; y += 1) for (let x = 2; x < 6; x += 1) square.set([10, 20, 30, 255], (y * 8 + x) * 4);
  const copy = Uint8ClampedArray.from(square);
  finishTile(square, 8, 8, null);
  t.deepEqual(square, copy);
  // With a background, every pixel ends opaque, the empty ones the background colour.
  finishTile(square, 8, 8, [0x33, 0x66, 0x99]);
  t.deepEqual([...square.subarray(0, 4)], [0x33, 0x66, 0x99, 255]);
  t.deepEqual([...square.subarray((3 * 8 + 3) * 4, (3 * 8 + 3) * 4 + 4)], [10, 20, 30, 255]);
  // Nothing opaque at all (a shadow only): still straight colour, still the background.
  const faint = new Uint8ClampedArray([0, 0, 0, 0, 20, 20, 20, 40]);
  finishTile(faint, 2, 1, [100, 100, 100]);
  t.deepEqual([...faint], [100, 100, 100, 255, 104, 104, 104, 255]);
  const alone = new Uint8ClampedArray([20, 20, 20, 40]);
  finishTile(alone, 1, 1, null);
  t.deepEqual([...alone], [128, 128, 128, 40]);
});

test('the cape hangs from the body\'s back: touching it at the top, seen from the side', async (t) => {
  const cape = await normalizeCape(await drawCape({}));
  const p = await render('cape-side', { yaw: 90, cape, size: 256 });
  // From the figure's left its back is on the right. The arm hides the body's side, but its back
  // lies in the plane of the body's back (both 4 texels deep).
  const body = colorBox(p, inner('leftArm', 'left'))!;
  const edge = colorBox(p, faceColor('cape', 'inner', 'right')) ?? colorBox(p, faceColor('cape', 'inner', 'left'));
  t.truthy(edge, 'the cape\'s edge shows');
  t.true(edge!.x0 - body.x1 <= 1 && edge!.x0 >= body.x1 - 1, `gap ${edge!.x0 - body.x1} px between the body's back and the cape`);
});

test('an elytra-only cape texture draws nothing and takes no room', async (t) => {
  // Only the elytra's part of the texture (from x 22) has pixels: the cape's rectangles are empty.
  const elytra = paintCape(() => [0, 0, 0, 0]);
  for (let y = 0; y < 22; y += 1) for (let x = 22; x < 46; x += 1) elytra.set([200, 30, 30, 255], (y * 64 + x) * 4);
  const cape = await normalizeCape(await sharp(elytra, { raw: { width: 64, height: 32, channels: 4 } }).png().toBuffer());
  for (const yaw of [90, 180]) {
    const none = await farm.render({ kind: 'render', skin: classic, slim: false, size: 128, yaw, pitch: 10, shadow: true, outer: true, bg: null });
    const blank = await farm.render({ kind: 'render', skin: classic, slim: false, size: 128, yaw, pitch: 10, shadow: true, outer: true, bg: null, cape });
    saveArtifact('renderer-look', `elytra-only-${yaw}`, blank);
    t.true(blank.equals(none), `yaw ${yaw}: the same picture as without a cape`);
  }
});

test('a skin texel is as large at pitch 0 as at pitch 80, and with the shadow as without', async (t) => {
  const level = await render('scale-pitch0', { size: 256 });
  const above = await render('scale-pitch80', { size: 256, pitch: 80 });
  const front = colorBox(level, inner('head', 'front'))!;
  const top = colorBox(above, inner('head', 'top'))!;
  // Both faces are 8 texels wide, across the picture.
  t.true(Math.abs((front.x1 - front.x0) - (top.x1 - top.x0)) <= 1, `head ${front.x1 - front.x0} px wide from the front, ${top.x1 - top.x0} px from above`);
  const plain = await render('scale-noshadow', { size: 256, pitch: 30, yaw: 20 });
  const shaded = await render('scale-shadow', { size: 256, pitch: 30, yaw: 20, shadow: true });
  t.deepEqual(colorBox(shaded, inner('head', 'front')), colorBox(plain, inner('head', 'front')), 'the shadow moves and scales nothing');
  t.deepEqual(colorBox(shaded, inner('body', 'front')), colorBox(plain, inner('body', 'front')));
});

test('faces that lie on another part when standing never show, from any angle', async (t) => {
  // Faces the standing figure covers (arms on the body, legs on each other and under the body)
  // in magenta; every other face a green.
  const hidden: Record<string, string[]> = { body: ['top', 'bottom'], rightArm: ['left'], leftArm: ['right'], rightLeg: ['top', 'left'], leftLeg: ['top', 'right'] };
  const skin = await paintedSkin((part, layer, face) => {
    if (layer === 'outer') return null;
    return hidden[part]?.includes(face) ? [255, 0, 255, 255] : [40, 150 + 15 * ['top', 'bottom', 'right', 'front', 'left', 'back'].indexOf(face), 60, 255];
  });
  let seams = 0;
  for (const [yaw, pitch] of [[0, 10], [-135, 0], [15, -60], [-90, -10], [-165, 60], [120, 10]]) {
    const p = await render(`hidden-${yaw}-${pitch}`, { skin, yaw, pitch, size: 256 });
    const magenta = count(p, [255, 0, 255, 255]);
    for (let i = 0; i < p.data.length; i += 4) if (p.data[i + 3] > 0 && p.data[i] > 2 * p.data[i + 1] + 20 && p.data[i + 2] > 2 * p.data[i + 1] + 20) seams += 1;
    t.is(magenta, 0, `yaw ${yaw}, pitch ${pitch}`);
  }
  t.is(seams, 0, 'not even mixed into an edge');
});

test('every pose differs from standing and keeps the figure and its shadow inside the picture', async (t) => {
  const cape = await normalizeCape(await drawCape({}));
  const base = { size: 96, shadow: true, outer: true, cape };
  const standing = await render('pose-standing', { ...base, yaw: 30, pitch: 10 });
  for (const pose of POSE_NAMES.filter((p) => p !== 'standing')) {
    const p = await render(`pose-${pose}`, { ...base, yaw: 30, pitch: 10, pose });
    let differ = 0;
    for (let i = 0; i < p.data.length; i += 4) if (p.data.subarray(i, i + 4).some((v, c) => Math.abs(v - standing.data[i + c]) > 8)) differ += 1;
    t.true(differ > p.width * p.height * 0.02, `${pose}: ${differ} pixels differ from standing`);
    for (const [yaw, pitch] of [[0, 0], [90, 0], [-90, 0], [180, 0], [45, 80], [-135, -60]]) {
      const view = await render(`pose-${pose}-${yaw}-${pitch}`, { ...base, yaw, pitch, pose });
      let x0 = view.width, y0 = view.height, x1 = -1, y1 = -1;
      for (let y = 0; y < view.height; y += 1) for (let x = 0; x < view.width; x += 1) {
        if (pixel(view, x, y)[3] === 0) continue;
        x0 = Math.min(x0, x); x1 = Math.max(x1, x); y0 = Math.min(y0, y); y1 = Math.max(y1, y);
      }
      t.true(x0 > 0 && y0 > 0 && x1 < view.width - 1 && y1 < view.height - 1, `${pose} at yaw ${yaw}, pitch ${pitch}: drawn within ${x0},${y0}-${x1},${y1}`);
      t.truthy(opaqueBox(view));
    }
  }
});

test('the outer layer is drawn from both sides: through an open hat its far inside shows', async (t) => {
  // A hat with no back and an opaque front: from behind, around the head, the inside of its front.
  const inside: Rgba = [230, 120, 20, 255];
  const skin = await paintedSkin((part, layer, face) => {
    if (layer === 'inner') return [40, 90, 200, 255];
    return part === 'head' && face === 'front' ? inside : null;
  });
  const back = await render('hat-inside-back', { kind: 'head', skin, outer: true, yaw: 180, pitch: 0, size: 256 });
  t.true(solidCount(back, inside) > 300, `${solidCount(back, inside)} pixels of the hat's front seen from inside`);
  // The lid too: from below, in the rim between head and hat.
  const lid = await paintedSkin((part, layer, face) => layer === 'inner' ? [40, 90, 200, 255] : part === 'head' && face === 'top' ? inside : null);
  const below = await render('hat-inside-below', { kind: 'head', skin: lid, outer: true, yaw: 0, pitch: -90, size: 256 });
  t.true(solidCount(below, inside) > 300, `${solidCount(below, inside)} pixels of the hat's top seen from below`);
});

test('layers that share a plane show one of them, never specks of the other', async (t) => {
  // Opaque jacket, sleeves and trousers: the jacket lies over sleeves and trousers where they
  // meet (in the plane of the front, back and sides), the left trouser leg over the right one.
  const jacket: Rgba = [200, 40, 40, 255], sleeve: Rgba = [40, 200, 40, 255], trousers: Rgba = [40, 40, 200, 255], left: Rgba = [200, 200, 40, 255];
  const skin = await paintedSkin((part, layer) => {
    if (layer === 'inner') return [128, 128, 128, 255];
    if (part === 'head') return null;
    if (part === 'body') return jacket;
    if (part === 'rightArm' || part === 'leftArm') return sleeve;
    return part === 'leftLeg' ? left : trousers;
  });
  // Straight on and from above: nothing else is in front of the jacket there.
  for (const [yaw, pitch] of [[0, 0], [180, 0], [0, 20], [180, 20]]) {
    const p = await render(`coplanar-${yaw}-${pitch}`, { skin, outer: true, yaw, pitch, size: 256 });
    const box = colorBox(p, jacket)!;
    // Inside the jacket's outline (one pixel in: edges mix), only the jacket.
    const inner = { x0: box.x0 + 1, y0: box.y0 + 1, x1: box.x1 - 1, y1: box.y1 - 1 };
    const specks = count(p, sleeve, inner) + count(p, trousers, inner) + count(p, left, inner);
    t.is(specks, 0, `yaw ${yaw}, pitch ${pitch}: ${specks} specks in the jacket`);
  }
});

test('sitting, the thighs touch: no see-through gap between them', async (t) => {
  const legs = (['rightLeg', 'leftLeg'] as const).flatMap((part) => FACE_NAMES.map((face) => inner(part, face)));
  for (const [yaw, pitch] of [[0, 0], [0, 20], [0, -20]]) {
    const p = await render(`sitting-thighs-${yaw}-${pitch}`, { pose: 'sitting', yaw, pitch, size: 256 });
    // The rows the legs fill in the picture's middle column pair (x = 0 in the figure).
    const rows: number[] = [];
    for (let y = 0; y < p.height; y += 1) if ([-6, -5, 4, 5].some((dx) => legs.some((c) => shadeOf(pixel(p, p.width / 2 + dx, y), c) !== null))) rows.push(y);
    t.true(rows.length > 10, `yaw ${yaw}, pitch ${pitch}: the legs are there`);
    const clear = rows.filter((y) => pixel(p, p.width / 2 - 1, y)[3] < 250 || pixel(p, p.width / 2, y)[3] < 250);
    t.deepEqual(clear, [], `yaw ${yaw}, pitch ${pitch}: rows seen through between the thighs`);
  }
});

test('the cape swings back with speed, clear of the legs', async (t) => {
  const cape = await normalizeCape(await drawCape({}));
  const capeColours = FACE_NAMES.map((face) => faceColor('cape', 'inner', face));
  const legs = (['rightLeg', 'leftLeg'] as const).flatMap((part) => FACE_NAMES.map((face) => inner(part, face)));
  const is = (p: Picture, x: number, y: number, colours: Rgba[]) => colours.some((c) => shadeOf(pixel(p, x, y), c) !== null);
  const reach: Record<string, number> = {};
  for (const pose of ['standing', 'walking', 'running'] as const) {
    // From the figure's left its back is on the right: a leg through the cape would show beyond it.
    const p = await render(`cape-clear-${pose}`, { pose, yaw: 90, cape, size: 256 });
    let through = 0;
    let far = 0;
    for (let y = 0; y < p.height; y += 1) {
      let capeFrom = p.width;
      for (let x = 0; x < p.width; x += 1) if (is(p, x, y, capeColours)) { capeFrom = Math.min(capeFrom, x); far = Math.max(far, x); }
      for (let x = capeFrom; x < p.width; x += 1) if (is(p, x, y, legs)) through += 1;
    }
    t.is(through, 0, `${pose}: leg pixels beyond the cape`);
    reach[pose] = far;
  }
  t.true(reach.standing < reach.walking && reach.walking < reach.running, `the cape reaches back to x ${JSON.stringify(reach)}`);
});

/** A cape texture whose cape and elytra rectangles are each one colour (either left out with null). */
async function capeAndElytra(cape: Rgba | null, wings: Rgba | null) {
  const data = paintCape(() => cape ?? [0, 0, 0, 0]);
  if (wings) for (const r of Object.values(elytraFaces())) for (let y = r.y; y < r.y + r.h; y += 1) for (let x = r.x; x < r.x + r.w; x += 1) data.set(wings, (y * 64 + x) * 4);
  return normalizeCape(await sharp(data, { raw: { width: 64, height: 32, channels: 4 } }).png().toBuffer());
}

test('elytra: the wings from the cape texture where the cape was, in render and body', async (t) => {
  const capeColour: Rgba = [200, 30, 30, 255], wingColour: Rgba = [60, 60, 220, 255];
  const both = await capeAndElytra(capeColour, wingColour);
  for (const [name, job] of [['render', { yaw: 180, pitch: 10 }], ['body', { kind: 'body', view: 'back' }], ['running', { yaw: 150, pose: 'running' }]] as const) {
    const wings = await render(`elytra-${name}`, { ...job, cape: both, elytra: true, size: 128 });
    const cape = await render(`elytra-${name}-cape`, { ...job, cape: both, size: 128 });
    t.true(solidCount(wings, wingColour) > 300, `${name}: ${solidCount(wings, wingColour)} wing pixels`);
    t.is(count(wings, capeColour), 0, `${name}: no cape under the wings`);
    t.true(solidCount(cape, capeColour) > 100, `${name}: the cape without elytra`);
    t.is(count(cape, wingColour), 0, `${name}: no wings with the cape`);
  }
  // In every pose and from every side the wings stay inside the picture (their own, larger frame).
  for (const pose of POSE_NAMES) {
    for (const [yaw, pitch] of [[90, 0], [180, 30], [-135, -60], [0, 80]]) {
      const view = await render(`elytra-${pose}-${yaw}-${pitch}`, { pose, yaw, pitch, cape: both, elytra: true, shadow: true, size: 96 });
      const box = opaqueBox(view)!;
      t.true(box.x0 > 0 && box.y0 > 0 && box.x1 < view.width && box.y1 < view.height, `${pose} at yaw ${yaw}, pitch ${pitch}: drawn within ${JSON.stringify(box)}`);
    }
  }
  // Wider than the arms: the body view makes room for them.
  const body = await render('elytra-body-frame', { kind: 'body', view: 'back', cape: both, elytra: true, size: 128 });
  const box = opaqueBox(body)!;
  t.true(box.x0 > 0 && box.x1 < body.width, `the wings within the body view: ${box.x0}-${box.x1}`);
  // A cape texture without elytra art: no wings, and no cape either (the page's grey wings are for no cape texture at all).
  const capeOnly = await capeAndElytra(capeColour, null);
  const none = await farm.render({ kind: 'render', skin: classic, slim: false, size: 128, yaw: 180, pitch: 10, shadow: false, outer: false, bg: null });
  const bare = await farm.render({ kind: 'render', skin: classic, slim: false, size: 128, yaw: 180, pitch: 10, shadow: false, outer: false, bg: null, cape: capeOnly, elytra: true });
  t.true(bare.equals(none), 'the same picture as without a cape');
});

test('upside down (Dinnerbone): feet at the top, the head below, shadow still on the ground', async (t) => {
  const upright = await render('flip-off', { size: 256, shadow: true });
  const flipped = await render('flip-on', { size: 256, shadow: true, flip: true });
  const head = colorBox(upright, inner('head', 'front'))!, feet = colorBox(upright, inner('leftLeg', 'front'))!;
  const head2 = colorBox(flipped, inner('head', 'front'))!, feet2 = colorBox(flipped, inner('leftLeg', 'front'))!;
  t.true(head.y1 < feet.y0 && feet2.y1 < head2.y0, 'the feet above the head');
  // Turned about the axis the viewer looks along: the left leg moves to the other side.
  t.true((feet.x0 + feet.x1) / 2 > upright.width / 2 && (feet2.x0 + feet2.x1) / 2 < flipped.width / 2, 'the left leg on the other side');
  t.is(Math.abs((head2.x1 - head2.x0) - (head.x1 - head.x0)) <= 1, true, 'the same size');
  const above = await render('flip-on-above', { size: 256, shadow: true, flip: true, pitch: 30 });
  const rim = colorBox(above, inner('head', 'front'))!;
  t.true(shadowPixels(above, { x0: 0, y0: rim.y1, x1: above.width, y1: above.height }) > 50, 'the shadow under the head, on the ground');
  for (const kind of ['head', 'cube', 'body'] as const) {
    const up = await render(`flip-${kind}-off`, { kind, size: 128 });
    const down = await render(`flip-${kind}-on`, { kind, size: 128, flip: true });
    // The face's marker texel (its first, top left) turns to the bottom right.
    t.is(markerCorner(up, inner('head', 'front')), 'top-left', kind);
    t.is(markerCorner(down, inner('head', 'front')), 'bottom-right', `${kind}: the face upside down`);
  }
});
