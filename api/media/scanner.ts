// Keeps the Library in step with MEDIA_DIR. One code path serves the start-up scan, the
// watcher's single-file updates and the periodic full rescan: list, compare size and mtime with
// the index, probe only what changed. Nothing outside MEDIA_DIR is ever indexed: symlinks are
// resolved and dropped when their target lies elsewhere.
import { createHash } from 'node:crypto';
import fsSync from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from '../../shared/log.ts';
import { formatOf, extensionOf } from './formats.ts';
import type { Library } from './library.ts';
import { orientationOf } from './orientation.ts';
import { probeFile } from './probe.ts';
import type { CategoryMeta } from './types.ts';

/** Category directory names usable as a selector value; anything else is skipped with a log line. */
const ALIAS_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;
export const CATEGORY_FILE = 'category.json';
/** Probes in flight: they only wait on each other when sharp reads a header (AVIF, EXIF in PNG/WebP). */
const PROBE_CONCURRENCY = 16;
/** Longest stretch of synchronous file work (see probe.ts) before the event loop gets a turn. */
const SLICE_MS = 10;
const MAX_CATEGORY_FILE_BYTES = 64 * 1024;

/** Permanent id: stable across restarts, new whenever the file's content (size or mtime) changes. */
function mediaId(alias: string, name: string, bytes: number, mtimeMs: number): string {
  return createHash('sha256').update(`${alias}/${name}\0${bytes}\0${mtimeMs}`).digest('hex').slice(0, 24);
}

async function forEachLimit<T>(items: T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  let sliceStart = performance.now();
  const worker = async () => {
    while (next < items.length) {
      await fn(items[next++]);
      if (performance.now() - sliceStart > SLICE_MS) {
        await new Promise(setImmediate);
        sliceStart = performance.now();
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

const isMissing = (err: unknown) => ['ENOENT', 'ENOTDIR'].includes((err as NodeJS.ErrnoException).code ?? '');

export interface RootChanges { added: string[]; removed: string[] }

export class LibraryScanner {
  readonly root: string;
  private readonly library: Library;
  private readonly log: Logger;
  private rootReal = '';
  /** Real directory of each indexed category. */
  private readonly dirs = new Map<string, string>();
  /** Files that failed to probe, by real path, with the size:mtime that failed (not retried until it changes). */
  private readonly failed = new Map<string, string>();
  private readonly reported = new Set<string>();

  constructor(root: string, library: Library, log: Logger) {
    this.root = path.resolve(root);
    this.library = library;
    this.log = log;
  }

  /** Real directory of a category, for the watcher. */
  categoryDir(alias: string): string | undefined {
    return this.dirs.get(alias);
  }

  /** Once per distinct problem, so periodic rescans do not repeat the same line. */
  private reportOnce(key: string, msg: string, fields: Record<string, unknown>): void {
    if (this.reported.has(key)) return;
    this.reported.add(key);
    this.log.warn(msg, fields);
  }

  /** The real path when it lies strictly inside MEDIA_DIR, else undefined. */
  private inside(p: string): string | undefined {
    const real = fsSync.realpathSync(p);
    return real.startsWith(this.rootReal + path.sep) ? real : undefined;
  }

  /** Adds new category directories, drops vanished ones; `deep` also re-syncs the existing ones. */
  async syncRoot(deep: boolean): Promise<RootChanges> {
    this.rootReal = await fs.realpath(this.root);
    const present = new Set<string>();
    for (const entry of await fs.readdir(this.rootReal, { withFileTypes: true })) {
      if (!entry.isDirectory() && !entry.isSymbolicLink()) continue;
      if (!ALIAS_PATTERN.test(entry.name)) {
        if (!entry.name.startsWith('.')) this.reportOnce(`alias:${entry.name}`, 'media directory skipped: not a valid alias (letters, digits, - and _)', { dir: entry.name });
        continue;
      }
      present.add(entry.name);
    }
    const changes: RootChanges = { added: [], removed: [] };
    for (const alias of this.dirs.keys()) {
      if (!present.has(alias)) {
        this.dropCategory(alias);
        changes.removed.push(alias);
      }
    }
    for (const alias of present) {
      const known = this.dirs.has(alias);
      if (known && !deep) continue;
      await this.syncCategory(alias);
      if (!known && this.dirs.has(alias)) changes.added.push(alias);
    }
    return changes;
  }

  private dropCategory(alias: string): void {
    this.dirs.delete(alias);
    this.library.dropCategory(alias);
  }

  /**
   * category.json of a category; undefined when it exists but cannot be read or parsed. The
   * caller then leaves the category out: a broken file may have been meant to make it private.
   */
  private async readMeta(alias: string, dir: string): Promise<CategoryMeta | undefined> {
    let text: string;
    try {
      const handle = await fs.open(path.join(dir, CATEGORY_FILE));
      try {
        text = (await handle.readFile()).subarray(0, MAX_CATEGORY_FILE_BYTES).toString('utf8');
      } finally {
        await handle.close();
      }
    } catch (err) {
      if (isMissing(err)) return { name: alias, private: false };
      this.log.error('category skipped: category.json is unreadable', { alias, err: (err as Error).message });
      return undefined;
    }
    try {
      const raw = JSON.parse(text) as { name?: unknown; private?: unknown };
      if (raw === null || typeof raw !== 'object') throw new Error('not a JSON object');
      if (raw.private !== undefined && typeof raw.private !== 'boolean') throw new Error('"private" must be true or false');
      const name = typeof raw.name === 'string' && raw.name.trim() ? raw.name.trim().slice(0, 200) : alias;
      return { name, private: raw.private === true };
    } catch (err) {
      this.log.error('category skipped: category.json is invalid', { alias, err: (err as Error).message });
      return undefined;
    }
  }

  /** Re-reads a category's settings and every file in it. */
  async syncCategory(alias: string): Promise<void> {
    let dir: string | undefined;
    let names: string[];
    try {
      dir = this.inside(path.join(this.rootReal, alias));
      if (!dir) {
        this.reportOnce(`outside:${alias}`, 'media directory skipped: it points outside MEDIA_DIR', { alias });
        return this.dropCategory(alias);
      }
      names = (await fs.readdir(dir, { withFileTypes: true }))
        .filter((e) => (e.isFile() || e.isSymbolicLink()) && !e.name.startsWith('.') && formatOf(e.name))
        .map((e) => e.name);
    } catch (err) {
      if (!isMissing(err)) this.log.warn('media directory unreadable', { alias, err: (err as Error).message });
      return this.dropCategory(alias);
    }
    const meta = await this.readMeta(alias, dir);
    if (!meta) return this.dropCategory(alias);
    this.dirs.set(alias, dir);
    const category = this.library.setCategory(alias, meta);
    const listed = new Set(names);
    for (const name of [...category.files.keys()]) if (!listed.has(name)) this.library.remove(alias, name);
    await this.refreshFiles(alias, names);
  }

  /** refreshFile for many names, a bounded number at a time. */
  async refreshFiles(alias: string, names: Iterable<string>): Promise<void> {
    await forEachLimit([...names], PROBE_CONCURRENCY, (name) => this.refreshFile(alias, name));
  }

  /** Re-reads category.json only. */
  async reloadMeta(alias: string): Promise<void> {
    const dir = this.dirs.get(alias);
    if (!dir) return;
    const meta = await this.readMeta(alias, dir);
    if (meta) this.library.setCategory(alias, meta);
    else this.dropCategory(alias);
  }

  /** Brings one file's entry up to date: added, re-probed, or removed. */
  async refreshFile(alias: string, name: string): Promise<void> {
    const dir = this.dirs.get(alias);
    const format = formatOf(name);
    if (!dir || !format || name.startsWith('.') || name !== path.basename(name)) return;
    const entryPath = path.join(dir, name);
    let real: string | undefined;
    let bytes: number;
    let mtimeMs: number;
    try {
      const link = fsSync.lstatSync(entryPath);
      real = link.isSymbolicLink() ? this.inside(entryPath) : entryPath;
      if (!real) {
        this.reportOnce(`outside:${entryPath}`, 'media file skipped: symlink points outside MEDIA_DIR', { file: `${alias}/${name}` });
        return this.library.remove(alias, name);
      }
      const stat = link.isSymbolicLink() ? fsSync.statSync(real) : link;
      if (!stat.isFile()) return this.library.remove(alias, name);
      bytes = stat.size;
      mtimeMs = Math.floor(stat.mtimeMs);
    } catch (err) {
      if (!isMissing(err)) this.log.warn('media file skipped', { file: `${alias}/${name}`, reason: (err as Error).message });
      this.failed.delete(entryPath);
      return this.library.remove(alias, name);
    }
    const known = this.library.category(alias)?.files.get(name);
    if (known && known.path === real && known.bytes === bytes && known.mtimeMs === mtimeMs) return;
    const signature = `${bytes}:${mtimeMs}`;
    if (this.failed.get(real) === signature) return;
    try {
      const probed = await probeFile(real, format.type, extensionOf(name));
      this.failed.delete(real);
      this.library.put({
        id: mediaId(alias, name, probed.bytes, probed.mtimeMs),
        alias,
        name,
        path: real,
        ext: extensionOf(name),
        type: format.type,
        mime: format.mime,
        width: probed.width,
        height: probed.height,
        orientation: orientationOf(probed),
        bytes: probed.bytes,
        mtimeMs: probed.mtimeMs,
      });
    } catch (err) {
      this.library.remove(alias, name);
      if (isMissing(err)) return;
      this.failed.set(real, signature);
      this.log.warn('media file skipped: unreadable', { file: `${alias}/${name}`, reason: (err as Error).message });
    }
  }
}
