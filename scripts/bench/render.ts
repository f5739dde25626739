// Render farm and avatar throughput at function level (no HTTP): cold renders with a unique yaw
// per job, for each kind, with latency percentiles. `npm run bench:render -- [--jobs 600] [--workers 2] [--size 256]`
import os from 'node:os';
import { parseArgs } from 'node:util';
import { renderAvatar } from '../../renderer/avatar-2d.ts';
import { RenderFarm } from '../../renderer/farm.ts';
import type { RenderKind } from '../../renderer/jobs.ts';
import { normalizeSkin } from '../../renderer/skin-normalize.ts';
import { silentLogger } from '../../shared/log.ts';
import { drawCape, drawSkin } from '../fake-upstream/skin-art.ts';
import { normalizeCape } from '../../renderer/skin-normalize.ts';

const { values } = parseArgs({ options: { jobs: { type: 'string', default: '600' }, workers: { type: 'string', default: String(os.availableParallelism()) }, size: { type: 'string', default: '256' } } });
const jobs = Number(values.jobs);
const size = Number(values.size);

function percentile(sorted: number[], p: number): number {
  return Math.round(sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] * 10) / 10;
}

async function measure(label: string, count: number, one: (i: number) => Promise<unknown>): Promise<void> {
  const latencies: number[] = [];
  const started = performance.now();
  await Promise.all(Array.from({ length: count }, async (_, i) => {
    const t = performance.now();
    await one(i);
    latencies.push(performance.now() - t);
  }));
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  console.log(`| ${label} | ${count} | ${Math.round(count / seconds)} | ${percentile(latencies, 50)} | ${percentile(latencies, 99)} |`);
}

const skins = await Promise.all(Array.from({ length: 16 }, async (_, i) => normalizeSkin(await drawSkin({ slim: i % 2 === 1, seed: i + 1 }))));
const cape = await normalizeCape(await drawCape({}));
const farm = await RenderFarm.create({ workers: Number(values.workers), chromiumPath: process.env.CHROMIUM_PATH ?? null, gpu: 'auto', queueLimit: jobs * 2, jobTimeoutMs: 120_000 }, silentLogger);
const info = farm.info();
console.log(`${os.availableParallelism()} cores (${os.cpus()[0]?.model}), Node ${process.version}, Chromium ${info.browserVersion}, WebGL: ${info.webglRenderer}, ${values.workers} workers, ${size} px`);
console.log('| kind | jobs | per second | p50 ms | p99 ms |\n|---|---|---|---|---|');
for (const kind of ['render', 'cube', 'head', 'body'] as RenderKind[]) {
  await measure(kind, jobs, (i) => farm.render({
    kind, skin: skins[i % skins.length], slim: i % 2 === 1, cape: kind === 'render' ? cape : null, size,
    yaw: (i % 360) - 180, pitch: (i % 60) - 30, shadow: true, outer: true, bg: null,
  }));
}
await farm.close();
await measure('avatar (sharp, no browser)', jobs * 4, (i) => renderAvatar(skins[i % skins.length], { size: 8 + (i % 505), shape: i % 2 ? 'circle' : 'square', helm: true, bg: null }));
