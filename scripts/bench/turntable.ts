// A turntable at function level (no HTTP): one RenderFarm.renderFrames call of 36 frames against
// the same 36 frames as 36 farm.render calls sent at once, a skin never drawn before each round,
// rounds alternating; then the encoding of the frames in each format. CPU is of this process and
// every Chromium process (/proc), per round: on a shared machine it is steadier than the time.
// `node scripts/bench/turntable.ts [--rounds 8] [--frames 36] [--sizes 128,256] [--workers 2]`
import os from 'node:os';
import { parseArgs } from 'node:util';
import { encodeAnimation, type AnimationFormat } from '../../renderer/animate.ts';
import { RenderFarm } from '../../renderer/farm.ts';
import type { RenderJob } from '../../renderer/jobs.ts';
import { normalizeSkin, type NormalizedSkin } from '../../renderer/skin-normalize.ts';
import { silentLogger } from '../../shared/log.ts';
import { PlayerCatalogue, type SkinArt } from '../fake-upstream/players.ts';
import { drawSkin } from '../fake-upstream/skin-art.ts';
import { cpuOfTree } from './process-memory.ts';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '8' },
    frames: { type: 'string', default: '36' },
    sizes: { type: 'string', default: '128,256' },
    workers: { type: 'string', default: '2' },
  },
});
const rounds = Number(values.rounds);
const frames = Number(values.frames);
const yaws = Array.from({ length: frames }, (_, i) => (i * 360) / frames);

const catalogue = new PlayerCatalogue();
let nextPlayer = 0;
async function freshSkin(): Promise<NormalizedSkin> {
  return normalizeSkin(await drawSkin(catalogue.byName('official', `gen_${nextPlayer++}`)!.skin as SkinArt));
}

const cpuNow = () => cpuOfTree(process.pid).reduce((n, p) => n + p.seconds, 0);
/** Milliseconds of wall time and of CPU (this process and its Chromium processes) that `work` took. */
async function cost(work: () => Promise<unknown>): Promise<{ wall: number; cpu: number }> {
  const cpu = cpuNow();
  const started = performance.now();
  await work();
  return { wall: performance.now() - started, cpu: (cpuNow() - cpu) * 1000 };
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const farm = await RenderFarm.create({ workers: Number(values.workers), gpu: 'auto', jobTimeoutMs: 120_000 }, silentLogger);
const info = farm.info();
console.log(`${new Date().toISOString().slice(0, 10)}: ${os.availableParallelism()} cores (${os.cpus()[0]?.model.trim()}), load ${os.loadavg()[0].toFixed(1)} at start, `
  + `${info.browserVersion}, WebGL: ${info.webglRenderer}; ${values.workers} workers, ${frames} frames, medians of ${rounds} rounds each\n`);
console.log('| size | one renderFrames: ms / CPU ms | 36 render calls at once: ms / CPU ms | CPU ratio |\n|---|---|---|---|');
const job = (skin: NormalizedSkin, size: number): RenderJob => ({ kind: 'render', skin, slim: false, size, yaw: 0, pitch: 10, shadow: true, outer: true, bg: null });
const framesBySize = new Map<number, Buffer[]>();
for (const size of values.sizes!.split(',').map(Number)) {
  // Shaders compile on a page's first frame: warm both ways first.
  await farm.renderFrames(job(await freshSkin(), size), yaws);
  const together: Array<{ wall: number; cpu: number }> = [];
  const apart: Array<{ wall: number; cpu: number }> = [];
  for (let round = 0; round < rounds; round += 1) {
    const [a, b] = [await freshSkin(), await freshSkin()];
    together.push(await cost(async () => framesBySize.set(size, await farm.renderFrames(job(a, size), yaws))));
    apart.push(await cost(() => Promise.all(yaws.map((yaw) => farm.render({ ...job(b, size), yaw })))));
  }
  const [t, s] = [together, apart].map((runs) => ({ wall: median(runs.map((r) => r.wall)), cpu: median(runs.map((r) => r.cpu)) }));
  console.log(`| ${size} | ${t.wall.toFixed(0)} / ${t.cpu.toFixed(0)} | ${s.wall.toFixed(0)} / ${s.cpu.toFixed(0)} | ${(s.cpu / t.cpu).toFixed(2)} |`);
}
await farm.close();

console.log('\n| size | format | bytes | encode ms / CPU ms (this process, sharp\'s threads included) |\n|---|---|---|---|');
for (const [size, pngs] of framesBySize) {
  for (const format of ['webp', 'apng', 'gif'] as AnimationFormat[]) {
    const runs: Array<{ wall: number; cpu: number }> = [];
    let bytes = 0;
    for (let round = 0; round < 3; round += 1) runs.push(await cost(async () => { bytes = (await encodeAnimation(pngs, format, 12)).length; }));
    console.log(`| ${size} | ${format} | ${bytes} | ${median(runs.map((r) => r.wall)).toFixed(0)} / ${median(runs.map((r) => r.cpu)).toFixed(0)} |`);
  }
}
