// The media service over HTTP, started as a user would, against a generated library:
// orientation detection, JSON fields, cache headers, byte ranges, errors, path traversal.
import test from 'ava';
import fs from 'node:fs/promises';
import http from 'node:http';
import path from 'node:path';
import { call, type RunningApp } from './helpers/service.ts';
import { buildTestLibrary, removeTempDirs, startMedia, tempDir, XSS_NAME } from './helpers/media-library.ts';

let app: RunningApp;
let root: string;
let outside: string;

test.before(async () => {
  ({ root, outside } = await buildTestLibrary());
  app = await startMedia({ MEDIA_DIR: root, DATA_DIR: await tempDir('media-data'), MEDIA_PASSWORD: 'open sesame' });
});
test.after.always(async () => {
  await app?.stop();
  await removeTempDirs();
});

const media = (query: string) => call(`${app.urls.media}/${query}`);

/** Every distinct file name the selector answers over `draws` JSON calls. */
async function namesOf(query: string, draws = 40): Promise<Set<string>> {
  const names = new Set<string>();
  for (let i = 0; i < draws; i++) {
    const res = await media(`${query}&format=json`);
    if (res.status !== 200) throw new Error(`${query}: ${res.status} ${res.text}`);
    names.add(res.json.file);
  }
  return names;
}

/** GET with the path sent exactly as written (fetch would normalise the dots away). */
function rawGet(pathname: string): Promise<{ status: number; body: string }> {
  const { hostname, port } = new URL(app.urls.media);
  return new Promise((resolve, reject) => {
    http.get({ hostname, port, path: pathname }, (res) => {
      let body = '';
      res.setEncoding('latin1');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    }).on('error', reject);
  });
}

function assertEnvelope(t: any, res: Awaited<ReturnType<typeof call>>, status: number, code: string, mentions: RegExp) {
  t.is(res.status, status, res.text);
  t.like(res.json, { code, success: false, data: null });
  t.is(typeof res.json.timestamp, 'number');
  t.regex(res.json.message, mentions);
}

test('orientation filters pick exactly the matching files, EXIF-rotated JPEG and rotated video included', async (t) => {
  t.deepEqual([...await namesOf('?img=photos&orientation=portrait')].sort(), ['tall.avif', 'tall.jpg', 'turned.jpg']);
  t.deepEqual([...await namesOf('?img=photos&orientation=landscape')].sort(), ['wide.gif', 'wide.png']);
  t.deepEqual([...await namesOf('?img=photos', 60)].sort(), ['square.webp', 'tall.avif', 'tall.jpg', 'turned.jpg', 'wide.gif', 'wide.png']);
  t.deepEqual([...await namesOf('?vid=movies&orientation=portrait')].sort(), ['tall.webm', 'upright.mov']);
  t.deepEqual([...await namesOf('?vid=movies&orientation=landscape')].sort(), ['wide.mp4']);
});

test('category counts: files, landscape, portrait; broken and outside files are not counted', async (t) => {
  const res = await media('categories');
  t.is(res.status, 200);
  const photos = res.json.categories.find((c: { alias: string }) => c.alias === 'photos');
  t.like(photos, { name: 'Photos', files: 6, images: 6, videos: 0, landscape: 2, portrait: 3, square: 1 });
  const movies = res.json.categories.find((c: { alias: string }) => c.alias === 'movies');
  t.like(movies, { files: 3, videos: 3, landscape: 1, portrait: 2 });
  t.deepEqual(res.json.categories.map((c: { alias: string }) => c.alias), ['empty', 'movies', 'photos', 'xss']);
  t.like(res.json.totals, { categories: 4, files: 10 });
});

test('unreadable files are skipped with a log line naming them', (t) => {
  const skipped = app.logs.filter((l) => l.msg === 'media file skipped: unreadable').map((l) => l.file);
  t.deepEqual(skipped, ['photos/broken.png']);
  t.true(app.logs.some((l) => l.msg === 'media file skipped: symlink points outside MEDIA_DIR' && l.file === 'photos/leak.png'));
  t.true(app.logs.some((l) => l.msg === 'media directory skipped: it points outside MEDIA_DIR' && l.alias === 'escape'));
});

test('format=json describes the file with its permanent address', async (t) => {
  const res = await media('?img=photos&orientation=portrait&format=json');
  t.is(res.status, 200);
  t.is(res.headers.get('cache-control'), 'no-store');
  const body = res.json;
  t.like(body, { alias: 'photos', category: 'Photos', type: 'image', orientation: 'portrait', private: false });
  t.regex(body.url, new RegExp(`^${app.urls.media}/f/[0-9a-f]{24}\\.(jpg|avif)$`));
  t.true(body.url.endsWith(`/f/${body.id}.${path.extname(body.file).slice(1)}`));
  const stat = await fs.stat(path.join(root, 'photos', body.file));
  t.is(body.bytes, stat.size);
  t.true(body.height > body.width);
  t.regex(body.mime, /^image\/(jpeg|avif)$/);
  const turned = (await Promise.all(Array.from({ length: 30 }, () => media('?img=photos&orientation=portrait&format=json'))))
    .map((r) => r.json).find((j) => j.file === 'turned.jpg');
  t.like(turned, { width: 180, height: 320, mime: 'image/jpeg' });
  const video = await media('?vid=movies&orientation=landscape&format=json');
  t.like(video.json, { file: 'wide.mp4', type: 'video', mime: 'video/mp4', width: 640, height: 360, orientation: 'landscape' });
});

test('without format the random route answers the file itself, never cached', async (t) => {
  const res = await media('?img=photos&orientation=landscape');
  t.is(res.status, 200);
  t.is(res.headers.get('cache-control'), 'no-store');
  t.is(res.headers.get('etag'), null);
  const location = res.headers.get('content-location')!;
  t.regex(location, /\/f\/[0-9a-f]{24}\.(png|gif)$/);
  t.regex(res.headers.get('content-type')!, /^image\/(png|gif)$/);
  const permanent = await call(location);
  t.true(permanent.bytes.equals(res.bytes));
});

test('redirect=1 answers 302 to the permanent address', async (t) => {
  const res = await fetch(`${app.urls.media}/?vid=movies&orientation=landscape&redirect=1`, { redirect: 'manual' });
  t.is(res.status, 302);
  t.is(res.headers.get('cache-control'), 'no-store');
  t.regex(res.headers.get('location')!, /\/f\/[0-9a-f]{24}\.mp4$/);
});

test('permanent addresses: immutable, ETag and 304, HEAD without a body', async (t) => {
  const { url } = (await media('?img=photos&orientation=landscape&format=json')).json;
  const res = await call(url);
  t.is(res.status, 200);
  t.is(res.headers.get('cache-control'), 'public, max-age=31536000, immutable');
  const etag = res.headers.get('etag')!;
  t.regex(etag, /^"[0-9a-f]{24}"$/);
  const again = await call(url, { headers: { 'If-None-Match': etag } });
  t.is(again.status, 304);
  t.is(again.bytes.length, 0);
  const head = await call(url, { method: 'HEAD' });
  t.is(head.status, 200);
  t.is(head.headers.get('content-length'), String(res.bytes.length));
  t.is(head.bytes.length, 0);
});

test('video byte ranges: 206 with the right slice, 416 past the end', async (t) => {
  const { url, bytes } = (await media('?vid=movies&orientation=landscape&format=json')).json;
  const file = await fs.readFile(path.join(root, 'movies', 'wide.mp4'));
  t.is(bytes, file.length);
  const first = await call(url, { headers: { Range: 'bytes=0-99' } });
  t.is(first.status, 206);
  t.is(first.headers.get('content-range'), `bytes 0-99/${file.length}`);
  t.true(first.bytes.equals(file.subarray(0, 100)));
  const tail = await call(url, { headers: { Range: 'bytes=-500' } });
  t.is(tail.status, 206);
  t.true(tail.bytes.equals(file.subarray(file.length - 500)));
  const middle = await call(url, { headers: { Range: `bytes=150000-` } });
  t.is(middle.status, 206);
  t.true(middle.bytes.equals(file.subarray(150_000)));
  const beyond = await call(url, { headers: { Range: `bytes=${file.length}-` } });
  t.is(beyond.status, 416);
  t.is(beyond.headers.get('content-range'), `bytes */${file.length}`);
  // A stale If-Range gets the whole file.
  const stale = await call(url, { headers: { Range: 'bytes=0-99', 'If-Range': '"something-else"' } });
  t.is(stale.status, 200);
  t.is(stale.bytes.length, file.length);
});

test('errors: unknown alias 404, bad orientation or format 400, empty filter 404, each explained', async (t) => {
  assertEnvelope(t, await media('?img=nope'), 404, 'category_not_found', /nope/);
  assertEnvelope(t, await media('?img=photos&orientation=sideways'), 400, 'bad_request', /orientation must be landscape or portrait/);
  assertEnvelope(t, await media('?img=photos&format=xml'), 400, 'bad_request', /format must be json/);
  assertEnvelope(t, await media('?img=photos&redirect=maybe'), 400, 'bad_request', /redirect must be 1 or 0/);
  assertEnvelope(t, await media('?img=photos&vid=movies'), 400, 'bad_request', /one selector at a time/);
  assertEnvelope(t, await media('?img='), 400, 'bad_request', /needs a category alias/);
  assertEnvelope(t, await media('?img=empty'), 404, 'empty_category', /empty has no images/);
  assertEnvelope(t, await media('?img=movies'), 404, 'empty_category', /movies has no images/);
  assertEnvelope(t, await media('?vid=photos'), 404, 'empty_category', /photos has no videos/);
  assertEnvelope(t, await media('f/0123456789abcdef01234567.png'), 404, 'route_not_found', /no media file/);
});

test('private categories are unreachable through public selectors', async (t) => {
  assertEnvelope(t, await media('?img=secret'), 404, 'category_not_found', /public category/);
  assertEnvelope(t, await media('?vid=secret'), 404, 'category_not_found', /public category/);
});

test('path traversal: encoded, plain and absolute forms reach nothing outside the library', async (t) => {
  const leak = await fs.readFile(path.join(outside, 'leak.png'), 'latin1');
  const attempts = [
    '/f/../../../../etc/passwd',
    '/f/..%2f..%2f..%2fetc%2fpasswd',
    '/f/%2e%2e/%2e%2e/%2e%2e/etc/passwd',
    '/f/%2e%2e%2f%2e%2e%2fetc%2fpasswd.png',
    '/f//etc/passwd',
    '/f/%2Fetc%2Fpasswd',
    `/f/${encodeURIComponent(path.join(outside, 'leak.png'))}`,
    '/..%2f..%2f..%2fetc%2fpasswd',
    '/?img=../../../etc',
    '/?img=..%2F..%2Foutside',
    '/?img=%2e%2e',
    `/?img=${encodeURIComponent(outside)}`,
    '/?img=escape',
    '/?img=photos/../../outside',
  ];
  for (const attempt of attempts) {
    const res = await rawGet(attempt);
    t.true([400, 404].includes(res.status), `${attempt} -> ${res.status}`);
    t.false(res.body.includes('root:'), attempt);
    t.false(res.body.includes(leak.slice(0, 40)), attempt);
  }
  t.false((await namesOf('?img=photos', 60)).has('leak.png'));
});

test('landing page: public categories with counts and totals, names escaped, private ones absent', async (t) => {
  const res = await media('');
  t.is(res.status, 200);
  t.regex(res.headers.get('content-type')!, /^text\/html/);
  const html = res.text;
  t.regex(html, /<tr data-alias="photos"><td>Photos<\/td><td><code>photos<\/code><\/td>\s*<td class="n">6<\/td><td class="n">2<\/td><td class="n">3<\/td>/);
  t.regex(html, /id="total-categories">4</);
  t.regex(html, /id="total-files">10</);
  t.regex(html, /id="total-calls">\d+</);
  t.true(html.includes(`${app.urls.media}/?img=photos`));
  t.true(html.includes(`${app.urls.media}/?vid=movies`));
  t.false(html.includes(XSS_NAME));
  t.true(html.includes('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &lt;b&gt;co&lt;/b&gt;'));
  t.false(/secret/i.test(html));
});

test('rate-limit headers on every media answer', async (t) => {
  const res = await media('?img=photos&format=json');
  t.is(res.headers.get('x-ratelimit-limit'), '600');
  const file = await call(res.json.url);
  t.is(file.headers.get('x-ratelimit-limit'), '2400');
});
