// Which ANGLE backend draws WebGL on this host's GPU, and whether it draws what SwiftShader draws.
// For each backend: a one-page farm with `gpu: 'on'`, the WebGL renderer it reports, and a fixed
// set of images (every kind, one generated skin with a cape); then the same set on SwiftShader and
// each backend's pixels against it (pixels that differ at all, the largest channel difference).
// `--flags` first tries Chromium flag sets of its own, outside the farm (puppeteer's launcher, one
// WebGL context on a blank page), to find what a new driver or Chromium needs.
// CHROMIUM_PATH picks the browser, PROBE_DEBUG=1 prints the farms' logs.
// `node scripts/bench/gpu-probe.ts [--backends gl-egl,vulkan,gles-egl] [--flags] [--out dir]`
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import puppeteer from 'puppeteer-core';
import sharp from 'sharp';
import { chromiumArgs, resolveChromium } from '../../renderer/browser.ts';
import { RenderFarm } from '../../renderer/farm.ts';
import { GPU_BACKENDS, type GpuBackend } from '../../renderer/gpu.ts';
import type { RenderKind } from '../../renderer/jobs.ts';
import { normalizeCape, normalizeSkin } from '../../renderer/skin-normalize.ts';
import { createLogger, silentLogger } from '../../shared/log.ts';
import { PlayerCatalogue, type SkinArt } from '../fake-upstream/players.ts';
import { drawCape, drawSkin } from '../fake-upstream/skin-art.ts';

const { values } = parseArgs({ options: { backends: { type: 'string', default: GPU_BACKENDS.join(',') }, flags: { type: 'boolean', default: false }, out: { type: 'string' } } });
const backends = values.backends!.split(',') as GpuBackend[];
for (const b of backends) if (!GPU_BACKENDS.includes(b)) throw new Error(`--backends takes ${GPU_BACKENDS.join(', ')}: ${b}`);

const skin = await normalizeSkin(await drawSkin(new PlayerCatalogue().byName('official', 'gen_7')!.skin as SkinArt));
const cape = await normalizeCape(await drawCape({}));
const SET: Array<{ kind: RenderKind; size: number; yaw: number; pitch: number }> = [
  { kind: 'render', size: 256, yaw: 35, pitch: 12 },
  { kind: 'render', size: 256, yaw: 200, pitch: -20 },
  { kind: 'body', size: 256, yaw: 0, pitch: 0 },
  { kind: 'cube', size: 128, yaw: 0, pitch: 0 },
  { kind: 'head', size: 128, yaw: 0, pitch: 0 },
];

/** The set drawn by a fresh one-page farm, or why it could not start (within 90 s). */
async function drawSet(gpu: 'on' | 'off', gpuBackend: GpuBackend): Promise<{ renderer: string; onGpu: boolean; images: Buffer[]; startMs: number } | { error: string }> {
  const started = performance.now();
  let farm: RenderFarm | undefined;
  try {
    farm = await RenderFarm.create({ workers: 1, gpu, gpuBackend, chromiumPath: process.env.CHROMIUM_PATH ?? null, jobTimeoutMs: 30_000 }, process.env.PROBE_DEBUG ? createLogger('debug') : silentLogger, AbortSignal.timeout(90_000));
    const startMs = Math.round(performance.now() - started);
    const images = [];
    for (const job of SET) {
      images.push(await farm.render({ ...job, skin, slim: false, cape: job.kind === 'render' ? cape : null, shadow: true, outer: true, bg: null }) as Buffer);
    }
    return { renderer: farm.info().webglRenderer, onGpu: farm.info().gpu, images, startMs };
  } catch (error) {
    return { error: (error as Error).message.split('\n')[0] };
  } finally {
    await farm?.close();
  }
}

/** Pixels that differ in any channel, as a share of all, and the largest channel difference. */
async function compare(a: Buffer, b: Buffer): Promise<{ differing: number; maxDiff: number }> {
  const [x, y] = await Promise.all([a, b].map((png) => sharp(png).ensureAlpha().raw().toBuffer({ resolveWithObject: true })));
  if (x.info.width !== y.info.width || x.info.height !== y.info.height) return { differing: 1, maxDiff: 255 };
  let differing = 0;
  let maxDiff = 0;
  for (let i = 0; i < x.data.length; i += 4) {
    let pixel = 0;
    for (let c = 0; c < 4; c++) pixel = Math.max(pixel, Math.abs(x.data[i + c] - y.data[i + c]));
    if (pixel > 0) differing += 1;
    maxDiff = Math.max(maxDiff, pixel);
  }
  return { differing: differing / (x.data.length / 4), maxDiff };
}

/** The WebGL renderer a browser started with `args` reports, and the errors Chromium printed. */
async function webglWith(args: string[]): Promise<string> {
  const { executablePath } = await resolveChromium(process.env.CHROMIUM_PATH ?? null);
  const errors: string[] = [];
  const browser = await puppeteer.launch({ executablePath, args, pipe: true, dumpio: false, timeout: 30_000 });
  browser.process()?.stderr?.on('data', (chunk: Buffer) => errors.push(...chunk.toString().split('\n').filter((l) => /ERROR|error/.test(l))));
  try {
    const page = await browser.newPage();
    const renderer = await page.evaluate(() => {
      const gl = document.createElement('canvas').getContext('webgl2');
      if (!gl) return 'no WebGL 2 context';
      const ext = gl.getExtension('WEBGL_debug_renderer_info');
      return String(ext ? gl.getParameter(ext.UNMASKED_RENDERER_WEBGL) : gl.getParameter(gl.RENDERER));
    });
    return `${renderer}${errors.length ? ` (chromium: ${errors.slice(-2).join(' | ').slice(0, 400)})` : ''}`;
  } finally {
    await browser.close();
  }
}

if (values.flags) {
  const gpu = chromiumArgs(true, 'gl-egl').filter((a) => !a.startsWith('--use-angle') && !a.startsWith('--use-gl'));
  const sets: Record<string, string[]> = {
    'angle gl-egl': ['--use-gl=angle', '--use-angle=gl-egl'],
    'angle gles-egl': ['--use-gl=angle', '--use-angle=gles-egl'],
    'angle gl': ['--use-gl=angle', '--use-angle=gl'],
    'angle vulkan': ['--use-gl=angle', '--use-angle=vulkan', '--enable-features=Vulkan'],
    'angle vulkan, native, no surface': ['--use-gl=angle', '--use-angle=vulkan', '--use-vulkan=native', '--enable-features=Vulkan,VulkanFromANGLE,DefaultANGLEVulkan', '--disable-vulkan-surface'],
    'egl': ['--use-gl=egl'],
  };
  for (const [name, extra] of Object.entries(sets)) {
    console.log(`flags ${name}: ${await webglWith([...gpu, ...extra]).catch((error: Error) => `did not start: ${error.message.split('\n')[0]}`)}`);
  }
}

const reference = await drawSet('off', 'gl-egl');
if ('error' in reference) throw new Error(`SwiftShader did not draw: ${reference.error}`);
console.log(`software: ${reference.renderer}, started in ${reference.startMs} ms`);
const save = (name: string, images: Buffer[]) => {
  if (!values.out) return;
  mkdirSync(values.out, { recursive: true });
  images.forEach((png, i) => writeFileSync(path.join(values.out!, `${name}-${SET[i].kind}-${i}.png`), png));
};
save('swiftshader', reference.images);
for (const backend of backends) {
  const drawn = await drawSet('on', backend);
  if ('error' in drawn) {
    console.log(`${backend}: did not start: ${drawn.error}`);
    continue;
  }
  const diffs = await Promise.all(drawn.images.map((png, i) => compare(png, reference.images[i])));
  console.log(`${backend}: ${drawn.onGpu ? 'GPU' : 'SOFTWARE'}: ${drawn.renderer}, started in ${drawn.startMs} ms; against SwiftShader: `
    + diffs.map((d, i) => `${SET[i].kind} ${(d.differing * 100).toFixed(2)}% of pixels differ (max ${d.maxDiff})`).join(', '));
  if (drawn.onGpu) save(backend, drawn.images);
}
