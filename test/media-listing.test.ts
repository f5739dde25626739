// Listings and file info (issue #42): GET /categories/{alias}/files pages a category's files in
// the order the index first saw them (files added while a client pages come last, so nothing is
// missed or repeated), with RFC 8288 Link headers; GET /f/{id}.json describes one file as the
// random route's format=json does. Private categories need credentials. Real files, a real service.
import test from 'ava';
import fs from 'node:fs/promises';
import path from 'node:path';
import { call, type RunningApp } from './helpers/service.ts';
import { removeTempDirs, startMedia, tempDir, withoutReadOverride, writeCategory, writeImage, writeVideo } from './helpers/media-library.ts';
import { until } from './helpers/poll.ts';

// As root the service runs without the capability to read past a file's mode (media-faults.test.ts).
const access = withoutReadOverride();
if ('reason' in access) console.log(`media-listing: unreadable-file case skipped: ${access.reason}`);

const PASSWORD = 'listing secret';
const BASIC = { Authorization: `Basic ${Buffer.from(`any:${PASSWORD}`).toString('base64')}` };
/** Seven files of every shape, so limit=3 gives pages of 3, 3 and 1. */
const SHOTS = ['m-wide.png', 'm-tall.jpg', 'm-square.webp', 'n-wide.gif', 'n-tall.png', 'o-wide.jpg'];
const CLIP = 'p-clip.mp4';

let app: RunningApp;
let root: string;

test.before(async () => {
  root = path.join(await tempDir('media-listing'), 'library');
  const shots = await writeCategory(root, 'shots', { name: 'Shots' });
  await Promise.all(SHOTS.map((name, i) => writeImage(path.join(shots, name), name.includes('wide') ? { width: 300 + i, height: 200 } : name.includes('tall') ? { width: 200, height: 300 + i } : { width: 250, height: 250 })));
  await writeVideo(path.join(shots, CLIP), { width: 640, height: 360 });
  const growing = await writeCategory(root, 'growing');
  await Promise.all([1, 2, 3, 4, 5, 6].map((i) => writeImage(path.join(growing, `m-${i}.png`), { width: 100 + i, height: 80 })));
  const vault = await writeCategory(root, 'vault', { name: 'Vault', private: true });
  await Promise.all(['v-1.png', 'v-2.png', 'v-3.jpg'].map((name) => writeImage(path.join(vault, name), { width: 120, height: 90 })));
  const steady = await writeCategory(root, 'steady');
  await Promise.all(['s-1.png', 's-2.png', 's-3.png', 's-4.png'].map((name) => writeImage(path.join(steady, name), { width: 60, height: 40 })));
  const env = { MEDIA_DIR: root, DATA_DIR: await tempDir('media-data'), MEDIA_PASSWORD: PASSWORD, MEDIA_RESCAN_SECONDS: '0' };
  app = await startMedia(env, 'prefix' in access ? { prefix: access.prefix } : {});
});
test.after.always(async () => {
  await app?.stop();
  await removeTempDirs();
});

const get = (pathAndQuery: string, headers: Record<string, string> = {}) => call(`${app.urls.media}${pathAndQuery}`, { headers });

/** The Link header as rel -> URL. */
function links(res: Awaited<ReturnType<typeof call>>): Record<string, string> {
  const header = res.headers.get('link') ?? '';
  return Object.fromEntries([...header.matchAll(/<([^>]+)>; rel="(\w+)"/g)].map(([, url, rel]) => [rel, url]));
}

const names = (res: Awaited<ReturnType<typeof call>>): string[] => res.json.files.map((f: { file: string }) => f.file);

/** Every page from `url` on, following rel="next": the pages' file names in order. */
async function walk(url: string | undefined): Promise<{ names: string[]; pages: number }> {
  const walked = { names: [] as string[], pages: 0 };
  while (url) {
    const res = await call(url);
    walked.pages += 1;
    walked.names.push(...names(res));
    url = links(res).next;
  }
  return walked;
}

test('the pages hold every file exactly once, in the same order each time', async (t) => {
  const walked = await walk(`${app.urls.media}/categories/shots/files?limit=3`);
  t.is(walked.pages, 3);
  t.is(new Set(walked.names).size, walked.names.length, 'no file twice');
  t.deepEqual([...walked.names].sort(), [...SHOTS, CLIP].sort());
  t.deepEqual((await walk(`${app.urls.media}/categories/shots/files?limit=3`)).names, walked.names);
  const whole = await get('/categories/shots/files?limit=100');
  t.is(whole.headers.get('cache-control'), 'no-store');
  t.deepEqual(names(whole), walked.names);
  t.like(whole.json, { alias: 'shots', category: 'Shots', private: false, page: 1, limit: 100, total: 7, pages: 1 });
  // The default page is 1 and the default limit 30.
  t.like((await get('/categories/shots/files')).json, { page: 1, limit: 30, total: 7 });
  // Each entry is what the random route says of the file, with its permanent address.
  const clip = whole.json.files.find((f: { file: string }) => f.file === CLIP);
  t.like(clip, { type: 'video', mime: 'video/mp4', width: 640, height: 360, orientation: 'landscape', private: false });
  t.regex(clip.url, new RegExp(`^${app.urls.media}/f/${clip.id}\\.mp4$`));
  t.is((await get(`/f/${clip.id}.mp4`)).status, 200);
});

test('Link headers name first, last, prev and next, keeping the other query parameters', async (t) => {
  const url = (page: number) => `${app.urls.media}/categories/shots/files?pretty=0&page=${page}&limit=3`;
  t.deepEqual(links(await get('/categories/shots/files?pretty=0&page=1&limit=3')), { first: url(1), last: url(3), next: url(2) });
  t.deepEqual(links(await get('/categories/shots/files?pretty=0&page=2&limit=3')), { first: url(1), last: url(3), prev: url(1), next: url(3) });
  const last = await get('/categories/shots/files?pretty=0&page=3&limit=3');
  t.deepEqual(links(last), { first: url(1), last: url(3), prev: url(2) });
  t.is(last.json.files.length, 1);
  // Past the end: no files, and prev leads back to the last page.
  const past = await get('/categories/shots/files?pretty=0&page=9&limit=3');
  t.is(past.status, 200);
  t.deepEqual(past.json.files, []);
  t.deepEqual(links(past), { first: url(1), last: url(3), prev: url(3) });
});

test('files added while a client pages come after the pages it has read: no gap, no repeat', async (t) => {
  const first = await get('/categories/growing/files?limit=2');
  const second = await call(links(first).next);
  const read = [...names(first), ...names(second)];
  // Names that sort before every file already there: an order by name would put them on page 1.
  const added = ['a-new-1.png', 'a-new-2.png', 'a-new-3.png'];
  await Promise.all(added.map((name, i) => writeImage(path.join(root, 'growing', name), { width: 90, height: 120 + i })));
  await until('the watcher indexes the new files', () => get('/categories/growing/files?limit=2'), (res) => res.json.total === 9);

  const all = [...read, ...(await walk(links(second).next)).names];
  t.is(new Set(all).size, all.length, `no file twice: ${all}`);
  t.deepEqual([...all].sort(), [...added, 'm-1.png', 'm-2.png', 'm-3.png', 'm-4.png', 'm-5.png', 'm-6.png']);
  t.deepEqual(all.slice(6).sort(), added, 'the new files come last');
  // The pages already read hold what they held.
  t.deepEqual((await walk(`${app.urls.media}/categories/growing/files?limit=2`)).names.slice(0, 4), read);
});

('reason' in access ? test.skip : test)('a file unreadable for a while is left out meanwhile, then comes back to its place', async (t) => {
  const listing = () => get('/categories/steady/files');
  const before = names(await listing());
  const file = path.join(root, 'steady', before[1]);
  t.teardown(() => fs.chmod(file, 0o644));
  await fs.chmod(file, 0);
  await until('the watcher sees the file unreadable', listing, (res) => res.json.total === before.length - 1);
  t.deepEqual(names(await listing()), before.filter((name) => name !== before[1]));
  await fs.chmod(file, 0o644);
  await until('the watcher sees the file readable again', listing, (res) => res.json.total === before.length);
  t.deepEqual(names(await listing()), before);
});

test('a private category needs credentials; unknown categories answer alike without them', async (t) => {
  for (const alias of ['vault', 'no-such-category']) {
    const bare = await get(`/categories/${alias}/files`);
    t.is(bare.status, 401, alias);
    t.like(bare.json, { code: 'password_required' });
    t.regex(bare.headers.get('www-authenticate')!, /^Basic /);
  }
  const wrong = await get('/categories/vault/files', { 'X-Media-Password': 'not it' });
  t.is(wrong.status, 403);
  t.like(wrong.json, { code: 'wrong_password' });
  t.is((await get('/categories/no-such-category/files', BASIC)).status, 404);

  const open = await get('/categories/vault/files?limit=2', BASIC);
  t.is(open.status, 200);
  t.like(open.json, { alias: 'vault', category: 'Vault', private: true, total: 3, pages: 2 });
  for (const file of open.json.files) t.regex(file.url, /\/f\/[0-9a-f]{24}\.(png|jpg)\?token=\d+\./);
  // With a token in the query, the links carry it: the next page works on its own.
  const { token } = (await call(`${app.urls.media}/login`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ password: PASSWORD }) })).json;
  const byToken = await get(`/categories/vault/files?limit=2&token=${encodeURIComponent(token)}`);
  const next = await call(links(byToken).next);
  t.is(next.status, 200);
  t.is(next.json.files.length, 1);
  // A public category needs none, and credentials change nothing there.
  t.is((await get('/categories/shots/files', BASIC)).json.files[0].url.includes('token='), false);
});

test('/f/<id>.json says what the random route\'s format=json says; the file itself is still served', async (t) => {
  const random = (await get('/?img=shots&format=json')).json;
  const info = await get(`/f/${random.id}.json`);
  t.is(info.status, 200);
  t.is(info.headers.get('cache-control'), 'no-store');
  t.deepEqual(info.json, random);
  const file = await get(`/f/${random.id}.${random.url.split('.').pop()}`);
  t.is(file.status, 200);
  t.is(file.headers.get('content-type'), random.mime);
  t.is(file.bytes.length, random.bytes);

  const { token } = (await call(`${app.urls.media}/login`, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ password: PASSWORD }) })).json;
  const secret = (await get(`/?sim=vault&format=json&token=${encodeURIComponent(token)}`)).json;
  t.is((await get(`/f/${secret.id}.json`)).status, 401);
  t.is((await get(`/f/${secret.id}.json`, { 'X-Media-Password': 'not it' })).status, 403);
  t.deepEqual((await get(`/f/${secret.id}.json?token=${encodeURIComponent(token)}`)).json, secret);
  t.regex((await get(`/f/${secret.id}.json`, BASIC)).json.url, new RegExp(`/f/${secret.id}\\.(png|jpg)\\?token=`));

  const unknown = await get(`/f/${'0'.repeat(24)}.json`);
  t.is(unknown.status, 404);
  t.like(unknown.json, { code: 'route_not_found' });
});

test('bad page and limit values answer 400 naming the field', async (t) => {
  const cases: Array<[string, RegExp]> = [
    ['page=-1', /page must be an integer from 1/], ['page=0', /page must be an integer from 1/], ['page=1.5', /page must be an integer/],
    ['page=two', /page must be an integer/], ['limit=0', /limit must be an integer from 1 to 100/], ['limit=101', /limit must be an integer from 1 to 100/],
    ['limit=2.0', /limit must be an integer/], ['limit=1e2', /limit must be an integer/],
  ];
  for (const [query, mentions] of cases) {
    const res = await get(`/categories/shots/files?${query}`);
    t.is(res.status, 400, query);
    t.like(res.json, { code: 'bad_request', success: false }, query);
    t.regex(res.json.message, mentions, query);
  }
  // An alias is looked up in the index, never joined into a path.
  for (const alias of ['..', '%2e%2e', '..%2fshots', '%2fetc']) t.is((await get(`/categories/${alias}/files`, BASIC)).status, 404, alias);
});
