// Crash-safe file replacement and a lock file shared between processes on one host (the server
// and the search-keys CLI).
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';

/**
 * Replaces `file` with `text` so that a reader (or a crash at any moment) sees either the old or
 * the new content in full: temporary file, fsync, rename over the old one, fsync the directory.
 */
export async function writeAtomic(file: string, text: string): Promise<void> {
  const dir = path.dirname(file);
  const tmp = path.join(dir, `.${path.basename(file)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  const handle = await fs.open(tmp, 'w', 0o600);
  try {
    await handle.writeFile(text);
    await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    await fs.rename(tmp, file);
  } catch (error) {
    await fs.rm(tmp, { force: true });
    throw error;
  }
  const dirHandle = await fs.open(dir, 'r');
  try {
    await dirHandle.sync();
  } finally {
    await dirHandle.close();
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** A lock held by a process that no longer runs is taken over (a crash must not block forever). */
async function removeIfStale(lockFile: string): Promise<void> {
  const owner = Number((await fs.readFile(lockFile, 'utf8').catch(() => '')).trim());
  // An empty file is a lock being written right now, not a stale one.
  if (Number.isInteger(owner) && owner > 0 && owner !== process.pid && !alive(owner)) {
    await fs.rm(lockFile, { force: true });
  }
}

/** Runs `fn` holding `lockFile` (created exclusively, holding the owner's pid). */
export async function withFileLock<T>(lockFile: string, fn: () => Promise<T>, timeoutMs = 10_000): Promise<T> {
  await fs.mkdir(path.dirname(lockFile), { recursive: true });
  const deadline = Date.now() + timeoutMs;
  for (let attempt = 0; ; attempt++) {
    try {
      const handle = await fs.open(lockFile, 'wx', 0o600);
      await handle.writeFile(String(process.pid));
      await handle.close();
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      if (Date.now() > deadline) throw new Error(`could not lock ${lockFile} within ${timeoutMs} ms`);
      await removeIfStale(lockFile);
      await new Promise((r) => setTimeout(r, Math.min(2 + attempt * 2, 50)));
    }
  }
  try {
    return await fn();
  } finally {
    await fs.rm(lockFile, { force: true });
  }
}
