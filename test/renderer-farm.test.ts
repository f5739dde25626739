// The render farm as a service: warm at creation, reports what it runs on, survives a killed
// page or browser (the job is retried once) and a hung page, refuses work beyond its queue,
// closes cleanly.
// Real Chromium pages in Piscina workers; one farm for the file, tests in order.
import { fileURLToPath } from 'node:url';
import test from 'ava';
import { RenderFarm } from '../renderer/farm.ts';
import type { RenderJob } from '../renderer/jobs.ts';
import { normalizeSkin } from '../renderer/skin-normalize.ts';
import { drawSkin } from '../scripts/fake-upstream/skin-art.ts';
import { RenderError, RenderFarmConfigError } from '../renderer/errors.ts';
import { createLogger } from '../shared/log.ts';
import { descendants as processTree } from './helpers/processes.ts';

let farm: RenderFarm;
let job: (yaw: number) => RenderJob;
// The farm's warnings, shown when a test fails.
const warnings: string[] = [];

test.before(async () => {
  farm = await RenderFarm.create({ workers: 2, browsers: 2, gpu: 'off', queueLimit: 4, batchSize: 1, jobTimeoutMs: 20_000 },
    createLogger('warn', {}, (line) => warnings.push(line)));
  const skin = await normalizeSkin(await drawSkin({}));
  job = (yaw) => ({ kind: 'render', skin, slim: false, size: 64, yaw, pitch: 10, shadow: true, outer: true, bg: null });
});
test.after.always(() => farm?.close());
test.afterEach.always((t) => {
  if (!t.passed) t.log(warnings.join(''));
});

const isPng = (b: Buffer) => b.subarray(1, 4).equals(Buffer.from('PNG'));

/** Processes under `root` whose command line contains `marker`. */
const descendants = (root: number, marker: string) => processTree(root).filter((p) => p.cmd.includes(marker)).map((p) => p.pid);

test.serial('warm at creation: it knows its browsers and WebGL renderer, and the first render is quick', async (t) => {
  const info = farm.info();
  t.regex(info.browserVersion, /Chrom/);
  t.regex(info.webglRenderer, /SwiftShader/);
  t.false(info.gpu);
  t.is(info.browsers, 2);
  t.is(farm.browserPids().length, 2);
  // Warm means the pages exist before the first job, and the first job starts no browser.
  t.like(farm.stats(), { pagesAlive: 2, completed: 0 });
  const pids = farm.browserPids();
  t.true(isPng(await farm.render(job(0))));
  t.deepEqual(farm.browserPids(), pids, 'no browser start on the first request');
  t.like(farm.stats(), { workers: 2, pagesAlive: 2, queued: 0, running: 0, completed: 1, failed: 0 });
});

test.serial('asked for the GPU where WebGL cannot start on it, the farm starts in software and says so', async (t) => {
  // No GPU here: the GPU flags give the pages no WebGL context (or a software one, in a
  // Chromium whose ANGLE falls back to Mesa). Either way images are drawn, and gpu is false.
  const lines: string[] = [];
  const onGpu = await RenderFarm.create({ workers: 1, browsers: 1, gpu: 'on', jobTimeoutMs: 20_000 }, createLogger('warn', {}, (line) => lines.push(line)));
  try {
    const info = onGpu.info();
    t.false(info.gpu);
    if (/SwiftShader/.test(info.webglRenderer)) t.regex(lines.join(''), /could not start on the GPU; rendering in software/);
    t.true(isPng(await onGpu.render(job(5))));
  } finally {
    await onGpu.close();
  }
});

test.serial('clients take turns in the queue: one client\'s flood holds another\'s job back by one of its own, and each client\'s jobs keep their order', async (t) => {
  const one = await RenderFarm.create({ workers: 1, browsers: 1, gpu: 'off', queueLimit: 100, batchSize: 1, jobTimeoutMs: 20_000 },
    createLogger('warn', {}, (line) => warnings.push(line)));
  t.teardown(() => one.close());
  const done: string[] = [];
  const send = (client: string, n: number) => one.render({ ...job(n), client }).then(() => done.push(`${client}${n}`));
  // The page takes a1 and a2 at once (two batches a page); a3..a6 wait; b1 comes last.
  const flood = [1, 2, 3, 4, 5, 6].map((n) => send('a', n));
  await Promise.all([...flood, send('b', 1)]);
  t.deepEqual(done, ['a1', 'a2', 'a3', 'b1', 'a4', 'a5', 'a6']);
});

test.serial('a page still drawing takes its next batch early, but only when half a batch waits', async (t) => {
  const one = await RenderFarm.create({ workers: 1, browsers: 1, gpu: 'off', queueLimit: 100, batchSize: 4, jobTimeoutMs: 20_000 },
    createLogger('warn', {}, (line) => warnings.push(line)));
  try {
    // Everything up to the first await runs before the page can answer anything.
    const first = one.render(job(1));
    t.like(one.stats(), { running: 1, queued: 0 }, 'a free page takes a job at once');
    const second = one.render(job(2));
    t.like(one.stats(), { running: 1, queued: 1 }, 'one waiting job is less than half a batch: it stays');
    const third = one.render(job(3));
    t.like(one.stats(), { running: 2, queued: 2 }, 'two are half a batch: they go to the busy page, still counted as queued');
    const fourth = one.render(job(4));
    t.like(one.stats(), { running: 2, queued: 3 }, 'never more than two batches per page');
    t.true((await Promise.all([first, second, third, fourth])).every(isPng));
    t.like(one.stats(), { running: 0, queued: 0, completed: 4, failed: 0 });
  } finally {
    await one.close();
  }
});

test.serial('crashed pages are replaced and their jobs retried', async (t) => {
  const renderers = farm.browserPids().flatMap((pid) => descendants(pid, '--type=renderer'));
  t.true(renderers.length >= 2);
  for (const pid of renderers) process.kill(pid, 'SIGKILL');
  const pngs = await Promise.all([30, 31, 32, 33].map((yaw) => farm.render(job(yaw))));
  t.true(pngs.every(isPng));
  t.is(farm.stats().failed, 0);
  t.is(farm.stats().browserRestarts, 0, 'the browsers themselves lived');
});

test.serial('a killed browser is replaced and rendering goes on', async (t) => {
  const [dead, alive] = farm.browserPids();
  process.kill(dead, 'SIGKILL');
  const pngs = await Promise.all([45, 46, 47, 48].map((yaw) => farm.render(job(yaw))));
  t.true(pngs.every(isPng));
  t.is(farm.stats().browserRestarts, 1);
  t.false(farm.browserPids().includes(dead));
  t.true(farm.browserPids().includes(alive));
  t.like(farm.stats(), { pagesAlive: 2, failed: 0 });
});

test.serial('a hung page is given up after the job timeout and replaced; rendering goes on', async (t) => {
  // The job after the timeout opens a new page within its own time. With the whole suite beside
  // it on two cores, the browser (its renderers stopped) can also miss its 2 s liveness probe and
  // be started anew, pages and all: 3 s and 6 s were each seen to pass, so 15 s.
  const one = await RenderFarm.create({ workers: 1, browsers: 1, gpu: 'off', jobTimeoutMs: 15_000 },
    createLogger('warn', {}, (line) => warnings.push(line)));
  const stopped = one.browserPids().flatMap((pid) => descendants(pid, '--type=renderer'));
  try {
    t.true(stopped.length > 0);
    for (const pid of stopped) process.kill(pid, 'SIGSTOP');
    const error = await t.throwsAsync(() => one.render(job(60)));
    t.is((error as RenderError).kind, 'timeout');
    // The frozen renderers stay frozen until the end: only a page the worker opened anew can draw this.
    t.true(isPng(await one.render(job(61))));
  } finally {
    for (const pid of stopped) {
      try {
        process.kill(pid, 'SIGCONT');
      } catch {
        // already gone with its page
      }
    }
    await one.close();
  }
});

test.serial('a job whose page hangs times out, the page is closed and replaced, and the next jobs render on one page', async (t) => {
  // The page extension makes the page spin forever on a job of size 33: only ending its thread frees the farm's page.
  // Time enough for a new page to load three.js on a loaded two-core host.
  const pageExtension = fileURLToPath(new URL('helpers/page-that-hangs.js', import.meta.url));
  const one = await RenderFarm.create({ workers: 1, browsers: 1, gpu: 'off', batchSize: 1, jobTimeoutMs: 6000, pageExtension },
    createLogger('warn', {}, (line) => warnings.push(line)));
  try {
    const [browser] = one.browserPids();
    const before = descendants(browser, '--type=renderer');
    const error = await t.throwsAsync(() => one.render({ ...job(70), size: 33 }));
    t.is((error as RenderError).kind, 'timeout');
    // Each of these must finish within its own 6 s: a page still held by the hung job could not draw them.
    t.true((await Promise.all([71, 72, 73].map((yaw) => one.render(job(yaw))))).every(isPng));
    t.like(one.stats(), { workers: 1, pagesAlive: 1, pagesOpened: 2, completed: 3, failed: 1, browserRestarts: 0 });
    // The spinning page was closed: its renderer process ends, and the new page's takes its place.
    const renderers = () => descendants(browser, '--type=renderer').length;
    while (renderers() > before.length) await new Promise((resolve) => setTimeout(resolve, 100));
    t.is(renderers(), before.length);
  } finally {
    await one.close();
  }
});

test.serial('a full queue answers overloaded at once, with Retry-After', async (t) => {
  const outcomes = await Promise.allSettled(Array.from({ length: 12 }, (_, i) => farm.render(job(i))));
  const refused = outcomes.filter((o) => o.status === 'rejected').map((o) => (o as PromiseRejectedResult).reason);
  // Two workers take one job each, four wait, the rest are refused.
  t.true(refused.length >= 12 - 2 - 4, `${refused.length} refused`);
  for (const error of refused) {
    t.true(error instanceof RenderError);
    t.is(error.kind, 'queue_full');
    t.true(error.retryAfterSeconds! >= 1);
  }
  t.true(outcomes.filter((o) => o.status === 'fulfilled').length >= 6);
});

test.serial('close() ends the pool and the browsers; later jobs are refused', async (t) => {
  const pids = farm.browserPids();
  await farm.close();
  for (const pid of pids) t.throws(() => process.kill(pid, 0), undefined, 'the browser process is gone');
  const error = await t.throwsAsync(() => farm.render(job(1)));
  t.is((error as RenderError).kind, 'closed');
});

test('options are checked before anything starts, each error naming its option', async (t) => {
  const bad: Array<[Record<string, unknown>, RegExp]> = [
    [{ batchSize: 0 }, /RenderFarmConfig\.batchSize must be an integer from 1 to 16 \(got 0\)/],
    [{ workers: 0 }, /RenderFarmConfig\.workers/],
    [{ queueLimit: 1.5 }, /RenderFarmConfig\.queueLimit/],
    [{ jobTimeoutMs: -1 }, /RenderFarmConfig\.jobTimeoutMs/],
    [{ gpu: 'maybe' }, /RenderFarmConfig\.gpu/],
    [{ pageExtension: '/no/such/extension.js' }, /RenderFarmConfig\.pageExtension must be an existing file \(got "\/no\/such\/extension\.js"\)/],
  ];
  for (const [change, message] of bad) {
    const error = await t.throwsAsync(() => RenderFarm.create({ workers: 1, gpu: 'off', ...change } as never, createLogger('error')));
    t.true(error instanceof RenderFarmConfigError, JSON.stringify(change));
    t.regex(error!.message, message);
  }
});
