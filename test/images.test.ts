// Image endpoints through HTTP with the real render farm (headless Chromium, SwiftShader WebGL)
// and sharp, checked at known pixels of generated skins whose faces carry distinct colours.
import test from 'ava';
import sharp from 'sharp';
import { EYE_COLOR, drawSkin, faceColor } from '../scripts/fake-upstream/skin-art.ts';
import { decodePng, pixel as at, saveArtifact, type Picture } from './helpers/png.ts';
import { startSkins, type SkinsHarness } from './helpers/skins.ts';

let h: SkinsHarness;
test.before(async () => {
  h = await startSkins({ RENDER_WORKERS: '2' });
});
test.after.always(async () => {
  await h?.stop();
});

async function image(pathname: string, name: string): Promise<Picture> {
  const r = await h.get(pathname);
  if (r.status !== 200) throw new Error(`${pathname}: ${r.status} ${r.text.slice(0, 200)}`);
  saveArtifact('images', name, r.bytes);
  return decodePng(r.bytes);
}

/** Same hue as the face colour, allowing for the fixed shade per face (0.5 to 1). */
function isShadeOf(actual: number[], expected: number[]): boolean {
  if (actual[3] < 200) return false;
  const ratios = [0, 1, 2].map((c) => (expected[c] < 16 ? null : actual[c] / expected[c])).filter((r) => r !== null) as number[];
  const spread = Math.max(...ratios) - Math.min(...ratios);
  return ratios.every((r) => r > 0.4 && r < 1.1) && spread < 0.12;
}

/** The share of opaque pixels whose colour is a shade of the given face colour. */
function share(p: Picture, expected: number[]): number {
  let hits = 0;
  let opaque = 0;
  for (let i = 0; i < p.width * p.height; i += 1) {
    const px = [p.data[i * 4], p.data[i * 4 + 1], p.data[i * 4 + 2], p.data[i * 4 + 3]];
    if (px[3] < 200) continue;
    opaque += 1;
    if (isShadeOf(px, expected)) hits += 1;
  }
  return opaque === 0 ? 0 : hits / opaque;
}

test('avatar: face quadrants, hat on and off, size, circle and background', async (t) => {
  const plain = await image('/v1/avatar/ClassicSteve/64?helm=0', 'avatar-nohelm');
  t.is(plain.width, 64);
  t.is(plain.height, 64);
  const face = faceColor('head', 'inner', 'front');
  t.true(isShadeOf(at(plain, 0, 0), face));
  t.true(isShadeOf(at(plain, 63, 63), face));
  t.deepEqual(at(plain, 1 * 8 + 4, 3 * 8 + 4), [...EYE_COLOR], 'the left eye texel at (1, 3)');
  const helm = await image('/v1/avatar/ClassicSteve/64', 'avatar-helm');
  // The hat is a checker: texel (0, 0) is hat-coloured, texel (1, 0) shows the face.
  t.true(isShadeOf(at(helm, 4, 4), faceColor('head', 'outer', 'front')));
  t.true(isShadeOf(at(helm, 8 + 4, 4), face));
  const circle = await image('/v1/avatar/ClassicSteve?size=100&shape=circle', 'avatar-circle');
  t.is(at(circle, 0, 0)[3], 0, 'corners are transparent');
  t.is(at(circle, 50, 50)[3], 255);
  const bg = await image('/v1/avatar/ClassicSteve/32?shape=circle&bg=ff0000', 'avatar-bg');
  t.deepEqual(at(bg, 16, 16)[3], 255);
  t.deepEqual(at(bg, 0, 0), [255, 0, 0, 255], 'the background fills the circle\'s corners');
});

test('3D render: front shows the face and body front, back shows the backs, top shows the head top', async (t) => {
  const front = await image('/v1/render/ClassicSteve/256?shadow=0', 'render-front');
  t.is(front.width, 256);
  t.is(front.height, 256);
  t.true(share(front, faceColor('body', 'inner', 'front')) > 0.05);
  t.true(share(front, faceColor('head', 'inner', 'front')) > 0.05);
  t.is(share(front, faceColor('body', 'inner', 'back')), 0);
  const back = await image('/v1/render/ClassicSteve/256?yaw=180&shadow=0', 'render-back');
  t.true(share(back, faceColor('body', 'inner', 'back')) > 0.05);
  t.true(share(back, faceColor('head', 'inner', 'back')) > 0.05);
  t.is(share(back, faceColor('head', 'inner', 'front')), 0);
  const side = await image('/v1/render/ClassicSteve/256?yaw=90&shadow=0', 'render-side');
  t.true(share(side, faceColor('head', 'inner', 'left')) > 0.03, 'yaw 90 looks at the left side');
  const top = await image('/v1/render/ClassicSteve/256?pitch=90&shadow=0', 'render-top');
  t.true(share(top, faceColor('head', 'inner', 'top')) > 0.2);
  t.is(share(top, faceColor('head', 'inner', 'bottom')), 0);
});

test('outer layer on and off; bg colour; transparent elsewhere', async (t) => {
  const on = await image('/v1/render/ClassicSteve/128?shadow=0', 'render-outer-on');
  const off = await image('/v1/render/ClassicSteve/128?outer=0&shadow=0', 'render-outer-off');
  t.true(share(on, faceColor('head', 'outer', 'front')) > 0.01);
  t.is(share(off, faceColor('head', 'outer', 'front')), 0);
  t.is(at(off, 0, 0)[3], 0, 'transparent background by default');
  const bg = await image('/v1/render/ClassicSteve/128?bg=336699&shadow=0', 'render-bg');
  t.deepEqual(at(bg, 0, 0), [0x33, 0x66, 0x99, 255]);
});

test('slim arms are narrower than classic ones', async (t) => {
  const classic = await image('/v1/body/ClassicSteve/128?outer=0', 'body-classic');
  const slim = await image('/v1/body/SlimAlex/128?outer=0', 'body-slim');
  const armPixels = (p: Picture) => share(p, faceColor('rightArm', 'inner', 'front'));
  t.true(armPixels(slim) > 0);
  t.true(armPixels(slim) < armPixels(classic) * 0.9, `${armPixels(slim)} vs ${armPixels(classic)}`);
});

test('body: front and back views, size wide and twice as tall', async (t) => {
  const front = await image('/v1/body/ClassicSteve/100', 'body-front');
  t.is(front.width, 100);
  t.is(front.height, 200);
  t.true(share(front, faceColor('body', 'inner', 'front')) > 0.05);
  const back = await image('/v1/body/ClassicSteve/100?view=back', 'body-back');
  t.true(share(back, faceColor('body', 'inner', 'back')) > 0.05);
  t.is(share(back, faceColor('body', 'inner', 'front')), 0);
});

test('the cape is drawn behind the body', async (t) => {
  const back = await image('/v1/render/SlimAlex/256?yaw=180&shadow=0', 'render-cape-back');
  t.true(share(back, faceColor('cape', 'inner', 'front')) > 0.1, 'seen from behind, the cape covers the back');
  const front = await image('/v1/render/SlimAlex/256?shadow=0', 'render-cape-front');
  t.is(share(front, faceColor('cape', 'inner', 'front')), 0);
});

test('legacy 64x32 skins get mirrored left limbs', async (t) => {
  const front = await image('/v1/render/LegacyOld/128?outer=0&shadow=0', 'render-legacy');
  // The left leg is drawn from the right leg's texels, so the right leg's front colour covers both.
  t.true(share(front, faceColor('rightLeg', 'inner', 'front')) > share(front, faceColor('body', 'inner', 'front')) * 0.9);
  t.is(share(front, faceColor('leftLeg', 'inner', 'front')), 0);
});

test('HD skins, head, cube and default skins render', async (t) => {
  const hd = await image('/v1/render/HdPlayer/128?shadow=0', 'render-hd');
  t.true(share(hd, faceColor('body', 'inner', 'front')) > 0.05);
  const head = await image('/v1/head/ClassicSteve/128', 'head');
  t.true(share(head, faceColor('head', 'inner', 'top')) > 0.05, 'default view is from above');
  t.is(share(head, faceColor('body', 'inner', 'front')), 0, 'head only');
  const cube = await image('/v1/cube/ClassicSteve/128?yaw=45&pitch=30', 'cube');
  t.true(share(cube, faceColor('head', 'inner', 'front')) > 0.05);
  const noSkin = await image('/v1/render/NoSkin/128', 'render-default-skin');
  t.true(noSkin.data.some((v, i) => i % 4 === 3 && v === 255), 'the default skin is drawn');
});

test('image headers: PNG, immutable caching, ETag and 304 without rendering, X-Cache', async (t) => {
  const first = await h.get('/v1/render/CapeWearer/64?yaw=12');
  t.is(first.headers.get('content-type'), 'image/png');
  t.regex(first.headers.get('cache-control') ?? '', /^public, max-age=\d+, immutable$/);
  t.is(first.headers.get('x-cache'), 'MISS');
  t.is(first.headers.get('x-ratelimit-limit'), '240');
  const second = await h.get('/v1/render/CapeWearer/64?yaw=12');
  t.is(second.headers.get('x-cache'), 'HIT');
  t.true(second.bytes.equals(first.bytes));
  const etag = first.headers.get('etag')!;
  const conditional = await h.get('/v1/render/CapeWearer/64?yaw=12', { headers: { 'if-none-match': etag } });
  t.is(conditional.status, 304);
  const head = await h.get('/v1/render/CapeWearer/64?yaw=12', { method: 'HEAD' });
  t.is(head.status, 200);
  t.is(head.bytes.length, 0);
});

test.serial('identical concurrent cold requests render once', async (t) => {
  const before = (await h.get('/metrics')).text;
  const count = (text: string) => Number(/skinfarm_render_duration_seconds_count\{kind="render"\} (\d+)/.exec(text)?.[1] ?? 0);
  const results = await Promise.all(Array.from({ length: 12 }, () => h.get('/v1/render/gen_4242/96?yaw=33')));
  t.true(results.every((r) => r.status === 200 && r.bytes.equals(results[0].bytes)));
  t.is(count((await h.get('/metrics')).text) - count(before), 1);
});

test('bad image parameters are bad_request; unknown players not_found', async (t) => {
  for (const query of ['/v1/render/ClassicSteve/7', '/v1/render/ClassicSteve/513', '/v1/render/ClassicSteve?yaw=181', '/v1/render/ClassicSteve?pitch=-91',
    '/v1/avatar/ClassicSteve?shape=star', '/v1/avatar/ClassicSteve?bg=red', '/v1/body/ClassicSteve?view=side', '/v1/render/ClassicSteve?scale=9',
    '/v1/render/ClassicSteve?shadow=2', '/v1/avatar/ClassicSteve/12.5', '/v1/render/ClassicSteve?pose=dancing']) {
    const r = await h.get(query);
    t.is(r.status, 400, query);
    t.is(r.json.code, 'bad_request', query);
  }
  const missing = await h.get('/v1/render/NobodyAtAll');
  t.is(missing.status, 404);
  t.is(missing.json.code, 'not_found');
});

test('pose: each draws its own image with its own ETag and cache entry, on players and uploads', async (t) => {
  const standing = await h.get('/v1/render/ClassicSteve/96?yaw=20');
  const waving = await h.get('/v1/render/ClassicSteve/96?yaw=20&pose=waving');
  t.is(waving.status, 200);
  t.is(waving.headers.get('x-cache'), 'MISS');
  t.false(waving.bytes.equals(standing.bytes));
  t.not(waving.headers.get('etag'), standing.headers.get('etag'));
  const again = await h.get('/v1/render/ClassicSteve/96?yaw=20&pose=waving');
  t.is(again.headers.get('x-cache'), 'HIT');
  t.true(again.bytes.equals(waving.bytes));
  const named = await h.get('/v1/render/ClassicSteve/96?yaw=20&pose=standing');
  t.is(named.headers.get('etag'), standing.headers.get('etag'), 'standing is the default');
  saveArtifact('images', 'render-waving', waving.bytes);

  const upload = async (pose?: string) => {
    const form = new FormData();
    form.set('file', new Blob([new Uint8Array(await drawSkin({}))], { type: 'image/png' }), 'skin.png');
    if (pose) form.set('pose', pose);
    return h.get('/v1/render/96', { method: 'POST', body: form });
  };
  const sitting = await upload('sitting');
  t.is(sitting.status, 200);
  saveArtifact('images', 'upload-sitting', sitting.bytes);
  t.false(sitting.bytes.equals((await upload()).bytes));
  t.is((await upload('flying')).json.code, 'bad_request');
});

test('POST /v1/render/{size} renders an uploaded skin; bad files are invalid_skin', async (t) => {
  const form = new FormData();
  form.set('file', new Blob([new Uint8Array(await drawSkin({ slim: true }))], { type: 'image/png' }), 'skin.png');
  form.set('yaw', '180');
  const r = await h.get('/v1/render/96', { method: 'POST', body: form });
  t.is(r.status, 200, r.text.slice(0, 200));
  t.is(r.headers.get('cache-control'), 'no-store');
  saveArtifact('images', 'upload', r.bytes);
  t.true(share(await decodePng(r.bytes), faceColor('body', 'inner', 'back')) > 0.05);

  const text = new FormData();
  text.set('file', new Blob(['not a png'], { type: 'image/png' }), 'skin.png');
  const bad = await h.get('/v1/render/96', { method: 'POST', body: text });
  t.is(bad.status, 400);
  t.is(bad.json.code, 'invalid_skin');

  const odd = new FormData();
  odd.set('file', new Blob([await sharp({ create: { width: 50, height: 40, channels: 4, background: '#000' } }).png().toBuffer()]), 'x.png');
  t.is((await h.get('/v1/render/96', { method: 'POST', body: odd })).json.code, 'invalid_skin');

  const big = new FormData();
  big.set('file', new Blob([Buffer.alloc(2 * 1024 * 1024 + 10)]), 'big.png');
  const tooBig = await h.get('/v1/render/96', { method: 'POST', body: big });
  t.is(tooBig.status, 413);

  t.is((await h.get('/v1/render/96', { method: 'POST', body: new FormData() })).json.code, 'missing_param');
});
