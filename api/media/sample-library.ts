// A small demo library, written when MEDIA_DIR does not exist so a fresh checkout shows every
// selector working: generated images in both orientations (and a square one), header-only
// videos, and one private category.
import fs from 'node:fs/promises';
import path from 'node:path';
import sharp from 'sharp';
import type { Logger } from '../../shared/log.ts';
import { CATEGORY_FILE } from './scanner.ts';
import { tinyMp4, tinyWebm } from './tiny-video.ts';
import type { CategoryMeta } from './types.ts';

type ImageFormat = 'png' | 'jpg' | 'webp';
interface SampleImage { kind: 'image'; file: string; width: number; height: number; hue: number }
interface SampleVideo { kind: 'video'; file: string; width: number; height: number; rotation?: 90 }
type SampleFile = SampleImage | SampleVideo;

const image = (file: string, width: number, height: number, hue: number): SampleImage => ({ kind: 'image', file, width, height, hue });

const SAMPLE: Array<{ alias: string; meta: CategoryMeta; files: SampleFile[] }> = [
  {
    alias: 'scenery',
    meta: { name: 'Scenery', private: false },
    files: [
      image('dawn.jpg', 640, 360, 25), image('dusk.jpg', 640, 400, 280), image('meadow.webp', 800, 450, 110),
      image('coast.png', 480, 270, 195), image('tower.jpg', 360, 640, 220), image('pine.webp', 400, 600, 140),
    ],
  },
  {
    alias: 'patterns',
    meta: { name: 'Patterns', private: false },
    files: [
      image('stripes.png', 300, 500, 330), image('waves.png', 320, 480, 45), image('rings.webp', 600, 400, 260),
      image('tile.png', 400, 400, 170),
    ],
  },
  {
    alias: 'clips',
    // Placeholders (a picture size, no frames) on purpose: "header-only videos" read as broken files.
    meta: { name: 'Demo clips (placeholder videos with no picture)', private: false },
    files: [{ kind: 'video', file: 'wide.mp4', width: 640, height: 360 }, { kind: 'video', file: 'tall.webm', width: 360, height: 640 }],
  },
  {
    alias: 'vault',
    meta: { name: 'Private demo', private: true },
    files: [image('secret-wide.jpg', 640, 360, 0), image('secret-tall.png', 360, 640, 300), { kind: 'video', file: 'upright.mp4', width: 640, height: 360, rotation: 90 }],
  },
];

/** A gradient with a few circles; the hue tells the files apart. */
async function sampleImage(width: number, height: number, hue: number, format: ImageFormat): Promise<Buffer> {
  const r = Math.min(width, height);
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}">
<defs><linearGradient id="g" x1="0" y1="0" x2="1" y2="1">
<stop offset="0" stop-color="hsl(${hue},70%,60%)"/><stop offset="1" stop-color="hsl(${(hue + 60) % 360},70%,30%)"/></linearGradient></defs>
<rect width="100%" height="100%" fill="url(#g)"/>
<circle cx="${width * 0.3}" cy="${height * 0.4}" r="${r * 0.2}" fill="hsl(${(hue + 180) % 360},80%,70%)" opacity="0.7"/>
<circle cx="${width * 0.7}" cy="${height * 0.65}" r="${r * 0.12}" fill="#fff" opacity="0.5"/></svg>`;
  const picture = sharp(Buffer.from(svg));
  if (format === 'jpg') return picture.jpeg({ quality: 80 }).toBuffer();
  if (format === 'webp') return picture.webp({ quality: 80 }).toBuffer();
  return picture.png().toBuffer();
}

async function sampleBytes(file: SampleFile): Promise<Buffer> {
  if (file.kind === 'image') return sampleImage(file.width, file.height, file.hue, path.extname(file.file).slice(1) as ImageFormat);
  const options = { width: file.width, height: file.height, rotation: file.rotation };
  return file.file.endsWith('.webm') ? tinyWebm(options) : tinyMp4(options);
}

/** Writes the sample library into `dir` when it does not exist; true when it did so. */
export async function ensureMediaDir(dir: string, log: Logger): Promise<boolean> {
  try {
    const stat = await fs.stat(dir);
    if (!stat.isDirectory()) throw new Error(`MEDIA_DIR ${dir} is not a directory`);
    return false;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  // Built in a temporary sibling and renamed, so a crash never leaves half a sample behind.
  const staging = `${dir}.sample-${process.pid}`;
  await fs.mkdir(path.dirname(dir), { recursive: true });
  await fs.rm(staging, { recursive: true, force: true });
  for (const category of SAMPLE) {
    const categoryDir = path.join(staging, category.alias);
    await fs.mkdir(categoryDir, { recursive: true });
    await fs.writeFile(path.join(categoryDir, CATEGORY_FILE), `${JSON.stringify(category.meta, null, 2)}\n`);
    for (const file of category.files) await fs.writeFile(path.join(categoryDir, file.file), await sampleBytes(file));
  }
  await fs.rename(staging, dir);
  log.info('MEDIA_DIR did not exist: wrote a sample library', { dir, categories: SAMPLE.map((c) => c.alias) });
  return true;
}
