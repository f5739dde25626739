// A page keeps the textures of its recent jobs only, and the worker sends a texture's bytes only
// when the page lacks it. With many distinct skins, and some reused among the new ones, the worker
// and the page must still agree on what the page holds: no job may fail for a texture it dropped.
import test from 'ava';
import sharp from 'sharp';
import { RenderFarm } from '../renderer/farm.ts';
import type { RenderJob } from '../renderer/jobs.ts';
import { normalizeCape, normalizeSkin, type NormalizedSkin } from '../renderer/skin-normalize.ts';
import { drawCape, drawSkin } from '../scripts/fake-upstream/skin-art.ts';
import { createLogger } from '../shared/log.ts';

/** A skin of its own: the drawn one with two face pixels that spell `n` (the art has few shades). */
async function distinctSkin(n: number): Promise<Buffer> {
  const { data, info } = await sharp(await drawSkin({ seed: 1 })).raw().toBuffer({ resolveWithObject: true });
  for (const [x, y, value] of [[9, 9, n & 0xff], [10, 9, n >> 8]]) {
    const at = (y * info.width + x) * 4;
    data.set([value, 255 - value, 77, 255], at);
  }
  return sharp(data, { raw: { width: info.width, height: info.height, channels: 4 } }).png().toBuffer();
}

test('more distinct skins than a page keeps, one reused among them, concurrently: every job renders', async (t) => {
  // A failed batch is retried on a fresh page, which hides the failure from the caller: the farm's
  // own log says whether a page lacked a texture.
  const lines: string[] = [];
  const farm = await RenderFarm.create({ workers: 1, gpu: 'off', queueLimit: 1024, batchSize: 8, jobTimeoutMs: 60_000 }, createLogger('debug', {}, (line) => lines.push(line)));
  t.teardown(() => farm.close());
  const skins: NormalizedSkin[] = await Promise.all(Array.from({ length: 361 }, async (_, i) => normalizeSkin(await distinctSkin(i))));
  const reused = skins[0];
  // Every tenth job wears the reused skin: now and then it is known to the page when its batch is
  // taken in, and pushed out of the page's cache by the new skins of that same batch.
  const jobs: RenderJob[] = Array.from({ length: 400 }, (_, i) => (i % 10 === 0 ? reused : skins[1 + i - Math.ceil(i / 10)]))
    .map((skin, i) => ({ kind: 'head', skin, slim: false, size: 32, yaw: i % 360, pitch: 10, shadow: false, outer: true, bg: null }));
  const results = await Promise.allSettled(jobs.map((job) => farm.render(job)));
  const failures = results.filter((r) => r.status === 'rejected').map((r) => String((r as PromiseRejectedResult).reason?.message ?? r));
  t.is(failures.length, 0, `${failures.length} of ${jobs.length} failed: ${failures.slice(0, 3).join('; ')}`);
  t.deepEqual(lines.filter((l) => /not in the page|failed|replac/i.test(l)).map((l) => l.slice(0, 300)), [], 'no batch failed on the way');
});

test('an HD skin and cape over the page\'s texture budget fail no other job of their batch: each job draws as it does alone', async (t) => {
  const lines: string[] = [];
  const farm = await RenderFarm.create({ workers: 1, gpu: 'off', queueLimit: 64, batchSize: 8, jobTimeoutMs: 60_000 }, createLogger('debug', {}, (line) => lines.push(line)));
  t.teardown(() => farm.close());
  // 1024 x 1024 and 1024 x 512: 4 + 2 MiB of texels, over the page's 4 MiB (issue #38: the page
  // dropped its batch-mates' textures to make room, they failed, and so did their retry).
  const hdSkin = await normalizeSkin(await sharp(await drawSkin({ seed: 7 })).resize(1024, 1024, { kernel: 'nearest' }).png().toBuffer());
  const hdCape = await normalizeCape(await sharp(await drawCape({ seed: 7 })).resize(1024, 512, { kernel: 'nearest' }).png().toBuffer());
  const small = await Promise.all([11, 12, 13, 14, 15, 16].map(async (n) => normalizeSkin(await distinctSkin(n))));
  const view = { size: 64, yaw: 30, pitch: 10, shadow: true, outer: true, bg: null } as const;
  const jobs: RenderJob[] = [
    ...small.slice(0, 3).map((skin): RenderJob => ({ kind: 'render', skin, slim: false, ...view })),
    { kind: 'render', skin: hdSkin, cape: hdCape, slim: false, ...view, view: 'back' },
    ...small.slice(3).map((skin): RenderJob => ({ kind: 'body', skin, slim: false, ...view })),
  ];
  const alone: Buffer[] = [];
  for (const job of jobs) alone.push(await farm.render(job));
  for (let round = 0; round < 4; round += 1) {
    // All at once: one batch of the HD job and the others, the page holding them from before or not.
    const together = await Promise.allSettled(jobs.map((job) => farm.render(job)));
    const wrong = together.flatMap((r, i) => (r.status === 'fulfilled' && r.value.equals(alone[i]) ? [] : [`job ${i}: ${r.status === 'rejected' ? String(r.reason) : 'another image'}`]));
    t.deepEqual(wrong, [], `round ${round}`);
  }
  t.deepEqual(lines.filter((l) => /not in the page|failed|replac/i.test(l)).map((l) => l.slice(0, 300)), [], 'no batch failed on the way');
});
