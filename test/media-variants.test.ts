// Resized and converted variants (issue #42) over HTTP against real files: pixels as sharp's own
// pipeline makes them from the original, EXIF orientation applied, never upscaled unless asked,
// one immutable address per variant (canonical query order, own ETag, 304), the per-client
// budget's 429 while cached variants still answer, and 400 naming the field for bad values.
import test from 'ava';
import fs from 'node:fs/promises';
import path from 'node:path';
import sharp, { type Sharp } from 'sharp';
import { tinyMp4 } from '../api/media/tiny-video.ts';
import { call, type RunningApp } from './helpers/service.ts';
import { removeTempDirs, startMedia, tempDir } from './helpers/media-library.ts';

/** Budget (megapixels a minute) of the second service: three uncached variants of the 12 MP photo (13 each) fit, a fourth does not. */
const SMALL_BUDGET = 40;

let app: RunningApp;
let tight: RunningApp;
let root: string;
const originals: Record<string, Buffer> = {};

/** Noise, so that a resize that differs anywhere shows. */
function noise(width: number, height: number): Sharp {
  return sharp({ create: { width, height, channels: 3, background: '#000', noise: { type: 'gaussian', mean: 128, sigma: 40 } } });
}

async function put(category: string, name: string, bytes: Buffer): Promise<void> {
  await fs.mkdir(path.join(root, category), { recursive: true });
  await fs.writeFile(path.join(root, category, name), bytes);
  originals[name] = bytes;
}

test.before(async () => {
  root = await tempDir('variants');
  await put('photos', 'big.jpg', await noise(4000, 3000).jpeg().toBuffer());
  // Stored 600x400, displayed 400x600 (EXIF orientation 6: a quarter turn clockwise).
  await put('turned', 'phone.jpg', await noise(600, 400).jpeg().withMetadata({ orientation: 6 }).toBuffer());
  await put('small', 'tiny.png', await noise(300, 200).png().toBuffer());
  await put('clips', 'clip.mp4', tinyMp4({ width: 640, height: 360 }));
  [app, tight] = await Promise.all([
    startMedia({ MEDIA_DIR: root, DATA_DIR: await tempDir('variants-data') }),
    startMedia({ MEDIA_DIR: root, DATA_DIR: await tempDir('variants-data'), MEDIA_VARIANT_BUDGET: String(SMALL_BUDGET) }),
  ]);
});
test.after.always(async () => {
  await Promise.all([app?.stop(), tight?.stop()]);
  await removeTempDirs();
});

const media = (query: string, init?: RequestInit, on = app) => call(`${on.urls.media}${query}`, init);

/** The one file of a category, by its JSON record. */
async function fileOf(alias: string): Promise<{ id: string; url: string; width: number; height: number }> {
  const res = await media(`/?img=${alias}&format=json`);
  if (res.status !== 200) throw new Error(res.text);
  return res.json;
}

/** Decoded pixels of encoded bytes (a pipeline is encoded first: .raw() on it would skip its encoder). */
async function pixels(image: Buffer | Sharp) {
  const encoded = Buffer.isBuffer(image) ? image : await image.toBuffer();
  const { data, info } = await sharp(encoded).raw().toBuffer({ resolveWithObject: true });
  return { data, width: info.width, height: info.height, channels: info.channels };
}

/** Largest difference of any channel of any pixel; fails when the sizes differ. */
async function maxDifference(t: any, served: Buffer, expected: Sharp): Promise<number> {
  const [a, b] = await Promise.all([pixels(served), pixels(expected)]);
  t.deepEqual([a.width, a.height, a.channels], [b.width, b.height, b.channels]);
  let max = 0;
  for (let i = 0; i < a.data.length; i++) max = Math.max(max, Math.abs(a.data[i] - b.data[i]));
  return max;
}

test('a 4000x3000 JPEG to 800 px WebP matches sharp\'s own resize of the original', async (t) => {
  const file = await fileOf('photos');
  const res = await media(`/f/${file.id}.jpg?w=800&fmt=webp`);
  t.is(res.status, 200, res.text);
  t.is(res.headers.get('content-type'), 'image/webp');
  const expected = sharp(originals['big.jpg']).rotate().resize({ width: 800, fit: 'cover', withoutEnlargement: true }).webp();
  t.is(await maxDifference(t, res.bytes, expected), 0);
  t.deepEqual(await sharp(res.bytes).metadata().then((m) => [m.width, m.height]), [800, 600]);
});

test('options: cover, contain and inside boxes, quality, blur and grayscale, as sharp makes them', async (t) => {
  const file = await fileOf('photos');
  const cases: Array<[string, (image: Sharp) => Sharp]> = [
    ['w=300&h=300', (i) => i.resize({ width: 300, height: 300, fit: 'cover', withoutEnlargement: true }).jpeg()],
    ['w=300&h=300&fit=contain&fmt=png', (i) => i.resize({ width: 300, height: 300, fit: 'contain', withoutEnlargement: true }).png()],
    ['w=300&h=300&fit=inside&fmt=jpeg&q=40', (i) => i.resize({ width: 300, height: 300, fit: 'inside', withoutEnlargement: true }).jpeg({ quality: 40 })],
    ['h=120&blur=3&grayscale=1&fmt=avif', (i) => i.resize({ height: 120, fit: 'cover', withoutEnlargement: true }).blur(3).grayscale().avif()],
  ];
  for (const [query, make] of cases) {
    const res = await media(`/f/${file.id}.jpg?${query}`);
    t.is(res.status, 200, `${query}: ${res.text}`);
    // Same encoder, same settings, same input: the pixels agree (a tolerance of 1 for lossy rounding).
    t.true(await maxDifference(t, res.bytes, make(sharp(originals['big.jpg']).rotate())) <= 1, query);
  }
});

test('EXIF orientation is applied before resizing', async (t) => {
  const file = await fileOf('turned');
  t.deepEqual([file.width, file.height], [400, 600]);
  const res = await media(`/f/${file.id}.jpg?w=200`);
  t.is(res.status, 200, res.text);
  const expected = sharp(originals['phone.jpg']).rotate().resize({ width: 200, fit: 'cover', withoutEnlargement: true }).jpeg();
  t.is(await maxDifference(t, res.bytes, expected), 0);
  t.deepEqual(await sharp(res.bytes).metadata().then((m) => [m.width, m.height, m.orientation]), [200, 300, undefined]);
});

test('never upscaled past the original unless upscale=1', async (t) => {
  const file = await fileOf('small');
  const size = async (query: string) => {
    const res = await media(`/f/${file.id}.png?${query}`);
    t.is(res.status, 200, res.text);
    const meta = await sharp(res.bytes).metadata();
    return [meta.width, meta.height];
  };
  t.deepEqual(await size('w=1000'), [300, 200]);
  t.deepEqual(await size('w=1000&h=1000'), [300, 200]);
  t.deepEqual(await size('w=900&upscale=1'), [900, 600]);
});

test('each variant has its own immutable address and ETag, answers 304, and the random route points at it', async (t) => {
  const file = await fileOf('photos');
  const original = await media(`/f/${file.id}.jpg`, { method: 'HEAD' });
  const variant = await media(`/f/${file.id}.jpg?w=640&fmt=webp`);
  t.is(variant.headers.get('cache-control'), 'public, max-age=31536000, immutable');
  const etag = variant.headers.get('etag')!;
  t.regex(etag, new RegExp(`^"${file.id}-`));
  t.not(etag, original.headers.get('etag'));
  t.not(etag, (await media(`/f/${file.id}.jpg?w=641&fmt=webp`)).headers.get('etag'));
  const again = await media(`/f/${file.id}.jpg?w=640&fmt=webp`, { headers: { 'If-None-Match': etag } });
  t.is(again.status, 304);
  t.is(again.headers.get('etag'), etag);

  // The options in canonical order, whatever order the request gave them in; defaults left out.
  const redirect = await fetch(`${app.urls.media}/?img=photos&fmt=webp&fit=cover&w=640&redirect=1`, { redirect: 'manual' });
  t.is(redirect.status, 302);
  t.is(new URL(redirect.headers.get('location')!).pathname + new URL(redirect.headers.get('location')!).search, `/f/${file.id}.jpg?w=640&fmt=webp`);
  const json = await media('/?img=photos&format=json&w=640&fmt=webp');
  t.true(json.json.url.endsWith(`/f/${file.id}.jpg?w=640&fmt=webp`));
  const served = await media('/?img=photos&w=640&fmt=webp');
  t.is(served.status, 200);
  t.is(served.headers.get('content-type'), 'image/webp');
  t.is(served.headers.get('cache-control'), 'no-store');
  t.true(served.headers.get('content-location')!.endsWith(`/f/${file.id}.jpg?w=640&fmt=webp`));
  t.deepEqual(served.bytes, variant.bytes);
});

test('bad values answer 400 naming the field, on both routes; videos take no options', async (t) => {
  const file = await fileOf('photos');
  for (const [query, field] of [['w=0', 'w'], ['w=5000', 'w'], ['h=0', 'h'], ['fmt=bmp', 'fmt'], ['q=0', 'q'], ['q=101', 'q'], ['blur=11', 'blur'], ['fit=fill', 'fit'], ['grayscale=2', 'grayscale']]) {
    for (const address of [`/f/${file.id}.jpg?${query}`, `/?img=photos&${query}`]) {
      const res = await media(address);
      t.is(res.status, 400, address);
      t.true(JSON.stringify(res.json).includes(field), `${address}: ${res.text}`);
    }
  }
  const clip = (await media('/?vid=clips&format=json')).json;
  for (const address of [`/f/${clip.id}.mp4?w=100`, '/?vid=clips&fmt=webp', '/?vid=clips&format=json&w=100']) {
    const res = await media(address);
    t.is(res.status, 400, address);
    t.regex(res.json.message, /(w|fmt) does not apply to videos/);
  }
});

test('past the budget a client making uncached variants hears 429 while cached ones still answer', async (t) => {
  const file = (await media('/?img=photos&format=json', undefined, tight)).json;
  const cached = `/f/${file.id}.jpg?w=100`;
  t.is((await media(cached, undefined, tight)).status, 200);
  // Each new width is a new variant; a minute that ends meanwhile only adds a few tries.
  let limited;
  for (let w = 101; w < 120 && !limited; w++) {
    const res = await media(`/f/${file.id}.jpg?w=${w}`, undefined, tight);
    if (res.status === 429) limited = res;
    else t.is(res.status, 200, res.text);
  }
  t.truthy(limited, 'no 429 after 19 uncached variants');
  t.is(limited!.json.code, 'rate_limited');
  t.truthy(limited!.headers.get('retry-after'));
  const again = await media(cached, undefined, tight);
  t.is(again.status, 200);
  t.is(again.headers.get('content-type'), 'image/jpeg');
});
