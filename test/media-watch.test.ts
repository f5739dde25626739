// The library follows MEDIA_DIR while the service runs (fs.watch; the periodic rescan is off
// here so only the watcher can pass): files and categories appear and disappear, settings and
// changed files are picked up. Each wait polls the JSON listing up to a deadline.
import test from 'ava';
import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import path from 'node:path';
import { call, type RunningApp } from './helpers/service.ts';
import { imageBytes, removeTempDirs, startMedia, tempDir, writeCategory, writeImage, writeVideo } from './helpers/media-library.ts';

const DEADLINE_MS = 10_000;

let app: RunningApp;
let root: string;

test.before(async () => {
  root = path.join(await tempDir('media-watch'), 'library');
  const live = await writeCategory(root, 'live', { name: 'Live' });
  await writeImage(path.join(live, 'first.png'), { width: 200, height: 100 });
  app = await startMedia({ MEDIA_DIR: root, DATA_DIR: await tempDir('media-data'), MEDIA_RESCAN_SECONDS: '0' });
});
test.after.always(async () => {
  await app?.stop();
  await removeTempDirs();
});

interface Listed { alias: string; name: string; files: number; landscape: number; portrait: number }

async function listing(): Promise<Listed[]> {
  return (await call(`${app.urls.media}/categories`)).json.categories;
}

/** Polls until `check` holds for the public listing; fails with the last listing at the deadline. */
async function until(check: (categories: Listed[]) => boolean): Promise<Listed[]> {
  const deadline = Date.now() + DEADLINE_MS;
  let last: Listed[] = [];
  while (Date.now() < deadline) {
    last = await listing();
    if (check(last)) return last;
    await pause();
  }
  throw new Error(`condition not met within ${DEADLINE_MS} ms; last listing: ${JSON.stringify(last)}`);
}

const category = (list: Listed[], alias: string) => list.find((c) => c.alias === alias);
const pause = () => new Promise((resolve) => setTimeout(resolve, 50));

test.serial('a file added to a category appears, with its orientation', async (t) => {
  t.like(category(await listing(), 'live'), { files: 1, portrait: 0 });
  await writeImage(path.join(root, 'live', 'second.jpg'), { width: 100, height: 300 });
  const list = await until((l) => category(l, 'live')?.portrait === 1);
  t.like(category(list, 'live'), { files: 2, landscape: 1, portrait: 1 });
  const picked = await call(`${app.urls.media}/?img=live&orientation=portrait&format=json`);
  t.is(picked.json.file, 'second.jpg');
});

test.serial('a removed file disappears, and its permanent address with it', async (t) => {
  const { url } = (await call(`${app.urls.media}/?img=live&orientation=landscape&format=json`)).json;
  t.is((await call(url)).status, 200);
  await fs.rm(path.join(root, 'live', 'first.png'));
  await until((l) => category(l, 'live')?.files === 1);
  t.is((await call(url)).status, 404);
  const empty = await call(`${app.urls.media}/?img=live&orientation=landscape`);
  t.is(empty.status, 404);
  t.like(empty.json, { code: 'empty_category' });
});

test.serial('a rewritten file gets a new permanent address; the old one is gone', async (t) => {
  const before = (await call(`${app.urls.media}/?img=live&format=json`)).json;
  await writeImage(path.join(root, 'live', 'second.jpg'), { width: 100, height: 500, color: '#a33' });
  const deadline = Date.now() + DEADLINE_MS;
  let after = before;
  while (after.id === before.id && Date.now() < deadline) {
    await pause();
    after = (await call(`${app.urls.media}/?img=live&format=json`)).json;
  }
  t.not(after.id, before.id);
  t.is(after.height, 500);
  t.is((await call(before.url)).status, 404);
  t.is((await call(after.url)).status, 200);
});

test.serial('right after a rewrite (before or after the watcher sees it): old address 404 without caching, random answers the new bytes', async (t) => {
  const dir = await writeCategory(root, 'quick');
  await writeImage(path.join(dir, 'only.png'), { width: 30, height: 20 });
  const before = (await until((l) => category(l, 'quick')?.files === 1)) && (await call(`${app.urls.media}/?img=quick&format=json`)).json;
  await writeImage(path.join(dir, 'only.png'), { width: 60, height: 20, color: '#123' });
  const [old, random] = await Promise.all([call(before.url), call(`${app.urls.media}/?img=quick`)]);
  t.is(old.status, 404);
  t.false((old.headers.get('cache-control') ?? '').includes('immutable'));
  t.is(old.headers.get('etag'), null);
  t.is(random.status, 200);
  t.true(random.bytes.equals(await fs.readFile(path.join(dir, 'only.png'))));
});

test.serial('a new category directory appears; a removed one disappears', async (t) => {
  const fresh = await writeCategory(root, 'fresh', { name: 'Fresh & new' });
  await writeVideo(path.join(fresh, 'clip.webm'), { width: 300, height: 200 });
  const list = await until((l) => category(l, 'fresh')?.files === 1);
  t.like(category(list, 'fresh'), { name: 'Fresh & new', landscape: 1 });
  t.is((await call(`${app.urls.media}/?vid=fresh&format=json`)).json.file, 'clip.webm');
  await fs.rm(fresh, { recursive: true });
  await until((l) => !category(l, 'fresh'));
  t.is((await call(`${app.urls.media}/?vid=fresh`)).status, 404);
});

test.serial('category.json changes apply: renamed, then made private (gone from public view)', async (t) => {
  await fs.writeFile(path.join(root, 'live', 'category.json'), JSON.stringify({ name: 'Live, renamed' }));
  await until((l) => category(l, 'live')?.name === 'Live, renamed');
  await fs.writeFile(path.join(root, 'live', 'category.json'), JSON.stringify({ name: 'Live', private: true }));
  await until((l) => !category(l, 'live'));
  t.is((await call(`${app.urls.media}/?img=live`)).status, 404);
});

test.serial('a broken file dropped in is skipped with a log line, not indexed', async (t) => {
  const dir = await writeCategory(root, 'drop');
  await writeImage(path.join(dir, 'good.png'), { width: 10, height: 20 });
  await until((l) => category(l, 'drop')?.files === 1);
  await fs.writeFile(path.join(dir, 'bad.webp'), 'garbage');
  const deadline = Date.now() + DEADLINE_MS;
  while (!app.logs.some((l) => l.file === 'drop/bad.webp') && Date.now() < deadline) await pause();
  t.true(app.logs.some((l) => l.msg === 'media file skipped: unreadable' && l.file === 'drop/bad.webp'));
  t.like(category(await listing(), 'drop'), { files: 1 });
});

/**
 * A folder of `count` tiny images outside the library. `exif` ones carry an EXIF block, so their
 * size comes from sharp: slower to index, which is what leaves a bulk copy time to race the scan.
 */
async function folderOfImages(name: string, count: number, exif = false): Promise<string> {
  const dir = path.join(await tempDir('media-bulk'), name);
  await fs.mkdir(dir);
  const [png, jpg] = await Promise.all([
    imageBytes('png', { width: 12, height: 8, exifOrientation: exif ? 1 : undefined }),
    imageBytes('jpg', { width: 8, height: 12 }),
  ]);
  await Promise.all(Array.from({ length: count }, (_, i) => {
    const odd = exif || i % 2 === 1;
    return fs.writeFile(path.join(dir, `${name}-${i}.${odd ? 'png' : 'jpg'}`), odd ? png : jpg);
  }));
  return dir;
}

const copy = (from: string, to: string) => new Promise<void>((resolve, reject) => {
  execFile('cp', ['-r', from, to], (err) => (err ? reject(err) : resolve()));
});

test.serial('a folder copied in with cp -r is indexed whole, with more copied in while it is being indexed', async (t) => {
  const first = await folderOfImages('first', 300, true);
  const second = await folderOfImages('second', 60);
  await copy(first, path.join(root, 'bulk'));
  // As soon as the category shows up, a second copy lands in it while the first may still be read.
  await until((l) => category(l, 'bulk') !== undefined);
  await copy(`${second}/.`, path.join(root, 'bulk'));
  const list = await until((l) => category(l, 'bulk')?.files === 360);
  t.like(category(list, 'bulk'), { files: 360, landscape: 330, portrait: 30 });
});

test.serial('a folder of a few hundred files copied into an existing category with cp -r is indexed whole', async (t) => {
  const target = await writeCategory(root, 'into');
  await until((l) => category(l, 'into') !== undefined);
  await copy(`${await folderOfImages('more', 600)}/.`, target);
  const list = await until((l) => category(l, 'into')?.files === 600);
  t.like(category(list, 'into'), { landscape: 300, portrait: 300 });
});

test.serial('a broken category.json leaves the category out; repairing it brings it in at once', async (t) => {
  const dir = await writeCategory(root, 'mended');
  await writeImage(path.join(dir, 'one.png'), { width: 30, height: 20 });
  await fs.writeFile(path.join(dir, 'category.json'), '{"name": "Mended", "private": fal');
  await app.waitForLog((l) => l.msg === 'category skipped: category.json is invalid' && l.alias === 'mended', DEADLINE_MS);
  t.is(category(await listing(), 'mended'), undefined);
  await fs.writeFile(path.join(dir, 'category.json'), '{"name": "Mended", "private": false}');
  const list = await until((l) => category(l, 'mended')?.files === 1);
  t.like(category(list, 'mended'), { name: 'Mended', landscape: 1 });
});

test.serial('dangling symlinks and names that are not UTF-8 are logged, not silently dropped', async (t) => {
  const dir = await writeCategory(root, 'odd');
  await writeImage(path.join(dir, 'fine.png'), { width: 30, height: 20 });
  await until((l) => category(l, 'odd')?.files === 1);
  await fs.symlink(path.join(dir, 'gone.png'), path.join(dir, 'dangling.png'));
  // "caf\xe9.jpg": Latin-1, as old cameras and Windows zips write names.
  const latin1 = Buffer.concat([Buffer.from(path.join(dir, 'caf')), Buffer.from([0xe9]), Buffer.from('.jpg')]);
  await fs.writeFile(latin1, await imageBytes('jpg', { width: 10, height: 20 }));
  const dangling = await app.waitForLog((l) => l.msg === 'media file skipped: dangling symlink', DEADLINE_MS);
  t.is(dangling.file, 'odd/dangling.png');
  const named = await app.waitForLog((l) => l.msg === 'media file skipped: its name is not valid UTF-8', DEADLINE_MS);
  t.is(named.file, 'odd/caf\\xe9.jpg');
  t.like(category(await listing(), 'odd'), { files: 1 });
});
