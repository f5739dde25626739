// Render farm and avatar throughput at function level (no HTTP): cold renders (a unique yaw and
// pitch per job, the cape on `render`) for each kind with latency percentiles at a fixed number
// of jobs in flight, then 2D avatars one at a time. Each mode of --skins runs in turn: `distinct`
// gives every job a skin no job had before (the generated players' skins of the fake upstream),
// a number N cycles through N skins, as the benchmark did before issue #18 (a page that already
// holds a skin skips uploading it, so a few skins hide the cost of new ones).
// Each row also gives the CPU a job cost each process group (this process: its main thread and
// render threads; Chromium's GPU, renderer and browser processes), from /proc.
// CHROMIUM_PATH picks the browser as it does for the service.
// `npm run bench:render -- [--jobs 600] [--skins distinct,16] [--kinds render,cube,head,body] [--workers 2] [--browsers N]
//   [--gpu auto|on|off] [--gpu-backend gl-egl|gles-egl|vulkan] [--size 256] [--inflight 32] [--no-avatars] [--append]`
// --append adds the results and the machine's facts to the end of the render farm section of docs/benchmarks.md.
import { readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { parseArgs } from 'node:util';
import { renderAvatar } from '../../renderer/avatar-2d.ts';
import { RenderFarm } from '../../renderer/farm.ts';
import { DEFAULT_GPU_BACKEND, GPU_BACKENDS, GPU_MODES, type GpuBackend, type GpuMode } from '../../renderer/gpu.ts';
import { RENDER_KINDS, type RenderKind } from '../../renderer/jobs.ts';
import { normalizeCape, normalizeSkin, type NormalizedSkin } from '../../renderer/skin-normalize.ts';
import { silentLogger } from '../../shared/log.ts';
import { PlayerCatalogue, type SkinArt } from '../fake-upstream/players.ts';
import { drawCape, drawSkin } from '../fake-upstream/skin-art.ts';
import { coresBetween, cpuOfTree, GROUPS } from './process-memory.ts';

const { values } = parseArgs({
  options: {
    jobs: { type: 'string', default: '600' },
    workers: { type: 'string', default: String(os.availableParallelism()) },
    browsers: { type: 'string' },
    size: { type: 'string', default: '256' },
    inflight: { type: 'string', default: '32' },
    skins: { type: 'string', default: 'distinct,16' },
    kinds: { type: 'string', default: 'render,cube,head,body' },
    gpu: { type: 'string', default: 'auto' },
    'gpu-backend': { type: 'string', default: DEFAULT_GPU_BACKEND },
    'no-avatars': { type: 'boolean', default: false },
    append: { type: 'boolean', default: false },
  },
});
const jobs = Number(values.jobs);
const size = Number(values.size);
const inflight = Number(values.inflight);
const modes = values.skins!.split(',').map((m) => m.trim());
const kinds = values.kinds!.split(',').map((k) => k.trim()) as RenderKind[];
for (const kind of kinds) if (!RENDER_KINDS.includes(kind)) throw new Error(`--kinds takes ${RENDER_KINDS.join(', ')}, comma separated: ${kind}`);
if (!GPU_MODES.includes(values.gpu as GpuMode)) throw new Error(`--gpu takes auto, on or off: ${values.gpu}`);
if (!GPU_BACKENDS.includes(values['gpu-backend'] as GpuBackend)) throw new Error(`--gpu-backend takes ${GPU_BACKENDS.join(', ')}: ${values['gpu-backend']}`);
for (const mode of modes) {
  if (mode !== 'distinct' && !(Number.isInteger(Number(mode)) && Number(mode) >= 1)) throw new Error(`--skins takes 'distinct' or a number of skins, comma separated: ${mode}`);
}
const lines: string[] = [];
const say = (line: string) => {
  console.log(line);
  lines.push(line);
};

function percentile(sorted: number[], p: number): number {
  return Math.round(sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] * 10) / 10;
}

/** Runs `count` calls, `concurrency` at a time, and prints a table row. */
async function measure(label: string, count: number, one: (i: number) => Promise<unknown>, concurrency = inflight): Promise<void> {
  const latencies: number[] = [];
  let next = 0;
  const cpuBefore = cpuOfTree(process.pid);
  const started = performance.now();
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, async () => {
    while (next < count) {
      const i = next++;
      const t = performance.now();
      await one(i);
      latencies.push(performance.now() - t);
    }
  }));
  const seconds = (performance.now() - started) / 1000;
  // Cores over count / 1000 seconds: milliseconds of CPU per job.
  const perJob = coresBetween(cpuBefore, cpuOfTree(process.pid), count / 1000);
  const cpu = GROUPS.map((g) => perJob[g].toFixed(2)).join(' / ');
  latencies.sort((a, b) => a - b);
  say(`| ${label} | ${count} | ${Math.round(count / seconds)} | ${percentile(latencies, 50)} | ${percentile(latencies, 99)} | ${cpu} |`);
}

/** Adds `block` at the end of the section under `heading` (or a new section at the end). */
function appendToSection(file: URL, heading: string, block: string): void {
  const text = readFileSync(file, 'utf8');
  const start = text.indexOf(`\n${heading}\n`);
  if (start < 0) return writeFileSync(file, `${text.trimEnd()}\n\n${heading}\n\n${block}\n`);
  const next = text.indexOf('\n## ', start + 1);
  const end = next < 0 ? text.length : next;
  writeFileSync(file, `${text.slice(0, end).trimEnd()}\n\n${block}\n${text.slice(end)}`);
}

const catalogue = new PlayerCatalogue();
let nextPlayer = 0;
/** `count` skins of generated players never drawn before in this run (drawn before the clock starts). */
function freshSkins(count: number): Promise<NormalizedSkin[]> {
  const first = nextPlayer;
  nextPlayer += count;
  return Promise.all(Array.from({ length: count }, async (_, i) => {
    const art = catalogue.byName('official', `gen_${first + i}`)!.skin as SkinArt;
    return normalizeSkin(await drawSkin(art));
  }));
}
/** The skins of `count` jobs in a mode: all new, or a fixed set of N in turn. */
async function skinsFor(mode: string, count: number): Promise<NormalizedSkin[]> {
  if (mode === 'distinct') return freshSkins(count);
  const set = await freshSkins(Number(mode));
  return Array.from({ length: count }, (_, i) => set[i % set.length]);
}
const modeLabel = (mode: string) => (mode === 'distinct' ? 'a new skin every job' : `${mode} skins in turn`);

const cape = await normalizeCape(await drawCape({}));
const farm = await RenderFarm.create({
  workers: Number(values.workers), browsers: values.browsers ? Number(values.browsers) : undefined,
  gpu: values.gpu as GpuMode, gpuBackend: values['gpu-backend'] as GpuBackend, chromiumPath: process.env.CHROMIUM_PATH ?? null, queueLimit: jobs, jobTimeoutMs: 120_000,
}, silentLogger);
const info = farm.info();
say(`${new Date().toISOString().slice(0, 10)}: ${os.availableParallelism()} cores (${os.cpus()[0]?.model.trim()}), load ${os.loadavg()[0].toFixed(1)} at start, `
  + `Node ${process.version}, ${info.browserVersion}, WebGL: ${info.webglRenderer} (${info.gpu ? `GPU, ${values['gpu-backend']}` : 'software'}); ${values.workers} workers, ${info.browsers} browser(s), ${size} px, ${inflight} jobs in flight`);
say('');
say(`| kind | skins | jobs | per second | p50 ms | p99 ms | CPU ms per job: ${GROUPS.join(' / ')} |\n|---|---|---|---|---|---|---|`);
// A few jobs first: shaders compile on each page's first frame.
const warm = await freshSkins(Number(values.workers) * 2);
await Promise.all(warm.map((skin) => farm.render({ kind: 'render', skin, slim: false, cape, size, yaw: 0, pitch: 0, shadow: true, outer: true, bg: null })));
for (const mode of modes) {
  for (const kind of kinds) {
    const skins = await skinsFor(mode, jobs);
    await measure(`${kind} | ${modeLabel(mode)}`, jobs, (i) => farm.render({
      kind, skin: skins[i], slim: i % 2 === 1, cape: kind === 'render' ? cape : null, size,
      yaw: (i % 360) - 180 + 0.5, pitch: (i % 60) - 30, shadow: true, outer: true, bg: null,
    }));
  }
}
await farm.close();
for (const mode of values['no-avatars'] ? [] : modes) {
  for (const avatarSize of [64, 128, 512]) {
    // One at a time: an avatar is mostly synchronous work, so its latency is its cost.
    const skins = await skinsFor(mode, jobs * 4);
    const avatar = (i: number) => renderAvatar(skins[i], { size: avatarSize, shape: i % 2 ? 'circle' : 'square', helm: true, bg: null });
    await measure(`avatar ${avatarSize} px (no browser) | ${modeLabel(mode)}`, jobs * 4, avatar, 1);
  }
}
if (values.append) appendToSection(new URL('../../docs/benchmarks.md', import.meta.url), '## Render farm (function level)', lines.join('\n'));
