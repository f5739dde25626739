// A page's memory stays bounded whatever variety of skins it draws: its texture cache is bounded
// in bytes (evicted textures refilled in place or disposed), and a page whose JS heap passes its
// bound is replaced between batches without failing a job.
import { createHash } from 'node:crypto';
import test from 'ava';
import { RenderFarm } from '../renderer/farm.ts';
import type { RenderJob } from '../renderer/jobs.ts';
import { normalizeSkin, type NormalizedSkin } from '../renderer/skin-normalize.ts';
import { drawSkin } from '../scripts/fake-upstream/skin-art.ts';
import { createLogger } from '../shared/log.ts';
import { descendants } from '../renderer/processes.ts';

/** Skins of their own: `n` written into three face pixels of one drawn skin, hashed as normalizeSkin does. */
async function skinMaker(): Promise<(n: number) => NormalizedSkin> {
  const base = await normalizeSkin(await drawSkin({ seed: 2 }));
  return (n) => {
    const data = Buffer.from(base.data);
    for (const [x, y, v] of [[9, 9, n & 0xff], [10, 9, (n >> 8) & 0xff], [11, 9, n >> 16]]) data.set([v, 255 - v, 77, 255], (y * base.size + x) * 4);
    return { ...base, data, hash: createHash('sha256').update(data).digest('base64url') };
  };
}

const head = (skin: NormalizedSkin, i: number): RenderJob => ({ kind: 'head', skin, slim: false, size: 16, yaw: i % 360, pitch: 10, shadow: false, outer: true, bg: null });

/** Runs `jobs` through the farm, 32 at a time; the reasons of those that failed. */
async function renderAll(farm: RenderFarm, jobs: RenderJob[]): Promise<string[]> {
  const failures: string[] = [];
  let next = 0;
  await Promise.all(Array.from({ length: 32 }, async () => {
    while (next < jobs.length) await farm.render(jobs[next++]).catch((error: Error) => failures.push(error.message));
  }));
  return failures;
}

test('a soak of 3,000 distinct skins: the texture cache stays within its bytes and the JS heap within bounds', async (t) => {
  const lines: string[] = [];
  const farm = await RenderFarm.create({ workers: 1, gpu: 'off', queueLimit: 1024 }, createLogger('warn', {}, (line) => lines.push(line)));
  t.teardown(() => farm.close());
  const skin = await skinMaker();
  const [start] = await farm.pageMemory();
  const failures = await renderAll(farm, Array.from({ length: 3000 }, (_, i) => head(skin(i), i)));
  t.deepEqual(failures, []);
  const [end] = await farm.pageMemory();
  t.log({ start, end });
  // 4 MiB of 64x64 skins is 256 of them; the GL side holds those plus the shadow's.
  t.true(end.textureBytes <= 4 << 20, `${end.textureBytes} texture bytes`);
  t.is(end.textures, 256);
  t.true(end.glTextures <= end.textures + 2, `${end.glTextures} GL textures for ${end.textures}`);
  t.true(end.glGeometries <= start.glGeometries + 8, 'geometries are cached per layer and pose, not per job');
  // The page's self-check drew a render at its start: opaque, blended and the shadow's.
  t.true(end.glPrograms <= start.glPrograms && start.glPrograms <= 3, `${start.glPrograms} -> ${end.glPrograms} shader programs: one opaque, one blended, the shadow's, whatever the skins`);
  t.true(end.jsHeapBytes < 64 << 20, `JS heap ${end.jsHeapBytes} bytes`);
  t.deepEqual(lines, []);
});

test('a page past its heap bound is replaced between batches, and no job fails', async (t) => {
  const lines: string[] = [];
  // Any page is past 1 MiB of heap: it is replaced after every 32 batches.
  const farm = await RenderFarm.create({ workers: 1, gpu: 'off', batchSize: 2, pageHeapLimitBytes: 1 << 20 }, createLogger('warn', {}, (line) => lines.push(line)));
  t.teardown(() => farm.close());
  const skin = await skinMaker();
  const failures = await renderAll(farm, Array.from({ length: 200 }, (_, i) => head(skin(i % 20), i)));
  t.deepEqual(failures, []);
  t.like(farm.stats(), { completed: 200, failed: 0, pagesAlive: 1 });
  t.true(farm.stats().pagesOpened >= 2, `${farm.stats().pagesOpened} pages opened`);
  t.deepEqual(lines, [], 'no batch failed on the way');
});

test('trim() replaces a page that has drawn, keeps one that has not, and the farm renders as before', async (t) => {
  const lines: string[] = [];
  const farm = await RenderFarm.create({ workers: 1, gpu: 'off' }, createLogger('warn', {}, (line) => lines.push(line)));
  t.teardown(() => farm.close());
  const skin = await skinMaker();
  await farm.trim();
  t.is(farm.stats().pagesOpened, 1, 'a page with nothing drawn has nothing to give back');
  const before = await farm.render(head(skin(1), 30));
  t.deepEqual(await renderAll(farm, Array.from({ length: 100 }, (_, i) => head(skin(i), i))), []);
  await farm.trim();
  t.like(farm.stats(), { pagesOpened: 2, pagesAlive: 1 });
  const [fresh] = await farm.pageMemory();
  t.is(fresh.textures, 1, 'the new page holds no texture yet but its self-check\'s skin');
  t.deepEqual(await farm.render(head(skin(1), 30)), before, 'the same job draws the same PNG on the fresh page');
  t.deepEqual(lines, []);
});

test('trim() parks every page but the first (its renderer process goes); work opens it again, and the pictures are the same', async (t) => {
  const lines: string[] = [];
  const farm = await RenderFarm.create({ workers: 2, gpu: 'off' }, createLogger('warn', {}, (line) => lines.push(line)));
  t.teardown(() => farm.close());
  const renderers = () => farm.browserPids().flatMap((pid) => descendants(pid)).filter((p) => p.cmd.includes('--type=renderer')).length;
  const skin = await skinMaker();
  const jobs = Array.from({ length: 32 }, (_, i) => head(skin(i), i));
  const before = await Promise.all(jobs.map((job) => farm.render(job)));
  const until = async (count: number) => {
    const deadline = Date.now() + 60_000;
    while (renderers() !== count && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
    return renderers();
  };
  await farm.trim();
  t.is(await until(1), 1, 'one page left open');
  t.like(farm.stats(), { pagesAlive: 2 });
  // A burst after the idle spell: the open page takes it while the parked one opens again.
  const after = await Promise.all(jobs.map((job) => farm.render(job)));
  t.deepEqual(after, before);
  t.is(await until(2), 2, 'the parked page open again');
  t.deepEqual(await Promise.all(jobs.map((job) => farm.render(job))), before);
  t.like(farm.stats(), { failed: 0, browserRestarts: 0 });
  t.deepEqual(lines, []);
});

test('by default the pages share one browser, which runs one renderer process per page: no blank tab holds one of its own', async (t) => {
  const farm = await RenderFarm.create({ workers: 2, gpu: 'off' }, createLogger('warn', {}, () => {}));
  t.teardown(() => farm.close());
  t.is(farm.info().browsers, 1);
  t.is(farm.browserPids().length, 1);
  const renderers = () => farm.browserPids().flatMap((pid) => descendants(pid)).filter((p) => p.cmd.includes('--type=renderer'));
  t.is(renderers().length, 2);
  const skin = await skinMaker();
  t.deepEqual(await renderAll(farm, Array.from({ length: 8 }, (_, i) => head(skin(i), i))), []);
  // trim() closes the page that drew, leaving the browser without one until the fresh page opens.
  await farm.trim();
  t.like(farm.stats(), { pagesAlive: 2, browserRestarts: 0 });
  t.truthy(await farm.render(head(skin(1), 30)));
});
