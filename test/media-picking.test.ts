// Picking several files, from several categories, by the client's orientation, through filters
// and by seed, against the media service started as a user would over a generated library.
import test from 'ava';
import fs from 'node:fs/promises';
import path from 'node:path';
import zlib from 'node:zlib';
import sharp from 'sharp';
import { call, type RunningApp } from './helpers/service.ts';
import { imageBytes, removeTempDirs, startMedia, tempDir, writeCategory, writeImage, writeVideo, type ImageSpec } from './helpers/media-library.ts';

const PASSWORD = 'open sesame';
let app: RunningApp;
let env: Record<string, string>;

/** Every file the library holds, by name (names are unique across the library). */
const LIBRARY: Record<string, { private?: boolean; files: Record<string, ImageSpec> }> = {
  // Twelve portrait and landscape images of several formats and sizes, and a square one.
  mixed: {
    files: {
      'p1.png': { width: 100, height: 200 }, 'p2.jpg': { width: 300, height: 400 }, 'p3.webp': { width: 500, height: 900 },
      'p4.gif': { width: 40, height: 60 }, 'p5.png': { width: 320, height: 480 }, 'p6.jpg': { width: 60, height: 90 },
      'l1.png': { width: 200, height: 100 }, 'l2.jpg': { width: 400, height: 300 }, 'l3.webp': { width: 900, height: 500 },
      'l4.gif': { width: 60, height: 40 }, 'l5.png': { width: 480, height: 320 }, 'l6.jpg': { width: 90, height: 60 },
      'sq.png': { width: 150, height: 150 },
    },
  },
  // Landscape only: a phone's pick falls back to any file.
  wide: { files: { 'w1.png': { width: 300, height: 100 }, 'w2.jpg': { width: 250, height: 120 } } },
  // One file against nine: a pick over both takes each file, not each category, equally often.
  one: { files: { 'only.png': { width: 80, height: 50 } } },
  nine: { files: Object.fromEntries(Array.from({ length: 9 }, (_, i) => [`n${i}.png`, { width: 70 + i, height: 40 }])) },
  vault: { private: true, files: { 'v1.png': { width: 50, height: 80 }, 'v2.png': { width: 80, height: 50 } } },
  cellar: { private: true, files: { 'c1.jpg': { width: 64, height: 32 } } },
};
/** A PNG chunk: length, type, data, CRC of type and data. */
function pngChunk(type: string, data: Buffer): Buffer {
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(zlib.crc32(body));
  return Buffer.concat([length, body, crc]);
}

/** An APNG of one frame: acTL and fcTL chunks after IHDR (sharp writes no APNG). */
async function apng(width: number, height: number): Promise<Buffer> {
  const png = await imageBytes('png', { width, height });
  const actl = Buffer.alloc(8);
  actl.writeUInt32BE(1, 0);
  const fctl = Buffer.alloc(26);
  fctl.writeUInt32BE(width, 4);
  fctl.writeUInt32BE(height, 8);
  fctl.writeUInt16BE(1, 22);
  const afterIhdr = 8 + 25;
  return Buffer.concat([png.subarray(0, afterIhdr), pngChunk('acTL', actl), pngChunk('fcTL', fctl), png.subarray(afterIhdr)]);
}

/** Two frames of different colours as one animated GIF or WebP. */
async function animation(format: 'gif' | 'webp'): Promise<Buffer> {
  const frames = await Promise.all(['#f00', '#00f'].map((color) => imageBytes('png', { width: 48, height: 32, color })));
  return sharp(frames, { join: { animated: true } })[format]().toBuffer();
}

const MOVING = ['anim.gif', 'anim.webp', 'anim.png', 'still.gif', 'still.webp', 'still.png', 'still.jpg'];
const namesIn = (isPrivate: boolean) => [
  ...Object.values(LIBRARY).filter((c) => !!c.private === isPrivate).flatMap((c) => Object.keys(c.files)),
  ...(isPrivate ? [] : MOVING),
].sort();

test.before(async () => {
  const root = path.join(await tempDir('media-picking'), 'library');
  for (const [alias, category] of Object.entries(LIBRARY)) {
    const dir = await writeCategory(root, alias, { name: alias, private: !!category.private });
    for (const [name, spec] of Object.entries(category.files)) await writeImage(path.join(dir, name), spec);
  }
  // A video, so that type=video on an image selector has something to leave out.
  await writeVideo(path.join(root, 'mixed', 'clip.mp4'), { width: 640, height: 360 });
  // Moving and still images, made apart from LIBRARY's still ones.
  const moving = await writeCategory(root, 'moving');
  await fs.writeFile(path.join(moving, 'anim.gif'), await animation('gif'));
  await fs.writeFile(path.join(moving, 'anim.webp'), await animation('webp'));
  await fs.writeFile(path.join(moving, 'anim.png'), await apng(48, 32));
  for (const name of MOVING.filter((n) => n.startsWith('still'))) await writeImage(path.join(moving, name), { width: 48, height: 32 });
  env = { MEDIA_DIR: root, DATA_DIR: await tempDir('media-picking-data'), MEDIA_PASSWORD: PASSWORD };
  app = await startMedia(env);
});
test.after.always(async () => {
  await app?.stop();
  await removeTempDirs();
});

const media = (query: string, headers: Record<string, string> = {}) => call(`${app.urls.media}/?${query}`, { headers });
const asOwner = { 'X-Media-Password': PASSWORD };

async function json(query: string, headers: Record<string, string> = {}) {
  const res = await media(query, headers);
  if (res.status !== 200) throw new Error(`${query}: ${res.status} ${res.text}`);
  return res.json;
}

/** The names `count` answers, in order. */
async function listed(query: string, headers: Record<string, string> = {}): Promise<string[]> {
  return (await json(`${query}&format=json`, headers)).files.map((file: { file: string }) => file.file);
}

/** Every distinct file name single picks answer over `draws` calls. */
async function drawn(query: string, draws = 40, headers: Record<string, string> = {}): Promise<Set<string>> {
  const names = new Set<string>();
  for (let i = 0; i < draws; i++) names.add((await json(`${query}&format=json`, headers)).file);
  return names;
}

function assertBad(t: any, res: Awaited<ReturnType<typeof call>>, status: number, code: string, names: RegExp) {
  t.is(res.status, status, res.text);
  t.is(res.json.code, code);
  t.regex(res.json.message, names);
}

test('count=10 answers ten distinct files; more than the category holds answers all of them once', async (t) => {
  for (let i = 0; i < 10; i++) {
    const names = await listed('img=mixed&count=10');
    t.is(names.length, 10);
    t.is(new Set(names).size, 10, names.join());
  }
  const all = await listed('img=mixed&count=50');
  t.deepEqual([...all].sort(), Object.keys(LIBRARY.mixed.files).sort());
  // Without count the answer is the single record it always was.
  const one = await json('img=mixed&format=json');
  t.is(typeof one.id, 'string');
  t.is(one.files, undefined);
});

test('count is 1 to 50 and needs format=json or text', async (t) => {
  assertBad(t, await media('img=mixed&count=500&format=json'), 400, 'bad_request', /count/);
  assertBad(t, await media('img=mixed&count=0&format=json'), 400, 'bad_request', /count/);
  assertBad(t, await media('img=mixed&count=3'), 400, 'bad_request', /count/);
  assertBad(t, await media('img=mixed&count=3&redirect=1'), 400, 'bad_request', /count/);
});

test('exclude leaves those ids out of single and counted picks', async (t) => {
  const everything = (await json('img=mixed&count=50&format=json')).files as { id: string; file: string }[];
  const keep = everything.find((file) => file.file === 'p2.jpg')!;
  const others = everything.filter((file) => file !== keep).map((file) => file.id).join(',');
  t.deepEqual([...await drawn(`img=mixed&exclude=${others}`, 15)], ['p2.jpg']);
  t.deepEqual(await listed(`img=mixed&count=5&exclude=${others}`), ['p2.jpg']);
  assertBad(t, await media(`img=mixed&format=json&exclude=${others},${keep.id}`), 404, 'empty_category', /mixed/);
});

test('orientation=auto: a phone gets portrait files, a desktop landscape, and the answer varies on what it read', async (t) => {
  const iphone = { 'User-Agent': 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 Mobile/15E148' };
  const android = { 'User-Agent': 'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 Chrome/120.0 Mobile Safari/537.36' };
  const desktop = { 'User-Agent': 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 Chrome/120.0 Safari/537.36' };
  const portrait = Object.keys(LIBRARY.mixed.files).filter((name) => name.startsWith('p'));
  const landscape = Object.keys(LIBRARY.mixed.files).filter((name) => name.startsWith('l'));
  for (const phone of [iphone, android, { ...desktop, 'Sec-CH-UA-Mobile': '?1' }]) {
    const names = await listed('img=mixed&orientation=auto&count=50', phone);
    t.deepEqual([...names].sort(), portrait.sort());
  }
  t.deepEqual([...await listed('img=mixed&orientation=auto&count=50', desktop)].sort(), landscape.sort());
  // The hint wins over a phone's User-Agent.
  t.deepEqual([...await listed('img=mixed&orientation=auto&count=50', { ...iphone, 'Sec-CH-UA-Mobile': '?0' })].sort(), landscape.sort());

  const res = await media('img=mixed&orientation=auto&format=json', iphone);
  t.like(res.json, { orientation: 'portrait', orientation_chosen: 'portrait', orientation_fallback: false });
  const vary = (res.headers.get('vary') ?? '').toLowerCase();
  t.true(vary.includes('sec-ch-ua-mobile') && vary.includes('user-agent'), vary);
  t.is(res.headers.get('accept-ch'), 'Sec-CH-UA-Mobile');
  // The file itself too, not only its description.
  const file = await media('img=mixed&orientation=auto', desktop);
  t.is(file.status, 200);
  t.true((file.headers.get('vary') ?? '').toLowerCase().includes('user-agent'));
});

test('orientation=auto falls back to any file when the category has none of the client\'s orientation, and says so', async (t) => {
  const phone = { 'Sec-CH-UA-Mobile': '?1' };
  const one = await json('img=wide&orientation=auto&format=json', phone);
  t.like(one, { orientation: 'landscape', orientation_chosen: 'portrait', orientation_fallback: true });
  const many = await json('img=wide&orientation=auto&count=5&format=json', phone);
  t.like(many, { orientation_chosen: 'portrait', orientation_fallback: true });
  t.is(many.files.length, 2);
  // An explicit orientation does not fall back.
  assertBad(t, await media('img=wide&orientation=portrait&format=json'), 404, 'empty_category', /portrait/);
});

test('img=a,b picks among the union, each file equally likely; unknown or private aliases in a list are 404 naming them', async (t) => {
  t.deepEqual([...await listed('img=one,nine&count=50')].sort(), [...Object.keys(LIBRARY.one.files), ...Object.keys(LIBRARY.nine.files)].sort());
  let fromOne = 0;
  const draws = 200;
  for (let i = 0; i < draws; i++) if ((await json('img=one,nine&format=json')).alias === 'one') fromOne++;
  // 1 file of 10: about 20 of 200 (each category equally likely would give about 100).
  t.true(fromOne > 3 && fromOne < 50, `${fromOne} of ${draws} from the one-file category`);

  assertBad(t, await media('img=mixed,nope&format=json'), 404, 'category_not_found', /"nope"/);
  assertBad(t, await media('img=mixed,vault&format=json'), 404, 'category_not_found', /"vault"/);
  assertBad(t, await media('sim=vault,mixed&format=json', asOwner), 404, 'category_not_found', /"mixed"/);
  assertBad(t, await media('img=mixed,,one&format=json'), 400, 'bad_request', /img/);
});

test('img=all reaches every public category and never a private one; sim=all every private one with the password', async (t) => {
  const publicNames = namesIn(false);
  t.true(publicNames.length <= 50);
  t.deepEqual([...await listed('img=all&count=50')].sort(), publicNames);
  t.deepEqual([...await listed('img=all&count=50', asOwner)].sort(), publicNames);
  t.deepEqual([...await listed('sim=all&count=50', asOwner)].sort(), namesIn(true));
  t.is((await media('sim=all&format=json')).status, 401);
});

test('min_width, min_height and type narrow the pick; nothing left is empty_category; bad values are 400 naming the field', async (t) => {
  const sizes = (await json('img=mixed&count=50&format=json')).files as { file: string; width: number; height: number; mime: string }[];
  const wide = await json('img=mixed&count=50&min_width=300&format=json');
  t.deepEqual(wide.files.map((f: { file: string }) => f.file).sort(), sizes.filter((f) => f.width >= 300).map((f) => f.file).sort());
  const both = await json('img=mixed&count=50&min_width=300&min_height=400&format=json');
  t.deepEqual(both.files.map((f: { file: string }) => f.file).sort(), sizes.filter((f) => f.width >= 300 && f.height >= 400).map((f) => f.file).sort());
  t.deepEqual([...await listed('img=mixed&count=50&type=gif')].sort(), ['l4.gif', 'p4.gif']);
  t.deepEqual([...await listed('img=mixed&count=50&type=image/png')].sort(), ['l1.png', 'l5.png', 'p1.png', 'p5.png', 'sq.png']);
  t.deepEqual([...await listed('img=mixed&count=50&type=image/png&orientation=portrait')].sort(), ['p1.png', 'p5.png']);
  t.deepEqual([...await drawn('vid=mixed&type=video/mp4', 3)], ['clip.mp4']);
  assertBad(t, await media('img=mixed&type=video&format=json'), 404, 'empty_category', /mixed/);
  assertBad(t, await media('img=mixed&min_width=100000&format=json'), 404, 'empty_category', /mixed/);
  assertBad(t, await media('img=mixed&type=bmp&format=json'), 400, 'bad_request', /type/);
  assertBad(t, await media('img=mixed&min_width=0&format=json'), 400, 'bad_request', /min_width/);
  assertBad(t, await media('img=mixed&min_height=tall&format=json'), 400, 'bad_request', /min_height/);
});

test('animated=1 picks videos and animated GIF, WebP and PNG; animated=0 the still ones', async (t) => {
  t.deepEqual([...await listed('img=moving&count=50&animated=1')].sort(), ['anim.gif', 'anim.png', 'anim.webp']);
  t.deepEqual([...await listed('img=moving&count=50&animated=0')].sort(), ['still.gif', 'still.jpg', 'still.png', 'still.webp']);
  t.deepEqual([...await listed('img=moving&count=50&animated=1&type=gif')], ['anim.gif']);
  t.deepEqual([...await drawn('vid=mixed&animated=1', 3)], ['clip.mp4']);
  assertBad(t, await media('vid=mixed&animated=0&format=json'), 404, 'empty_category', /mixed/);
  assertBad(t, await media('img=moving&animated=2&format=json'), 400, 'bad_request', /animated/);
});

test('seed answers the same file (and with count the same list) on every request and after a restart', async (t) => {
  const seeds = ['alice', 'bob', 'carol', 'dave', 'erin', 'frank'];
  const before = new Map<string, { one: string; list: string[] }>();
  for (const seed of seeds) {
    const one = (await json(`img=mixed&seed=${seed}&format=json`)).id;
    const list = (await json(`img=mixed&seed=${seed}&count=5&format=json`)).files.map((f: { id: string }) => f.id);
    for (let i = 0; i < 5; i++) t.is((await json(`img=mixed&seed=${seed}&format=json`)).id, one);
    t.deepEqual((await json(`img=mixed&seed=${seed}&count=5&format=json`)).files.map((f: { id: string }) => f.id), list);
    // The single pick is the list's first: one order of the files per seed.
    t.is(list[0], one);
    before.set(seed, { one, list });
  }
  // Seeds spread over the files rather than all landing on one.
  t.true(new Set([...before.values()].map((v) => v.one)).size > 1);
  // A second process over the same library, indexed afresh: the other tests keep the first one.
  const again = await startMedia({ ...env, DATA_DIR: await tempDir('media-picking-again') });
  try {
    for (const seed of seeds) {
      const one = await call(`${again.urls.media}/?img=mixed&seed=${seed}&format=json`);
      t.is(one.json.id, before.get(seed)!.one);
      const list = await call(`${again.urls.media}/?img=mixed&seed=${seed}&count=5&format=json`);
      t.deepEqual(list.json.files.map((f: { id: string }) => f.id), before.get(seed)!.list);
    }
  } finally {
    await again.stop();
  }
  assertBad(t, await media(`img=mixed&seed=${'x'.repeat(257)}&format=json`), 400, 'bad_request', /seed/);
  t.is((await media(`img=mixed&seed=${'x'.repeat(256)}&format=json`)).status, 200);
});

test('format=text answers the absolute address as one text/plain line, one a line with count', async (t) => {
  const res = await media('img=mixed&format=text');
  t.is(res.status, 200);
  t.regex(res.headers.get('content-type') ?? '', /^text\/plain/);
  const address = /^http:\/\/[^/]+\/f\/[0-9a-f]{24}\.[a-z0-9]+$/;
  t.regex(res.text, /^[^\n]+\n$/);
  t.regex(res.text.trim(), address);
  t.is((await call(res.text.trim())).status, 200);
  const many = await media('img=mixed&format=text&count=4');
  const lines = many.text.trim().split('\n');
  t.is(lines.length, 4);
  t.is(new Set(lines).size, 4);
  for (const line of lines) t.regex(line, address);
  // A private file's address carries its token, so it works alone.
  const secret = (await media('sim=vault&format=text', asOwner)).text.trim();
  t.regex(secret, /\?token=/);
  t.is((await call(secret)).status, 200);
});
