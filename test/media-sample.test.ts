// With no MEDIA_DIR, start-up writes a sample library so every selector works at once.
import test from 'ava';
import fs from 'node:fs/promises';
import path from 'node:path';
import { call } from './helpers/service.ts';
import { removeTempDirs, startMedia, tempDir } from './helpers/media-library.ts';

test.after.always(removeTempDirs);

test('a missing MEDIA_DIR gets a sample library: images both ways, videos, a private category', async (t) => {
  const dir = path.join(await tempDir('media-sample'), 'not-yet');
  const app = await startMedia({ MEDIA_DIR: dir, DATA_DIR: await tempDir('media-data'), MEDIA_PASSWORD: 'demo' });
  try {
    t.true(app.logs.some((l) => l.msg === 'MEDIA_DIR did not exist: wrote a sample library'));
    t.deepEqual((await fs.readdir(dir)).sort(), ['clips', 'patterns', 'scenery', 'vault']);
    const list = (await call(`${app.urls.media}/categories`)).json;
    t.deepEqual(list.categories.map((c: { alias: string }) => c.alias), ['clips', 'patterns', 'scenery']);
    for (const orientation of ['landscape', 'portrait']) {
      const res = await call(`${app.urls.media}/?img=scenery&orientation=${orientation}&format=json`);
      t.like(res.json, { orientation, type: 'image' });
      const video = await call(`${app.urls.media}/?vid=clips&orientation=${orientation}&format=json`);
      t.like(video.json, { orientation, type: 'video' });
    }
    const image = await call(`${app.urls.media}/?img=patterns`);
    t.is(image.status, 200);
    t.regex(image.headers.get('content-type')!, /^image\//);
    const upright = await call(`${app.urls.media}/?smo=vault&format=json`, { headers: { 'X-Media-Password': 'demo' } });
    t.like(upright.json, { file: 'upright.mp4', width: 360, height: 640, orientation: 'portrait' });
  } finally {
    await app.stop();
  }
  // Existing now: a second start leaves it alone.
  const again = await startMedia({ MEDIA_DIR: dir, DATA_DIR: await tempDir('media-data') });
  t.false(again.logs.some((l) => l.msg === 'MEDIA_DIR did not exist: wrote a sample library'));
  await again.stop();
});
