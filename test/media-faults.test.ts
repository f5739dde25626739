// Faults under the media service: files and folders it may not read, a data folder with no room
// left. Each is answered on purpose (an uncached 5xx, counts of what can really be served, one
// log line naming the error) instead of a cacheable 404 or a 503 that never ends. As root the
// service would read anything, so it runs without CAP_DAC_OVERRIDE (setpriv); the full folder is
// a tiny tmpfs. A case is skipped, with the reason printed, only where its mechanism is missing.
import test, { type ExecutionContext } from 'ava';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { call, type RunningApp } from './helpers/service.ts';
import { removeTempDirs, startMedia, tempDir, withoutReadOverride, writeCategory, writeImage } from './helpers/media-library.ts';

const DEADLINE_MS = 10_000;
const PASSWORD = 'pw';

const access = withoutReadOverride();
if ('reason' in access) console.log(`media-faults: unreadable-file cases skipped: ${access.reason}`);
const readTest = 'reason' in access ? test.skip : test.serial;

let app: RunningApp | undefined;
let root: string;
const mounts: string[] = [];

test.before(async () => {
  if ('reason' in access) return;
  root = path.join(await tempDir('media-faults'), 'library');
  const solo = await writeCategory(root, 'solo');
  await writeImage(path.join(solo, 'keep.png'), { width: 40, height: 20 });
  await writeImage(path.join(solo, 'lose.jpg'), { width: 20, height: 40 });
  const dark = await writeCategory(root, 'dark');
  await writeImage(path.join(dark, 'a.png'), { width: 40, height: 20 });
  await writeImage(path.join(dark, 'b.png'), { width: 20, height: 40 });
  const sealed = await writeCategory(root, 'sealed');
  await writeImage(path.join(sealed, 'one.png'), { width: 40, height: 20 });
  const hushed = await writeCategory(root, 'hushed', { name: 'Hushed' });
  await writeImage(path.join(hushed, 'one.png'), { width: 40, height: 20 });
  await writeImage(path.join(await writeCategory(root, 'shut'), 'one.png'), { width: 40, height: 20 });
  await Promise.all([path.join(dark, 'a.png'), path.join(dark, 'b.png'), sealed, path.join(hushed, 'category.json')].map((p) => fs.chmod(p, 0)));
  // No periodic rescan: what changes while running is seen through the watcher alone.
  app = await startMedia({ MEDIA_DIR: root, DATA_DIR: await tempDir('media-data'), MEDIA_PASSWORD: PASSWORD, MEDIA_RESCAN_SECONDS: '0' }, { prefix: access.prefix });
});
test.after.always(async () => {
  await app?.stop();
  // Folders of mode 000 cannot be emptied by a user other than root.
  if (root) await Promise.all(['sealed', 'shut'].map((alias) => fs.chmod(path.join(root, alias), 0o755)));
  for (const dir of mounts) {
    execFileSync('umount', ['-l', dir]);
    rmSync(dir, { recursive: true });
  }
  await removeTempDirs();
});

const media = (query: string, init?: RequestInit) => call(`${app!.urls.media}/${query}`, init);

interface Listed { alias: string; files: number }
const category = (list: Listed[], alias: string) => list.find((c) => c.alias === alias);

/** Polls `read` until `check` holds; fails with the last value at the deadline. */
async function until<T>(read: () => Promise<T>, check: (value: T) => boolean): Promise<T> {
  const deadline = Date.now() + DEADLINE_MS;
  let last = await read();
  while (!check(last)) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${DEADLINE_MS} ms; last: ${JSON.stringify(last)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
    last = await read();
  }
  return last;
}

const listing = async (): Promise<Listed[]> => (await media('categories')).json.categories;

/** A server-side read failure: 500 internal_error that no cache keeps. */
function assertReadFailure(t: ExecutionContext, res: Awaited<ReturnType<typeof call>>, what: string): void {
  t.is(res.status, 500, what);
  t.is(res.json?.code, 'internal_error', what);
  t.is(res.headers.get('cache-control'), 'no-store', what);
}

const logLines = (msg: string, key: string, value: string) => app!.logs.filter((l) => l.msg === msg && l[key] === value);

readTest('a file made unreadable leaves the picks and the counts; its address answers an uncached 500; one log line names EACCES; readable again, it is back', async (t) => {
  const { url } = (await media('?img=solo&orientation=portrait&format=json')).json;
  const filesBefore = (await media('health')).json.files;
  const lose = path.join(root, 'solo', 'lose.jpg');
  await fs.chmod(lose, 0);
  await until(listing, (l) => category(l, 'solo')?.files === 1);
  t.is((await media('health')).json.files, filesBefore - 1);

  assertReadFailure(t, await call(url), 'its permanent address');
  // The only portrait file cannot be read: a failure on the server, not "changing on disk".
  assertReadFailure(t, await media('?img=solo&orientation=portrait'), 'a pick that only it could answer');
  for (let i = 0; i < 10; i++) t.is((await media('?img=solo&format=json')).json.file, 'keep.png');
  const lines = logLines('media file unreadable', 'file', 'solo/lose.jpg');
  t.is(lines.length, 1, 'logged once, not per request');
  t.regex(String(lines[0]?.err), /EACCES/);

  await fs.chmod(lose, 0o644);
  await until(listing, (l) => category(l, 'solo')?.files === 2);
  t.is((await call(url)).status, 200);
  t.is(logLines('media file readable again', 'file', 'solo/lose.jpg').length, 1);
});

readTest('a category whose files are all unreadable answers an uncached 500, not an empty or "changing on disk" answer', async (t) => {
  assertReadFailure(t, await media('?img=dark'), 'img=dark');
  assertReadFailure(t, await media('?img=dark&orientation=landscape&format=json'), 'img=dark landscape');
  t.like(category(await listing(), 'dark'), { files: 0 });
  for (const file of ['dark/a.png', 'dark/b.png']) {
    const lines = logLines('media file unreadable', 'file', file);
    t.is(lines.length, 1, file);
    t.regex(String(lines[0]?.err), /EACCES/);
  }
});

readTest('an unreadable category folder or category.json answers an uncached 500 on any selector, not a cacheable category_not_found', async (t) => {
  const withPassword = { headers: { 'X-Media-Password': PASSWORD } };
  for (const query of ['?img=sealed', '?vid=sealed', '?img=hushed']) assertReadFailure(t, await media(query), query);
  // Whether they are private cannot be read either: private selectors hear the same.
  for (const query of ['?sim=sealed', '?smo=hushed']) assertReadFailure(t, await media(query, withPassword), query);
  const listed = await listing();
  t.false(listed.some((c) => c.alias === 'sealed' || c.alias === 'hushed'));
  t.regex(String(logLines('media category unreadable', 'alias', 'sealed')[0]?.err), /EACCES/);
  t.regex(String(logLines('media category unreadable', 'alias', 'hushed')[0]?.err), /EACCES/);
  t.is(logLines('media category unreadable', 'alias', 'sealed').length, 1);
});

readTest('a folder made unreadable while running answers an uncached 500 at once; readable again, it serves again', async (t) => {
  const { url } = (await media('?img=shut&format=json')).json;
  const shut = path.join(root, 'shut');
  await fs.chmod(shut, 0);
  await until(listing, (l) => !category(l, 'shut'));
  assertReadFailure(t, await media('?img=shut'), 'img=shut');
  assertReadFailure(t, await call(url), 'its file\'s permanent address');
  t.is(logLines('media category unreadable', 'alias', 'shut').length, 1);
  t.regex(String(logLines('media category unreadable', 'alias', 'shut')[0]?.err), /EACCES/);

  await fs.chmod(shut, 0o755);
  await until(listing, (l) => category(l, 'shut')?.files === 1);
  t.is((await media('?img=shut')).status, 200);
  t.is((await call(url)).status, 200);
  t.is(logLines('media category readable again', 'alias', 'shut').length, 1);
});

/** A tmpfs of `kb` KiB on a new directory (unmounted and removed after the tests); a reason when none can be mounted. */
function smallTmpfs(kb: number): string | { reason: string } {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'skinfarm-media-full-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${kb}k`, 'tmpfs', dir], { stdio: 'pipe' });
  } catch (err) {
    rmSync(dir, { recursive: true });
    return { reason: `cannot mount a tmpfs (${String((err as { stderr?: Buffer }).stderr ?? (err as Error).message).trim()})` };
  }
  mounts.push(dir);
  return dir;
}

const fullDir = smallTmpfs(64);
if (typeof fullDir !== 'string') console.log(`media-faults: full DATA_DIR case skipped: ${fullDir.reason}`);

const savedCount = async (dataDir: string) => JSON.parse(await fs.readFile(path.join(dataDir, 'media-calls.json'), 'utf8').catch(() => '{}')).calls;
const tmpFiles = async (dataDir: string) => (await fs.readdir(dataDir)).filter((f) => f.endsWith('.tmp'));

(typeof fullDir === 'string' ? test : test.skip)('a full DATA_DIR keeps the last count across a restart, leaves no temporary files and is warned about at start', async (t) => {
  const dataDir = fullDir as string;
  const library = path.join(await tempDir('media-faults-counter'), 'library');
  await writeImage(path.join(await writeCategory(library, 'one'), 'a.png'), { width: 20, height: 10 });
  const env = { MEDIA_DIR: library, DATA_DIR: dataDir };
  const calls = async (target: RunningApp, n: number) => {
    for (let i = 0; i < n; i++) t.is((await call(`${target.urls.media}/?img=one&format=json`)).status, 200);
  };
  const first = await startMedia(env);
  try {
    await calls(first, 3);
    await until(() => savedCount(dataDir), (n) => n === 3);
    // Fill the folder: the write stops with ENOSPC once every page is taken.
    await t.throwsAsync(fs.writeFile(path.join(dataDir, 'filler'), Buffer.alloc(256 * 1024)), { code: 'ENOSPC' });
    await calls(first, 4);
    t.is((await call(`${first.urls.media}/categories`)).json.totals.calls, 7);
  } finally {
    t.is(await first.stop(), 0);
  }
  t.is(await savedCount(dataDir), 7);
  t.deepEqual(await tmpFiles(dataDir), []);

  const second = await startMedia(env);
  try {
    t.is((await call(`${second.urls.media}/categories`)).json.totals.calls, 7);
    const warning = second.logs.find((l) => l.msg === 'media call counter: DATA_DIR has no room for a new file; the count is rewritten in place');
    t.regex(String(warning?.err), /ENOSPC/);
    t.deepEqual(await tmpFiles(dataDir), []);
  } finally {
    await second.stop();
  }
});
