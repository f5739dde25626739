// Builds media libraries for the media tests: generated images (with EXIF orientation where
// asked), header-only videos, category.json files, broken files and symlinks out of the root.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { tinyMp4, tinyWebm, type TinyVideoOptions } from '../../api/media/tiny-video.ts';
import { startApp, type RunningApp, type StartOptions } from './service.ts';

/**
 * The media service alone (SERVICES=media), once its library is indexed: the port opens before
 * that (requests meanwhile hear 503), and most tests want the whole library.
 */
export async function startMedia(env: Record<string, string>, options: StartOptions = {}): Promise<RunningApp> {
  const app = await startApp({ SERVICES: 'media', ...env }, options);
  await app.waitForLog((line) => line.msg === 'media library indexed', 60_000);
  return app;
}

/**
 * How to start the service so that a file mode keeps it out (chmod 000): root reads anything
 * through CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH, so as root it runs under setpriv (util-linux)
 * without them. A reason instead when this machine offers no way.
 */
export function withoutReadOverride(): { prefix: string[] } | { reason: string } {
  if (process.getuid?.() !== 0) return { prefix: [] };
  const prefix = ['setpriv', '--inh-caps=-all', '--bounding-set=-dac_override,-dac_read_search'];
  const probe = spawnSync(prefix[0], [...prefix.slice(1), 'true']);
  return probe.status === 0 ? { prefix } : { reason: `running as root and cannot drop CAP_DAC_OVERRIDE (setpriv: ${probe.error?.message ?? probe.stderr.toString().trim()})` };
}

export type ImageFormat = 'png' | 'jpg' | 'webp' | 'gif' | 'avif';

export interface ImageSpec { width: number; height: number; exifOrientation?: number; color?: string }

const created: string[] = [];

export async function tempDir(prefix: string): Promise<string> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), `skinfarm-${prefix}-`));
  created.push(dir);
  return dir;
}

/** Removes every directory tempDir made in this test file (each file runs in its own process). */
export async function removeTempDirs(): Promise<void> {
  await Promise.all(created.splice(0).map((dir) => fs.rm(dir, { recursive: true, force: true })));
}

/** Image bytes of the stored size; exifOrientation tags them so they display turned. */
export async function imageBytes(format: ImageFormat, spec: ImageSpec): Promise<Buffer> {
  let image = sharp({ create: { width: spec.width, height: spec.height, channels: 3, background: spec.color ?? '#3a7' } });
  if (spec.exifOrientation) image = image.withMetadata({ orientation: spec.exifOrientation });
  const encoders = { png: () => image.png(), jpg: () => image.jpeg(), webp: () => image.webp(), gif: () => image.gif(), avif: () => image.avif({ effort: 0 }) };
  return encoders[format]().toBuffer();
}

export async function writeImage(file: string, spec: ImageSpec): Promise<void> {
  await fs.mkdir(path.dirname(file), { recursive: true });
  await fs.writeFile(file, await imageBytes(path.extname(file).slice(1) as ImageFormat, spec));
}

export async function writeVideo(file: string, options: TinyVideoOptions): Promise<void> {
  await fs.mkdir(path.dirname(file), { recursive: true });
  await fs.writeFile(file, file.endsWith('.webm') ? tinyWebm(options) : tinyMp4(options));
}

export async function writeCategory(root: string, alias: string, meta?: Record<string, unknown>): Promise<string> {
  const dir = path.join(root, alias);
  await fs.mkdir(dir, { recursive: true });
  if (meta) await fs.writeFile(path.join(dir, 'category.json'), JSON.stringify(meta));
  return dir;
}

export const XSS_NAME = '<script>alert("x")</script> & <b>co</b>';

/**
 * The standard test library. `outside` holds files the library must never reach (symlink
 * targets); `root` is MEDIA_DIR.
 */
export async function buildTestLibrary(): Promise<{ root: string; outside: string }> {
  const base = await tempDir('media');
  const root = path.join(base, 'library');
  const outside = path.join(base, 'outside');
  await writeImage(path.join(outside, 'leak.png'), { width: 50, height: 40 });

  const photos = await writeCategory(root, 'photos', { name: 'Photos' });
  await writeImage(path.join(photos, 'wide.png'), { width: 300, height: 200 });
  await writeImage(path.join(photos, 'tall.jpg'), { width: 200, height: 300 });
  // Stored landscape, displayed portrait: EXIF orientation 6 turns it a quarter.
  await writeImage(path.join(photos, 'turned.jpg'), { width: 320, height: 180, exifOrientation: 6 });
  await writeImage(path.join(photos, 'square.webp'), { width: 120, height: 120 });
  await writeImage(path.join(photos, 'wide.gif'), { width: 90, height: 60 });
  await writeImage(path.join(photos, 'tall.avif'), { width: 64, height: 96 });
  await fs.writeFile(path.join(photos, 'broken.png'), 'this is not a png');
  await fs.writeFile(path.join(photos, 'notes.txt'), 'not media');
  await fs.symlink(path.join(outside, 'leak.png'), path.join(photos, 'leak.png'));

  const movies = await writeCategory(root, 'movies', { name: 'Movies' });
  // Large enough for meaningful byte ranges; the index (moov) sits after the data.
  await writeVideo(path.join(movies, 'wide.mp4'), { width: 640, height: 360, padBytes: 200_000 });
  await writeVideo(path.join(movies, 'tall.webm'), { width: 360, height: 640, unknownSize: true, padBytes: 500 });
  await writeVideo(path.join(movies, 'upright.mov'), { width: 1920, height: 1080, rotation: 90, audioFirst: true });

  const secret = await writeCategory(root, 'secret', { name: 'Secret stash', private: true });
  await writeImage(path.join(secret, 'hidden.png'), { width: 64, height: 32 });
  await writeVideo(path.join(secret, 'clip.mp4'), { width: 240, height: 320 });

  const xss = await writeCategory(root, 'xss', { name: XSS_NAME });
  await writeImage(path.join(xss, 'one.png'), { width: 40, height: 30 });

  await writeCategory(root, 'empty');
  // A category directory that is a symlink out of the root: never indexed.
  await fs.symlink(outside, path.join(root, 'escape'));
  return { root, outside };
}
