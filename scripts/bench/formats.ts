// Image formats (issue #31): bytes of each kind and size in PNG (as the renderer draws it), WebP
// and AVIF (as api/skins/image-format.ts encodes them, lossless), and the encode cost per image,
// on the demo players and on generated skins (the fake upstream's gen_N). Function level, no HTTP:
// the images are drawn as ImageRenderer draws them, with each kind's default options. Encodes run
// one at a time, so an encode's time is its cost (a service runs them in libuv's pool, off the loop).
// `--sweep N` first tries other encoder efforts on N generated skins, the figures behind the choice.
// `npm run bench:formats -- [--generated 1000] [--sizes 64,128,256,512] [--generated-sizes default] [--kinds avatar,...] [--avif-images 1000] [--sweep 0] [--append]`
// --append writes the tables and the machine's facts under "## Image formats (issue #31)" in docs/benchmarks.md.
import { readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { parseArgs } from 'node:util';
import type { Context } from 'koa';
import sharp from 'sharp';
import { readParams } from '../../api/http/params.ts';
import { encodeImage } from '../../api/skins/image-format.ts';
import { IMAGE_KINDS, imageOptions, imageParams, type ImageKind, type ImageOptions } from '../../api/skins/image-params.ts';
import { renderAvatar } from '../../renderer/avatar-2d.ts';
import { RenderFarm } from '../../renderer/farm.ts';
import { normalizeCape, normalizeSkin, type NormalizedCape, type NormalizedSkin } from '../../renderer/skin-normalize.ts';
import { silentLogger } from '../../shared/log.ts';
import { PlayerCatalogue, type CapeArt, type SkinArt } from '../fake-upstream/players.ts';
import { drawCape, drawSkin } from '../fake-upstream/skin-art.ts';

const { values } = parseArgs({
  options: {
    generated: { type: 'string', default: '1000' },
    sizes: { type: 'string', default: '64,128,256,512' },
    // `default`: the generated skins at each kind's default size only (1,000 skins at four sizes is hours of AVIF on 2 cores).
    'generated-sizes': { type: 'string', default: 'default' },
    workers: { type: 'string', default: String(os.availableParallelism()) },
    sweep: { type: 'string', default: '0' },
    kinds: { type: 'string', default: IMAGE_KINDS.join(',') },
    // AVIF takes tenths of a second an image: on a busy machine, the first N images of a row only.
    'avif-images': { type: 'string', default: '1000' },
    append: { type: 'boolean', default: false },
  },
});
const sizesOf = (list: string) => list.split(',').map(Number).filter((n) => Number.isInteger(n) && n >= 8 && n <= 512);
const DEMO = ['Knight', 'Robot', 'Astronaut', 'Ranger', 'Wizard', 'Miner'];
const KINDS = values.kinds!.split(',').filter((k): k is ImageKind => (IMAGE_KINDS as readonly string[]).includes(k));
const AVIF_IMAGES = Number(values['avif-images']);

const lines: string[] = [];
const say = (line: string) => {
  console.log(line);
  lines.push(line);
};

/** A subject to draw: the skin, its model, the cape. */
interface Subject { skin: NormalizedSkin; slim: boolean; cape: NormalizedCape | null }

const catalogue = new PlayerCatalogue();
async function subject(name: string): Promise<Subject> {
  const player = catalogue.byName('official', name)!;
  const cape = player.cape ? await normalizeCape(await drawCape(player.cape as CapeArt)) : null;
  return { skin: await normalizeSkin(await drawSkin(player.skin as SkinArt)), slim: player.slim, cape };
}

/** A kind's default options at `size`, read as the route reads a request that gives only the size. */
function defaults(kind: ImageKind, size: number): ImageOptions {
  return imageOptions(kind, readParams({ params: { name: 'x', size: String(size) }, query: {} } as unknown as Context, imageParams(kind, 'path')));
}

const farm = await RenderFarm.create({ workers: Number(values.workers), gpu: 'auto', queueLimit: 100_000, jobTimeoutMs: 120_000 }, silentLogger);

/** The PNG the service would serve (ImageRenderer.drawWith). */
function draw(o: ImageOptions, s: Subject): Promise<Buffer> {
  if (o.kind === 'avatar') return renderAvatar(s.skin, { size: o.size, shape: o.shape, helm: o.outer, bg: o.bg });
  const withCape = o.kind === 'render' || o.kind === 'body';
  return farm.render({
    kind: o.kind, skin: s.skin, slim: s.slim, cape: withCape ? s.cape : null, size: o.size, yaw: o.yaw, pitch: o.pitch, shadow: o.shadow,
    outer: o.outer, bg: o.bg, scale: o.scale ?? undefined, view: o.view, pose: o.kind === 'render' ? o.pose : undefined,
  });
}

/**
 * The work's cost in CPU ms of this process (the encode's libuv and libvips threads; nothing else
 * runs meanwhile), and its wall ms: on a machine shared with other work the wall time mostly
 * measures the others, the CPU time much less.
 */
async function timed<T>(work: () => Promise<T>): Promise<[T, number, number]> {
  const cpu = process.cpuUsage();
  const started = performance.now();
  const value = await work();
  const { user, system } = process.cpuUsage(cpu);
  return [value, (user + system) / 1000, performance.now() - started];
}

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const p = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * q))];
const ms = (x: number) => (x < 10 ? x.toFixed(1) : Math.round(x).toString());
const share = (x: number, of: number) => `${Math.round((100 * x) / of)}%`;

/** Draws `subjects` in `kind` at `size` (in parallel, the farm's pace), encodes each one at a time, prints a row. */
async function row(set: string, kind: ImageKind, size: number, subjects: Subject[]): Promise<void> {
  const options = defaults(kind, size);
  const pngs = await Promise.all(subjects.map((s) => draw(options, s)));
  const bytes = { png: pngs.map((b) => b.length), webp: [] as number[], avif: [] as number[] };
  const cost = { webp: [] as number[], avif: [] as number[] };
  const wall = { webp: [] as number[], avif: [] as number[] };
  for (const [i, png] of pngs.entries()) {
    for (const format of i < AVIF_IMAGES ? ['webp', 'avif'] as const : ['webp'] as const) {
      const [encoded, cpu, took] = await timed(() => encodeImage(png, format, 'bench'));
      bytes[format].push(encoded.length);
      cost[format].push(cpu);
      wall[format].push(took);
    }
  }
  const cell = (format: 'webp' | 'avif') => `${ms(p(cost[format], 0.5))} / ${ms(p(cost[format], 0.99))} (${ms(p(wall[format], 0.5))})`;
  const png = mean(bytes.png);
  const { width, height } = await sharp(pngs[0]).metadata();
  say(`| ${set} | ${kind} | ${size} (${width}x${height}) | ${pngs.length} | ${Math.round(png)} | ${Math.round(mean(bytes.webp))} (${share(mean(bytes.webp), png)}) | ${Math.round(mean(bytes.avif))} (${share(mean(bytes.avif), mean(bytes.png.slice(0, bytes.avif.length)))})${bytes.avif.length < pngs.length ? ` (first ${bytes.avif.length})` : ''} | ${cell('webp')} | ${cell('avif')} |`);
}

/** Largest difference of any channel of any pixel between two images of one size (0: exact). */
async function maxError(a: Buffer, b: Buffer): Promise<number> {
  const [x, y] = await Promise.all([a, b].map((image) => sharp(image).ensureAlpha().raw().toBuffer()));
  let max = 0;
  for (let i = 0; i < x.length; i += 1) max = Math.max(max, Math.abs(x[i] - y[i]));
  return max;
}

type Encoder = [string, (png: Buffer) => Promise<Buffer>];
/** Other settings than the service's, on `count` generated skins at each kind's default size. */
async function sweep(count: number): Promise<void> {
  const subjects = await Promise.all(Array.from({ length: count }, (_, i) => subject(`gen_${100_000 + i}`)));
  const settings: Encoder[] = [
    ...[0, 2, 4, 6].map((effort): Encoder => [`WebP lossless, effort ${effort}`, (png) => sharp(png).webp({ lossless: true, exact: true, effort }).toBuffer()]),
    ...[0, 1, 2, 3].map((effort): Encoder => [`AVIF lossless, effort ${effort}`, (png) => sharp(png).avif({ lossless: true, effort }).toBuffer()]),
    // For the record: lossy AVIF at a high quality without chroma subsampling, the best case of lossy for texels.
    ['AVIF lossy q90 4:4:4, effort 2', (png) => sharp(png).avif({ quality: 90, chromaSubsampling: '4:4:4', effort: 2 }).toBuffer()],
  ];
  say(`Encoder settings on ${count} generated skins, each kind at its default size (ms: mean CPU ms per image of the kind; bytes: all kinds together, as a share of the PNGs'; error: the largest difference of a channel from the PNG's, 0 = exact)`);
  say('');
  say(`| setting | ${IMAGE_KINDS.map((k) => `${k} ms`).join(' | ')} | mean ms | bytes | error |`);
  say(`|---|${IMAGE_KINDS.map(() => '---').join('|')}|---|---|---|`);
  const pngs = new Map<ImageKind, Buffer[]>();
  for (const kind of IMAGE_KINDS) pngs.set(kind, await Promise.all(subjects.map((s) => draw(defaults(kind, sizeOfKind(kind)), s))));
  const pngBytes = [...pngs.values()].flat().reduce((a, b) => a + b.length, 0);
  for (const [label, encode] of settings) {
    const cells: string[] = [];
    let total = 0;
    let time = 0;
    let images = 0;
    let error = 0;
    for (const kind of IMAGE_KINDS) {
      const kindMs: number[] = [];
      for (const png of pngs.get(kind)!) {
        const [out, took] = await timed(() => encode(png));
        total += out.length;
        time += took;
        images += 1;
        kindMs.push(took);
        error = Math.max(error, await maxError(png, out));
      }
      cells.push(ms(mean(kindMs)));
    }
    say(`| ${label} | ${cells.join(' | ')} | ${ms(time / images)} | ${share(total, pngBytes)} | ${error} |`);
  }
  say('');
}

/** Each kind's default size (from its declaration). */
function sizeOfKind(kind: ImageKind): number {
  const size = imageParams(kind, 'path')[0].schema.default;
  return size as number;
}

const started = performance.now();
say(`${new Date().toISOString().slice(0, 10)}: ${os.availableParallelism()} cores (${os.cpus()[0]?.model.trim()}), load ${os.loadavg()[0].toFixed(1)} at start, `
  + `Node ${process.version}, sharp ${sharp.versions.sharp} (libvips ${sharp.versions.vips}, libwebp ${sharp.versions.webp}, aom ${sharp.versions.aom}), ${farm.info().browserVersion}, ${values.workers} render workers`);
say('');
// Shaders compile on each page's first frame.
const warm = await subject('gen_99999');
await Promise.all(Array.from({ length: Number(values.workers) * 2 }, () => draw(defaults('render', 64), warm)));

if (Number(values.sweep) > 0) await sweep(Number(values.sweep));

say('Bytes: mean per image (share of the PNG). Encode: CPU ms per image, p50 / p99 (wall ms p50), one at a time. PNG: as the renderer draws it (its encode is part of the render).');
say('');
say('| skins | kind | size (px) | images | PNG bytes | WebP bytes | AVIF bytes | WebP encode ms | AVIF encode ms |\n|---|---|---|---|---|---|---|---|---|');
const demo = await Promise.all(DEMO.map(subject));
for (const kind of KINDS) for (const size of sizesOf(values.sizes!)) await row('demo players', kind, size, demo);
const count = Number(values.generated);
if (count > 0) {
  const generated = await Promise.all(Array.from({ length: count }, (_, i) => subject(`gen_${i}`)));
  for (const kind of KINDS) {
    const sizes = values['generated-sizes'] === 'default' ? [sizeOfKind(kind)] : sizesOf(values['generated-sizes']!);
    for (const size of sizes) await row(`${count} generated`, kind, size, generated);
  }
}
await farm.close();
say('');
say(`(${Math.round((performance.now() - started) / 1000)} s in all)`);

if (values.append) {
  const file = new URL('../../docs/benchmarks.md', import.meta.url);
  const heading = '## Image formats (issue #31)';
  const text = readFileSync(file, 'utf8');
  const start = text.indexOf(`\n${heading}\n`);
  const block = `### \`npm run bench:formats -- ${process.argv.slice(2).filter((a) => a !== '--append').join(' ')}\`\n\n${lines.join('\n')}\n`;
  if (start < 0) writeFileSync(file, `${text.trimEnd()}\n\n${heading}\n\n${block}`);
  else {
    const next = text.indexOf('\n## ', start + 1);
    const end = next < 0 ? text.length : next;
    writeFileSync(file, `${text.slice(0, end).trimEnd()}\n\n${block}${text.slice(end)}`);
  }
}
