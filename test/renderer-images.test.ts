// What the render farm draws, checked at pixel level with generated skins whose every face has
// its own colour and a marker texel in its first corner: the right face shows from every side,
// the right way round. Real Chromium (SwiftShader WebGL) and sharp; PNGs land in
// test-artifacts/renderer/ for a person to look at.
import test from 'ava';
import { RenderFarm } from '../renderer/farm.ts';
import type { RenderJob } from '../renderer/jobs.ts';
import { normalizeCape, normalizeSkin, type NormalizedSkin } from '../renderer/skin-normalize.ts';
import { EYE_COLOR, drawCape, drawSkin, faceColor } from '../scripts/fake-upstream/skin-art.ts';
import { silentLogger } from '../shared/log.ts';
import { FACE_NAMES, type FaceName, type PartName } from '../shared/skin-layout.ts';
import { colorBox, count, decodePng, markerCorner, opaqueBox, pixel, saveArtifact, shadeOf, shadowPixels, share, solidCount, type Picture, type Rgba } from './helpers/png.ts';

let farm: RenderFarm;
let classic: NormalizedSkin;
let slim: NormalizedSkin;

test.before(async () => {
  farm = await RenderFarm.create({ workers: 2, gpu: 'off' }, silentLogger);
  classic = await normalizeSkin(await drawSkin({}));
  slim = await normalizeSkin(await drawSkin({ slim: true }));
});
test.after.always(() => farm?.close());

/** Renders a job (defaults: 3D render of the classic skin, 128 px, no outer layer, no shadow). */
async function draw(name: string, job: Partial<RenderJob> = {}): Promise<Picture> {
  const png = await farm.render({
    kind: 'render', skin: classic, slim: false, size: 128, yaw: 0, pitch: 0, shadow: false, outer: false, bg: null, ...job,
  });
  saveArtifact('renderer', name, png);
  return decodePng(png);
}

const inner = (part: PartName, face: FaceName) => faceColor(part, 'inner', face);

/** Hue in degrees of a saturated pixel, null for greys and whites. */
function hue([r, g, b]: Rgba): number | null {
  const max = Math.max(r, g, b), min = Math.min(r, g, b);
  if (max === 0 || (max - min) / max < 0.15) return null;
  const d = max - min;
  const h = max === r ? ((g - b) / d) % 6 : max === g ? (b - r) / d + 2 : (r - g) / d + 4;
  return (h * 60 + 360) % 360;
}

/**
 * Opaque pixels whose hue is outside [from, to] degrees: colours from elsewhere in the texture.
 * Anti-aliased edges mix the faces they divide, which keeps the hue inside the part's range.
 */
function strays(p: Picture, from: number, to: number): number {
  let n = 0;
  for (let y = 0; y < p.height; y += 1) {
    for (let x = 0; x < p.width; x += 1) {
      const px = pixel(p, x, y);
      const h = hue(px);
      if (px[3] > 0 && h !== null && (h < from - 4 || h > to + 4)) n += 1;
    }
  }
  return n;
}

test('from the front: head, body, arms and legs show their fronts, first texel top left', async (t) => {
  const p = await draw('render-front', { size: 256 });
  t.is(p.width, 256);
  t.is(p.height, 256);
  for (const part of ['head', 'body', 'rightArm', 'leftArm', 'rightLeg', 'leftLeg'] as const) {
    t.is(markerCorner(p, inner(part, 'front')), 'top-left', part);
    t.is(solidCount(p, inner(part, 'back')), 0, `${part} back hidden`);
  }
  // The figure's right arm is on the viewer's left.
  const box = (part: PartName) => colorBox(p, inner(part, 'front'))!;
  t.true(box('rightArm').x1 <= box('body').x0 && box('leftArm').x0 >= box('body').x1);
  t.true(count(p, EYE_COLOR) > 0, 'the eyes');
});

test('from behind (yaw 180): backs, first texel top left', async (t) => {
  const p = await draw('render-back', { yaw: 180 });
  for (const part of ['head', 'body', 'rightLeg', 'leftLeg'] as const) t.is(markerCorner(p, inner(part, 'back')), 'top-left', part);
  t.is(solidCount(p, inner('head', 'front')), 0);
});

test('from the sides: yaw 90 shows the left side, yaw -90 the right side', async (t) => {
  const left = await draw('render-yaw90', { yaw: 90 });
  t.is(markerCorner(left, inner('head', 'left')), 'top-left');
  t.is(solidCount(left, inner('head', 'right')), 0);
  const right = await draw('render-yaw-90', { yaw: -90 });
  t.is(markerCorner(right, inner('head', 'right')), 'top-left');
  t.is(solidCount(right, inner('head', 'left')), 0);
});

test('from above (pitch 90) the top, from below (pitch -90) the bottom, which the game draws as seen from above', async (t) => {
  const top = await draw('head-top', { kind: 'head', pitch: 90 });
  t.true(share(top, inner('head', 'top')) > 0.9);
  t.is(markerCorner(top, inner('head', 'top')), 'top-left', 'back edge up, the right side on the left');
  const below = await draw('head-bottom', { kind: 'head', pitch: -90 });
  t.true(share(below, inner('head', 'bottom')) > 0.9);
  t.is(markerCorner(below, inner('head', 'bottom')), 'top-right', 'back edge up, the right side on the right');
  const legs = await draw('render-bottom', { pitch: -90 });
  t.is(markerCorner(legs, inner('rightLeg', 'bottom')), 'top-right');
});

test('the outer layer: drawn over the inner one (which shows through its holes), or left out', async (t) => {
  const on = await draw('render-outer-on', { outer: true });
  const off = await draw('render-outer-off');
  t.true(count(on, faceColor('head', 'outer', 'front')) > 100);
  t.true(count(on, inner('head', 'front')) > 100, 'through the checker');
  t.is(solidCount(off, faceColor('head', 'outer', 'front')), 0);
  t.true(opaqueBox(on)!.y0 <= opaqueBox(off)!.y0, 'the hat is bigger than the head');
});

test('slim arms are 3 texels wide, classic ones 4', async (t) => {
  const wide = await draw('body-classic', { kind: 'body' });
  const thin = await draw('body-slim', { kind: 'body', skin: slim, slim: true });
  const ratio = count(thin, inner('rightArm', 'front')) / count(wide, inner('rightArm', 'front'));
  t.true(ratio > 0.7 && ratio < 0.8, `slim / classic arm pixels ${ratio}`);
  t.is(markerCorner(thin, inner('leftArm', 'front')), 'top-left');
});

test('body: size wide and twice as tall, front or back, background colour', async (t) => {
  const front = await draw('body-front', { kind: 'body', size: 100, bg: '336699' });
  t.is(front.width, 100);
  t.is(front.height, 200);
  t.deepEqual(pixel(front, 0, 0), [0x33, 0x66, 0x99, 255]);
  t.is(markerCorner(front, inner('body', 'front')), 'top-left');
  const back = await draw('body-back', { kind: 'body', size: 100, view: 'back' });
  t.is(markerCorner(back, inner('body', 'back')), 'top-left');
  t.is(solidCount(back, inner('body', 'front')), 0);
  t.is(pixel(back, 0, 0)[3], 0, 'transparent without bg');
});

test('the cape hangs behind the body: its outside seen from behind, the right way round', async (t) => {
  const cape = await normalizeCape(await drawCape({}));
  const back = await draw('render-cape-back', { yaw: 180, cape, size: 256 });
  t.is(markerCorner(back, faceColor('cape', 'inner', 'front')), 'top-left');
  t.true(share(back, faceColor('cape', 'inner', 'front')) > 0.2);
  const front = await draw('render-cape-front', { cape, size: 256 });
  t.is(solidCount(front, faceColor('cape', 'inner', 'front')), 0);
  t.is(markerCorner(front, inner('body', 'front')), 'top-left');
});

test('legacy skins: the left leg is the right one mirrored', async (t) => {
  const legacy = await normalizeSkin(await drawSkin({ legacy: true }));
  const p = await draw('render-legacy', { skin: legacy, size: 256 });
  const half = p.width / 2;
  t.is(markerCorner(p, inner('rightLeg', 'front'), { x0: 0, y0: 0, x1: half, y1: p.height }), 'top-left', 'the right leg');
  t.is(markerCorner(p, inner('rightLeg', 'front'), { x0: half, y0: 0, x1: p.width, y1: p.height }), 'top-right', 'the left leg, mirrored');
  t.is(solidCount(p, inner('leftLeg', 'front')), 0);
});

test('HD skins draw like 64 px ones', async (t) => {
  const hd = await normalizeSkin(await drawSkin({ scale: 2 }));
  const p = await draw('render-hd', { skin: hd });
  t.is(markerCorner(p, inner('head', 'front')), 'top-left');
  t.is(markerCorner(p, inner('body', 'front')), 'top-left');
});

test('head and cube are the head alone, centred, without seams; the shadow lies under the feet', async (t) => {
  for (const kind of ['head', 'cube'] as const) {
    const p = await draw(kind, { kind, yaw: 45, pitch: 30, outer: true });
    t.is(solidCount(p, inner('body', 'front')), 0, kind);
    t.true(count(p, inner('head', 'front')) > 0 && count(p, inner('head', 'left')) > 0 && count(p, inner('head', 'top')) > 0, kind);
    const box = opaqueBox(p)!;
    t.true(Math.abs(box.x0 + box.x1 - p.width) <= 2 && Math.abs(box.y0 + box.y1 - p.height) <= 2, `${kind} centred`);
    // No seams: texels next to a face in the texture (other parts, other hues) never bleed in
    // along its edges; the head's faces span hues 0 to 43 degrees.
    const hues = FACE_NAMES.map((face) => hue(inner('head', face))!);
    t.is(strays(p, Math.min(...hues), Math.max(...hues)), 0, `${kind}: only the head's own colours`);
  }
  const shadow = await draw('render-shadow', { shadow: true, pitch: 30, yaw: 20 });
  const feet = colorBox(shadow, inner('rightLeg', 'front'))!.y1;
  t.true(shadowPixels(shadow, { x0: 0, y0: feet - 8, x1: shadow.width, y1: shadow.height }) > 50, 'soft, half-transparent pixels at the feet');
  t.is(shadowPixels(shadow, { x0: 0, y0: 0, x1: shadow.width, y1: feet - 20 }), 0, 'and nowhere else');
  t.is(shadowPixels(await draw('render-no-shadow', { pitch: 30, yaw: 20 })), 0);
});

test('scale zooms: 0.5 draws the figure half as tall', async (t) => {
  const full = opaqueBox(await draw('render-scale-1'))!;
  const small = opaqueBox(await draw('render-scale-half', { scale: 0.5 }))!;
  const ratio = (small.y1 - small.y0) / (full.y1 - full.y0);
  t.true(ratio > 0.45 && ratio < 0.55, `${ratio}`);
  t.true(full.y0 > 0 && full.y1 < 128, 'the default fits with a margin');
});
