// The Chromium inside @sparticuz/chromium, unpacked once per machine. The package unpacks into the
// temporary directory and takes any `chromium` file there as done, so processes starting together
// on a fresh machine ran a binary another one was still writing ("Text file busy"). Here one
// process at a time unpacks, under a lock directory, and a marker written afterwards says done,
// and which package version it unpacked: after an upgrade, the new one is unpacked.
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/** A lock older than this was left by a process that died while unpacking (which takes seconds). */
const STALE_LOCK_MS = 5 * 60_000;
/** Unpacking several seconds at most, waiters look again this often. */
const POLL_MS = 100;

/** What the package unpacks into the temporary directory (its binary, fonts and SwiftShader). */
const UNPACKED = ['chromium', 'fonts', 'libEGL.so', 'libGLESv2.so', 'libvk_swiftshader.so', 'libvulkan.so.1', 'vk_swiftshader_icd.json'];

/** Per process: a second browser of the same process waits for the first's unpacking. */
let unpacking: Promise<string> | null = null;

export function bundledChromium(): Promise<string> {
  unpacking ??= unpack().catch((error) => {
    unpacking = null;
    throw error;
  });
  return unpacking;
}

/** The marker's content: the package's version (its package.json, beside build/index.js). */
function packageVersion(): string {
  const manifest = new URL('../package.json', import.meta.resolve('@sparticuz/chromium'));
  return `@sparticuz/chromium ${(JSON.parse(readFileSync(manifest, 'utf8')) as { version: string }).version}\n`;
}

/** Whether the marker says this version was unpacked in full. */
function unpacked(ready: string, binary: string, version: string): boolean {
  try {
    return readFileSync(ready, 'utf8') === version && existsSync(binary);
  } catch {
    return false;
  }
}

async function unpack(): Promise<string> {
  const tmp = os.tmpdir();
  const binary = path.join(tmp, 'chromium');
  const ready = path.join(tmp, 'chromium.skinfarm-ready');
  const lock = path.join(tmp, 'chromium.skinfarm-lock');
  const { default: chromium } = await import('@sparticuz/chromium');
  const version = packageVersion();
  for (;;) {
    if (unpacked(ready, binary, version)) return binary;
    if (await takeLock(lock)) break;
    await sleep(POLL_MS);
  }
  try {
    // Under the lock, what is there without the marker (or with another version's) may be half
    // written or old: unpacked again. Removed first, so the package does not skip it, and a
    // browser still running an old copy keeps its files (new ones are new inodes).
    if (!unpacked(ready, binary, version)) {
      await rm(ready, { force: true });
      await Promise.all(UNPACKED.map((name) => rm(path.join(tmp, name), { recursive: true, force: true })));
      const written = await chromium.executablePath();
      if (written !== binary) throw new Error(`@sparticuz/chromium unpacked to ${written}, not ${binary}`);
      await writeFile(ready, version);
    }
    return binary;
  } finally {
    await rm(lock, { recursive: true, force: true });
  }
}

/** Takes the lock directory (mkdir is atomic), or removes it when its holder is long gone. */
async function takeLock(lock: string): Promise<boolean> {
  try {
    await mkdir(lock);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    const since = await stat(lock).then((s) => Date.now() - s.mtimeMs, () => 0);
    if (since > STALE_LOCK_MS) await rm(lock, { recursive: true, force: true });
    return false;
  }
}
