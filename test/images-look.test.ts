// Issue #31 through HTTP with the real render farm: Dinnerbone upside down (flip=0 upright), an
// upload with its cape and the elytra drawn from it (equip), and upload form errors that name
// their field.
import test from 'ava';
import sharp from 'sharp';
import { paintCape, type Rgba } from '../renderer/skin-paint.ts';
import { drawSkin, faceColor } from '../scripts/fake-upstream/skin-art.ts';
import { elytraFaces } from '../shared/skin-layout.ts';
import { colorBox, count, decodePng, markerCorner, saveArtifact, solidCount, type Picture } from './helpers/png.ts';
import { startSkins, type SkinsHarness } from './helpers/skins.ts';

let h: SkinsHarness;
test.before(async () => {
  h = await startSkins({ RENDER_WORKERS: '2' });
});
test.after.always(async () => {
  await h?.stop();
});

async function image(pathname: string, name: string, init?: RequestInit): Promise<{ picture: Picture; etag: string | null }> {
  const r = await h.get(pathname, init);
  if (r.status !== 200) throw new Error(`${pathname}: ${r.status} ${r.text.slice(0, 200)}`);
  saveArtifact('images-look', name, r.bytes);
  return { picture: await decodePng(r.bytes), etag: r.headers.get('etag') };
}

const headFront = faceColor('head', 'inner', 'front');
const legFront = faceColor('leftLeg', 'inner', 'front');

test('Dinnerbone is drawn upside down on render, body, head and cube; flip=0 draws him upright', async (t) => {
  const down = await image('/v1/render/Dinnerbone/128?shadow=0&outer=0', 'dinnerbone');
  const up = await image('/v1/render/Dinnerbone/128?shadow=0&outer=0&flip=0', 'dinnerbone-flip0');
  const below = (p: Picture, a: Rgba, b: Rgba) => colorBox(p, a)!.y0 > colorBox(p, b)!.y1;
  t.true(below(down.picture, headFront, legFront), 'the feet above the head');
  t.true(below(up.picture, legFront, headFront), 'flip=0: the head above the feet');
  t.not(down.etag, up.etag);
  for (const kind of ['body', 'head', 'cube']) {
    const flipped = await image(`/v1/${kind}/Dinnerbone/128?outer=0`, `dinnerbone-${kind}`);
    const upright = await image(`/v1/${kind}/Dinnerbone/128?outer=0&flip=0`, `dinnerbone-${kind}-flip0`);
    t.is(markerCorner(flipped.picture, headFront), 'bottom-right', `${kind}: the face upside down`);
    t.is(markerCorner(upright.picture, headFront), 'top-left', `${kind}, flip=0`);
  }
  // Anyone else is upright either way, and flip changes neither the picture nor its tag.
  const steve = await image('/v1/render/ClassicSteve/128?shadow=0&outer=0', 'steve');
  const steve0 = await image('/v1/render/ClassicSteve/128?shadow=0&outer=0&flip=0', 'steve-flip0');
  t.true(below(steve.picture, legFront, headFront));
  t.is(steve.etag, steve0.etag);
  t.is((await h.get('/v1/render/Dinnerbone?flip=2')).status, 400);
});

const capeColour: Rgba = [200, 30, 30, 255];
const wingColour: Rgba = [60, 60, 220, 255];

/** A cape texture: the cape one colour, the elytra another. */
function capePng(): Promise<Buffer> {
  const data = paintCape(() => capeColour);
  for (const r of Object.values(elytraFaces())) for (let y = r.y; y < r.y + r.h; y += 1) for (let x = r.x; x < r.x + r.w; x += 1) data.set(wingColour, (y * 64 + x) * 4);
  return sharp(data, { raw: { width: 64, height: 32, channels: 4 } }).png().toBuffer();
}

function form(files: Array<[string, Buffer | string]>, fields: Record<string, string> = {}): RequestInit {
  const body = new FormData();
  for (const [name, bytes] of files) body.append(name, new Blob([typeof bytes === 'string' ? bytes : new Uint8Array(bytes)], { type: 'image/png' }), `${name}.png`);
  for (const [name, value] of Object.entries(fields)) body.set(name, value);
  return { method: 'POST', body };
}

test('an upload may carry a cape: drawn on the back, or its elytra with equip=elytra', async (t) => {
  const skin = await drawSkin({});
  const cape = await capePng();
  const back = { yaw: '180', pitch: '10', shadow: '0' };
  const caped = await image('/v1/render', 'upload-cape', form([['file', skin], ['cape', cape]], back));
  const winged = await image('/v1/render', 'upload-elytra', form([['file', skin], ['cape', cape]], { ...back, equip: 'elytra' }));
  const bare = await image('/v1/render', 'upload-none', form([['file', skin], ['cape', cape]], { ...back, equip: 'none' }));
  const alone = await image('/v1/render', 'upload-alone', form([['file', skin]], back));
  t.true(solidCount(caped.picture, capeColour) > 300, 'the cape');
  t.is(count(caped.picture, wingColour), 0);
  t.true(solidCount(winged.picture, wingColour) > 300, 'the wings where the cape was');
  t.is(count(winged.picture, capeColour), 0);
  t.is(count(bare.picture, capeColour) + count(bare.picture, wingColour), 0, 'equip=none: nothing on the back');
  t.not(caped.etag, alone.etag, 'the cape is part of the tag');
  t.not(caped.etag, winged.etag);
  t.is(alone.etag, (await image('/v1/render', 'upload-alone-2', form([['file', skin]], back))).etag);
});

test('upload form errors name their field', async (t) => {
  const skin = await drawSkin({});
  const cape = await capePng();
  const cases: Array<[string, RequestInit, number, string[]]> = [
    ['a third file', form([['file', skin], ['cape', cape], ['extra', cape]]), 400, ['extra takes no file: only the fields file and cape take files']],
    ['an unknown file field', form([['file', skin], ['skin', skin]]), 400, ['skin takes no file', 'only the fields file and cape take files']],
    ['two capes', form([['file', skin], ['cape', cape], ['cape', cape]]), 400, ['cape: one file at most']],
    ['a cape too large', form([['file', skin], ['cape', Buffer.alloc(2 * 1024 * 1024 + 10)]]), 413, ['cape is larger than']],
    ['a field too long', form([['file', skin]], { yaw: '1'.repeat(2000) }), 413, ['yaw is longer than']],
    ['a cape that is not a PNG', form([['file', skin], ['cape', 'GIF89a']]), 400, ['the cape is not a PNG']],
    ['a cape of the wrong size', form([['file', skin], ['cape', skin]]), 400, ['cape of 64x64']],
  ];
  for (const [label, init, status, words] of cases) {
    const r = await h.get('/v1/render', init);
    t.is(r.status, status, `${label}: ${r.text.slice(0, 300)}`);
    for (const w of words) t.true(r.text.includes(w), `${label}: "${w}" in ${r.text.slice(0, 300)}`);
    t.false(r.text.includes('    at '), `${label}: no stack`);
  }
  t.false(h.app.logs.some((l) => l.msg === 'unexpected error'), 'no upload was an unexpected error');
});

test('equip on a player: the elytra is another picture and tag; without a cape, cape and none are one image, elytra grey wings', async (t) => {
  const cape = await image('/v1/render/SlimAlex/96?yaw=180', 'slimalex-cape');
  const wings = await image('/v1/render/SlimAlex/96?yaw=180&equip=elytra', 'slimalex-elytra');
  const none = await image('/v1/render/SlimAlex/96?yaw=180&equip=none', 'slimalex-none');
  t.not(cape.etag, wings.etag);
  t.not(cape.etag, none.etag);
  t.false(cape.picture.data.equals(wings.picture.data));
  const body = await image('/v1/body/SlimAlex/64?view=back&equip=elytra', 'slimalex-body-elytra');
  t.not(body.etag, (await image('/v1/body/SlimAlex/64?view=back', 'slimalex-body')).etag);
  const steve = await image('/v1/render/ClassicSteve/96?yaw=180', 'steve-back');
  t.is((await image('/v1/render/ClassicSteve/96?yaw=180&equip=none', 'steve-none')).etag, steve.etag);
  // Issue #41: the grey wings of our own (test/poses-limbs.test.ts looks at them).
  t.not((await image('/v1/render/ClassicSteve/96?yaw=180&equip=elytra', 'steve-elytra')).etag, steve.etag);
  t.is((await h.get('/v1/render/SlimAlex?equip=wings')).status, 400);
});
