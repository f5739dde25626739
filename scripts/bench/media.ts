// Media service benchmark: index time for a generated library (100,000 files by default),
// random picks per second at function level, and files served per second over HTTP by the real
// service (`node api/main.ts`, SERVICES=media) under a bounded number of concurrent fetches;
// then resized variants of a 4000x3000 JPEG: made per second, and a cached one's p99 against the
// original's (--only variants runs just that part).
//   node scripts/bench/media.ts [--files 100000] [--seconds 5] [--concurrency 32] [--only variants]
//   (node --expose-gc ... measures the index heap after garbage collection)
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import sharp from 'sharp';
import { Library } from '../../api/media/library.ts';
import { LibraryScanner } from '../../api/media/scanner.ts';
import { tinyMp4, tinyWebm } from '../../api/media/tiny-video.ts';
import { silentLogger } from '../../shared/log.ts';
import { echoErrors, launch, ON_FREE_PORTS } from '../launch.ts';

const { values: args } = parseArgs({
  options: {
    files: { type: 'string', default: '100000' },
    seconds: { type: 'string', default: '5' },
    concurrency: { type: 'string', default: '32' },
    only: { type: 'string' },
  },
});
const FILES = Number(args.files);
const SECONDS = Number(args.seconds);
const CONCURRENCY = Number(args.concurrency);
const CATEGORIES = 20;

/** The format mix of the generated library (shares of all files). */
const MIX: Array<[ext: string, share: number]> = [['jpg', 0.4], ['png', 0.3], ['webp', 0.15], ['gif', 0.05], ['avif', 0.05], ['mp4', 0.03], ['webm', 0.02]];

async function templates(ext: string): Promise<Buffer[]> {
  const sizes = [[64, 48], [48, 64], [40, 40], [80, 45]];
  return Promise.all(sizes.map(async ([width, height], i) => {
    if (ext === 'mp4') return tinyMp4({ width: width * 10, height: height * 10, rotation: i === 3 ? 90 : 0 });
    if (ext === 'webm') return tinyWebm({ width: width * 10, height: height * 10 });
    const image = sharp({ create: { width, height, channels: 3, background: { r: 40 * i, g: 120, b: 200 } } });
    const encoded = { jpg: () => image.jpeg(), png: () => image.png(), webp: () => image.webp(), gif: () => image.gif(), avif: () => image.avif({ effort: 0 }) }[ext]!;
    return encoded().toBuffer();
  }));
}

async function generateLibrary(dir: string, count: number): Promise<void> {
  const byExt = new Map(await Promise.all(MIX.map(async ([ext]) => [ext, await templates(ext)] as const)));
  const jobs: Array<[string, Buffer]> = [];
  let n = 0;
  for (const [ext, share] of MIX) {
    const forExt = Math.round(count * share);
    for (let i = 0; i < forExt && n < count; i++, n++) {
      jobs.push([path.join(dir, `cat${String(n % CATEGORIES).padStart(2, '0')}`, `f${n}.${ext}`), byExt.get(ext)![Math.floor(n / CATEGORIES) % 4]]);
    }
  }
  for (let c = 0; c < CATEGORIES; c++) await fs.mkdir(path.join(dir, `cat${String(c).padStart(2, '0')}`), { recursive: true });
  let next = 0;
  await Promise.all(Array.from({ length: 64 }, async () => {
    while (next < jobs.length) {
      const [file, bytes] = jobs[next++];
      await fs.writeFile(file, bytes);
    }
  }));
}

function rate(count: number, ms: number): string {
  return Math.round(count / (ms / 1000)).toLocaleString('en-US');
}

async function indexBench(dir: string) {
  const library = new Library();
  const scanner = new LibraryScanner(dir, library, silentLogger);
  // With node --expose-gc the heap is measured after collections: what the index keeps, not its garbage.
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  const heapBefore = process.memoryUsage().heapUsed;
  let started = performance.now();
  await scanner.syncRoot(true);
  const indexMs = performance.now() - started;
  gc?.();
  const heapMb = (process.memoryUsage().heapUsed - heapBefore) / 1024 / 1024;
  started = performance.now();
  await scanner.syncRoot(true);
  const rescanMs = performance.now() - started;
  return { library, indexMs, rescanMs, heapMb };
}

function pickBench(library: Library) {
  const aliases = library.categories().map((c) => c.alias);
  const rounds = 2_000_000;
  let found = 0;
  const started = performance.now();
  for (let i = 0; i < rounds; i++) {
    // Category lookup by alias and a filtered pick: what each request does.
    const category = library.category(aliases[i % aliases.length])!;
    if (category.pick(i % 2 ? 'image' : 'video', i % 3 === 0 ? undefined : i % 3 === 1 ? 'portrait' : 'landscape')) found++;
  }
  const ms = performance.now() - started;
  if (found === 0) throw new Error('picks found nothing');
  return { rounds, ms };
}

/** The real service in its own process, logging at the default level (not kept), once its library is indexed. */
async function startService(mediaDir: string, dataDir: string, env: Record<string, string> = {}) {
  const service = await launch({
    ...ON_FREE_PORTS, SERVICES: 'media', MEDIA_DIR: mediaDir, DATA_DIR: dataDir, SESSION_SECRET: 'bench-secret-0123456789',
    MEDIA_RATE_LIMIT: '1000000', MEDIA_FILE_RATE_LIMIT: '1000000', MEDIA_RESCAN_SECONDS: '0', ...env,
  }, { timeoutMs: 120_000, dropLogs: true, onLine: echoErrors });
  return { base: service.urls.media, stop: service.stop };
}

/** Fetches `url()` from CONCURRENCY loops for SECONDS; every answer must be `expect`. */
async function load(url: () => string, expect: number, headers: Record<string, string> = {}) {
  let done = 0;
  let bytes = 0;
  const latencies: number[] = [];
  const started = performance.now();
  const deadline = started + SECONDS * 1000;
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (performance.now() < deadline) {
      const sent = performance.now();
      const res = await fetch(url(), { headers });
      const body = await res.arrayBuffer();
      latencies.push(performance.now() - sent);
      if (res.status !== expect) throw new Error(`${url()} answered ${res.status}`);
      done++;
      bytes += body.byteLength;
    }
  }));
  const ms = performance.now() - started;
  latencies.sort((a, b) => a - b);
  return { done, ms, mbps: bytes / 1024 / 1024 / (ms / 1000), p99: latencies[Math.floor(latencies.length * 0.99)] ?? 0 };
}

/**
 * Variants of one 4000x3000 JPEG (a smooth noise picture, about what a camera writes): uncached
 * 800 px WebPs made one after another by one client and by eight (the queue runs one per client;
 * X-Forwarded-For with TRUST_PROXY makes eight clients), then a cached variant against the original.
 */
async function variantBench(work: string) {
  const dir = path.join(work, 'variants', 'photos');
  await fs.mkdir(dir, { recursive: true });
  const photo = await sharp({ create: { width: 4000, height: 3000, channels: 3, background: '#000', noise: { type: 'gaussian', mean: 128, sigma: 30 } } })
    .blur(3).jpeg({ quality: 85 }).toBuffer();
  await fs.writeFile(path.join(dir, 'photo.jpg'), photo);
  const service = await startService(path.dirname(dir), path.join(work, 'variants-data'), { MEDIA_VARIANT_BUDGET: '1000000', TRUST_PROXY: 'true' });
  try {
    const { url } = (await (await fetch(`${service.base}/?img=photos&format=json`)).json()) as { url: string };
    // Each quality is a variant of its own: none is found cached.
    let quality = 0;
    const made = async (clients: number, count: number) => {
      const started = performance.now();
      await Promise.all(Array.from({ length: clients }, async (_, client) => {
        for (let i = 0; i < count / clients; i++) {
          const res = await fetch(`${url}?w=800&fmt=webp&q=${++quality}`, { headers: { 'X-Forwarded-For': `10.0.0.${client + 1}` } });
          await res.arrayBuffer();
          if (res.status !== 200) throw new Error(`variant answered ${res.status}`);
        }
      }));
      return { count, ms: performance.now() - started };
    };
    const oneClient = await made(1, 16);
    const eightClients = await made(8, 64);
    // Made once before it is timed: every request of the run finds it cached.
    const cachedUrl = `${url}?w=800&fmt=webp`;
    const variantBytes = (await (await fetch(cachedUrl)).arrayBuffer()).byteLength;
    return { photoBytes: photo.length, variantBytes, oneClient, eightClients, cached: await load(() => cachedUrl, 200), original: await load(() => url, 200) };
  } finally {
    await service.stop();
  }
}

async function httpBench(mediaDir: string, dataDir: string) {
  const service = await startService(mediaDir, dataDir);
  try {
    const aliases = ['cat00', 'cat01', 'cat02', 'cat03'];
    let i = 0;
    const next = () => aliases[i++ % aliases.length];
    const urls = await Promise.all(Array.from({ length: 200 }, async () => ((await (await fetch(`${service.base}/?img=${next()}&format=json`)).json()) as { url: string }).url));
    return {
      randomFile: await load(() => `${service.base}/?img=${next()}`, 200),
      randomJson: await load(() => `${service.base}/?img=${next()}&orientation=portrait&format=json`, 200),
      permanent: await load(() => urls[i++ % urls.length], 200),
      notModified: await load(() => urls[i++ % urls.length], 304, { 'If-None-Match': '*' }),
    };
  } finally {
    await service.stop();
  }
}

const perSecond = (run: { count: number; ms: number }) => `${(run.count / (run.ms / 1000)).toFixed(1)} variants/s`;

/** Index, picks and HTTP over a generated library of FILES files. */
async function libraryBench(work: string) {
  const mediaDir = path.join(work, 'library');
  console.log(`generating ${FILES.toLocaleString('en-US')} files in ${mediaDir} ...`);
  let started = performance.now();
  await generateLibrary(mediaDir, FILES);
  console.log(`  written in ${Math.round(performance.now() - started)} ms`);

  const index = await indexBench(mediaDir);
  const picks = pickBench(index.library);
  const http = await httpBench(mediaDir, path.join(work, 'data'));
  const rows = [
    ['index ' + index.library.size.toLocaleString('en-US') + ' files (cold start of the scanner)', `${(index.indexMs / 1000).toFixed(2)} s`, `${rate(index.library.size, index.indexMs)} files/s`],
    ['rescan, nothing changed (stat only)', `${(index.rescanMs / 1000).toFixed(2)} s`, `${rate(index.library.size, index.rescanMs)} files/s`],
    ['index heap', `${index.heapMb.toFixed(0)} MB`, `${Math.round((index.heapMb * 1024 * 1024) / index.library.size)} bytes/file`],
    ['random pick (alias lookup + filtered pick)', `${((picks.ms / picks.rounds) * 1e6).toFixed(0)} ns`, `${rate(picks.rounds, picks.ms)} picks/s`],
    [`HTTP random file (?img=), ${CONCURRENCY} concurrent`, `${http.randomFile.done} in ${SECONDS} s`, `${rate(http.randomFile.done, http.randomFile.ms)} files/s`],
    [`HTTP random JSON (format=json), ${CONCURRENCY} concurrent`, `${http.randomJson.done} in ${SECONDS} s`, `${rate(http.randomJson.done, http.randomJson.ms)} answers/s`],
    [`HTTP permanent file (/f/), ${CONCURRENCY} concurrent`, `${http.permanent.done} in ${SECONDS} s`, `${rate(http.permanent.done, http.permanent.ms)} files/s`],
    [`HTTP permanent file, 304 (If-None-Match)`, `${http.notModified.done} in ${SECONDS} s`, `${rate(http.notModified.done, http.notModified.ms)} answers/s`],
  ];
  console.log(`\n| measure | result | rate |\n|---|---|---|\n${rows.map((r) => `| ${r.join(' | ')} |`).join('\n')}`);
}

const work = await fs.mkdtemp(path.join(os.tmpdir(), 'skinfarm-media-bench-'));
try {
  const variants = await variantBench(work);
  const variantRows = [
    [`variant: 4000x3000 JPEG (${(variants.photoBytes / 1024 / 1024).toFixed(1)} MB) to 800 px WebP, uncached, 1 client`, `${variants.oneClient.count} in ${(variants.oneClient.ms / 1000).toFixed(2)} s`, perSecond(variants.oneClient)],
    ['the same, 8 clients (MEDIA_VARIANT_CONCURRENCY 4)', `${variants.eightClients.count} in ${(variants.eightClients.ms / 1000).toFixed(2)} s`, perSecond(variants.eightClients)],
    [`cached variant (${Math.round(variants.variantBytes / 1024)} KB), ${CONCURRENCY} concurrent`, `p99 ${variants.cached.p99.toFixed(1)} ms`, `${rate(variants.cached.done, variants.cached.ms)} answers/s`],
    [`the original (/f/ without options), ${CONCURRENCY} concurrent`, `p99 ${variants.original.p99.toFixed(1)} ms`, `${rate(variants.original.done, variants.original.ms)} answers/s`],
  ];
  console.log(`| measure | result | rate |\n|---|---|---|\n${variantRows.map((r) => `| ${r.join(' | ')} |`).join('\n')}`);
  if (args.only !== 'variants') await libraryBench(work);
  console.log(`\nnode ${process.version}, ${os.cpus().length} cores (${os.cpus()[0]?.model ?? 'unknown'}), ${os.platform()}`);
} finally {
  await fs.rm(work, { recursive: true, force: true });
}
