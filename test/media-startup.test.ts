// The media port opens before the library is indexed: meanwhile a category not read whole yet
// answers 503 with Retry-After (never a partial pick or a 404 that a cache would keep), and
// /health answers at once.
import test from 'ava';
import fs from 'node:fs/promises';
import path from 'node:path';
import { call, startApp, type RunningApp } from './helpers/service.ts';
import { imageBytes, removeTempDirs, tempDir, writeCategory } from './helpers/media-library.ts';

let app: RunningApp | undefined;

test.after.always(async () => {
  await app?.stop();
  await removeTempDirs();
});

test('requests during the first indexing hear 503 with Retry-After; then the whole library answers', async (t) => {
  const root = path.join(await tempDir('media-startup'), 'library');
  const dir = await writeCategory(root, 'slow');
  // EXIF in a PNG sends every file through sharp: a library that takes a while to index.
  const bytes = await imageBytes('png', { width: 30, height: 20, exifOrientation: 1 });
  const count = 2000;
  await Promise.all(Array.from({ length: count }, (_, i) => fs.writeFile(path.join(dir, `p${i}.png`), bytes)));
  app = await startApp({ SERVICES: 'media', MEDIA_DIR: root, DATA_DIR: await tempDir('media-data') }, { keepIndexing: true });
  const base = app.urls.media;

  const [early, health, permanent] = await Promise.all([
    call(`${base}/?img=slow&format=json`), call(`${base}/health`), call(`${base}/f/0123456789abcdef01234567.png`),
  ]);
  t.is(early.status, 503, early.text);
  t.like(early.json, { code: 'overloaded', success: false });
  t.regex(early.json.message, /still being indexed/);
  t.regex(early.headers.get('retry-after') ?? '', /^\d+$/);
  t.is(health.status, 200);
  t.is(permanent.status, 503);

  await app.waitForLog((l) => l.msg === 'media library indexed', 60_000);
  const order = app.logs.map((l) => l.msg);
  t.true(order.indexOf('listening') < order.indexOf('media library indexed'));
  const late = await call(`${base}/?img=slow&format=json`);
  t.is(late.status, 200);
  t.is((await call(`${base}/categories`)).json.totals.files, count);
  t.is((await call(`${base}/?img=nothing`)).status, 404);
});
