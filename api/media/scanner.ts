// Keeps the Library in step with MEDIA_DIR. One code path serves the start-up scan, the
// watcher's single-file updates and the periodic full rescan: list, compare size and mtime with
// the index, probe only what changed. Nothing outside MEDIA_DIR is ever indexed: symlinks are
// resolved and dropped when their target lies elsewhere. Whatever is skipped gets a log line.
// What the server may not read (EACCES, EIO...) is not skipped but kept as a fault: a file out of
// the picks and counts, a category out of the listings, both answered as a failure, each logged
// when it starts and when it ends, and re-read at every sync until it can be read again.
import { createHash } from 'node:crypto';
import fsSync from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from '../../shared/log.ts';
import { addressExtension, formatOf, type MediaFormat } from './formats.ts';
import { isMissing, readFailure } from './fs-errors.ts';
import type { Library } from './library.ts';
import { orientationOf } from './orientation.ts';
import { MismatchedContent, probeFile } from './probe.ts';
import type { CategoryMeta, MediaFile } from './types.ts';

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
  // toString of the first 12 bytes, not slice() of the full hex: a slice keeps its parent alive.
  return createHash('sha256').update(`${alias}/${name}\0${bytes}\0${mtimeMs}`).digest().toString('hex', 0, 12);
}

async function forEachLimit<T>(items: T[], limit: number, fn: (item: T) => Promise<void>, stopped: () => boolean): Promise<void> {
  let next = 0;
  let sliceStart = performance.now();
  const worker = async () => {
    while (next < items.length && !stopped()) {
      await fn(items[next++]);
      if (performance.now() - sliceStart > SLICE_MS) {
        await new Promise(setImmediate);
        sliceStart = performance.now();
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

/** The name as text, or undefined when its bytes are not UTF-8 (the index keys files by text names). */
export function utf8Name(raw: Buffer): string | undefined {
  const name = raw.toString('utf8');
  return Buffer.from(name).equals(raw) ? name : undefined;
}

/** A name for log lines: printable ASCII kept, every other byte as \xNN. */
function printable(raw: Buffer): string {
  return [...raw].map((byte) => (byte >= 0x20 && byte < 0x7f && byte !== 0x5c ? String.fromCharCode(byte) : `\\x${byte.toString(16).padStart(2, '0')}`)).join('');
}

/** A directory entry after following a symlink: where it really is, or why it is not used. */
type Resolved = { real: string; stat: fsSync.Stats } | { skip: 'missing' | 'dangling' | 'outside' };

export interface RootChanges { added: string[]; removed: string[] }

export class LibraryScanner {
  readonly root: string;
  private readonly library: Library;
  private readonly log: Logger;
  private rootReal = '';
  /**
   * Real directory of every category directory present, indexed or not: one whose category.json
   * is broken is watched too, so a repair is seen at once.
   */
  private readonly dirs = new Map<string, string>();
  /** Files that failed to probe, by real path, with the size:mtime that failed (not retried until it changes). */
  private readonly failed = new Map<string, string>();
  private readonly reported = new Set<string>();
  /** Called with a category directory before it is listed (the watcher watches it from then on). */
  onDirectory: ((alias: string, dir: string) => void) | undefined;
  /** Set at shutdown: a scan under way stops at the next file instead of reading the whole library. */
  private stopped = false;

  constructor(root: string, library: Library, log: Logger) {
    this.root = path.resolve(root);
    this.library = library;
    this.log = log;
  }

  stop(): void {
    this.stopped = true;
  }

  /** Real directories of the categories present (indexed or not), for the watcher. */
  directories(): ReadonlyMap<string, string> {
    return this.dirs;
  }

  /** Once per distinct problem, so periodic rescans do not repeat the same line. */
  private reportOnce(key: string, msg: string, fields: Record<string, unknown>): void {
    if (this.reported.has(key)) return;
    this.reported.add(key);
    this.log.warn(msg, fields);
  }

  /** A file name that is not UTF-8: never indexed, said once. */
  reportBadName(alias: string, raw: Buffer): void {
    this.reportOnce(`utf8:${alias}/${raw.toString('hex')}`, 'media file skipped: its name is not valid UTF-8', { file: `${alias}/${printable(raw)}` });
  }

  private resolve(entryPath: string): Resolved {
    let link: fsSync.Stats;
    try {
      link = fsSync.lstatSync(entryPath);
    } catch (err) {
      if (isMissing(err)) return { skip: 'missing' };
      throw err;
    }
    if (!link.isSymbolicLink()) return { real: entryPath, stat: link };
    let real: string;
    try {
      real = fsSync.realpathSync(entryPath);
    } catch (err) {
      if (isMissing(err) || (err as NodeJS.ErrnoException).code === 'ELOOP') return { skip: 'dangling' };
      throw err;
    }
    return real.startsWith(this.rootReal + path.sep) ? { real, stat: fsSync.statSync(real) } : { skip: 'outside' };
  }

  /**
   * Adds new category directories, drops vanished ones; `deep` also re-syncs the existing ones,
   * `touched` those named (a chmod or a rename of the directory itself).
   */
  async syncRoot(deep: boolean, touched: ReadonlySet<string> = new Set()): Promise<RootChanges> {
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
      if (this.stopped) break;
      const known = this.dirs.has(alias);
      if (known && !deep && !touched.has(alias)) continue;
      const indexed = this.library.category(alias) !== undefined;
      await this.syncCategory(alias);
      if (!indexed && this.library.category(alias)) changes.added.push(alias);
    }
    if (deep) {
      // Each fault was logged when it began; a full pass repeats how much is left, as a count.
      const unreadable = this.library.unreadableCounts();
      if (unreadable.files || unreadable.categories) this.log.warn('media library: some of it cannot be read', unreadable);
    }
    return changes;
  }

  private dropCategory(alias: string): void {
    this.dirs.delete(alias);
    this.library.dropCategory(alias);
  }

  /**
   * category.json of a category; undefined when it cannot be parsed: the caller then leaves the
   * category out, as a broken file may have been meant to make it private. A read failure throws.
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
      throw err;
    }
    try {
      // Editors on Windows start UTF-8 files with a byte order mark; JSON.parse refuses it.
      const raw = JSON.parse(text.replace(/^\uFEFF/, '')) as { name?: unknown; private?: unknown };
      if (raw === null || typeof raw !== 'object') throw new Error('not a JSON object');
      if (raw.private !== undefined && typeof raw.private !== 'boolean') throw new Error('"private" must be true or false');
      const name = typeof raw.name === 'string' && raw.name.trim() ? raw.name.trim().slice(0, 200) : alias;
      return { name, private: raw.private === true };
    } catch (err) {
      this.log.error('category skipped: category.json is invalid', { alias, err: (err as Error).message });
      return undefined;
    }
  }

  /** The media file names of a category directory; names that are not UTF-8 are reported and left out. */
  private async listFiles(alias: string, dir: string): Promise<string[]> {
    const names: string[] = [];
    for (const entry of await fs.readdir(dir, { withFileTypes: true, encoding: 'buffer' })) {
      if (!entry.isFile() && !entry.isSymbolicLink()) continue;
      const name = utf8Name(entry.name);
      if (name === undefined) {
        if (formatOf(entry.name.toString('latin1'))) this.reportBadName(alias, entry.name);
      } else if (!name.startsWith('.') && formatOf(name)) {
        names.push(name);
      }
    }
    return names;
  }

  /** Re-reads a category's settings and every file in it. */
  async syncCategory(alias: string): Promise<void> {
    let names: string[];
    let dir: string;
    let meta: CategoryMeta | undefined;
    try {
      const resolved = this.resolve(path.join(this.rootReal, alias));
      if ('skip' in resolved || !resolved.stat.isDirectory()) {
        if ('skip' in resolved && resolved.skip !== 'missing') {
          this.reportOnce(`${resolved.skip}:${alias}`, resolved.skip === 'outside' ? 'media directory skipped: it points outside MEDIA_DIR' : 'media directory skipped: dangling symlink', { alias });
        }
        return this.dropCategory(alias);
      }
      dir = resolved.real;
      this.dirs.set(alias, dir);
      // Watched before it is listed: a file landing while the listing is read is still seen.
      this.onDirectory?.(alias, dir);
      names = await this.listFiles(alias, dir);
      meta = await this.readMeta(alias, dir);
    } catch (err) {
      const failure = readFailure(err);
      if (failure) return this.setFault(alias, failure);
      if (!isMissing(err)) this.log.warn('media directory unreadable', { alias, err: (err as Error).message });
      return this.dropCategory(alias);
    }
    this.clearFault(alias);
    if (!meta) return this.library.dropCategory(alias);
    const category = this.library.setCategory(alias, meta, dir);
    const listed = new Set(names);
    for (const name of [...category.files.keys()]) if (!listed.has(name)) this.library.remove(alias, name);
    await this.refreshFiles(alias, names);
    if (!this.stopped) category.indexed = true;
  }

  /**
   * The category's directory or category.json cannot be read: whether it is private is unknown,
   * so it is answered as a failure to any selector, its entries kept for when it can be read.
   */
  private setFault(alias: string, err: NodeJS.ErrnoException): void {
    if (!this.library.fault(alias)) this.log.warn('media category unreadable', { alias, err: err.message });
    this.library.setFault(alias, err.code!);
  }

  private clearFault(alias: string): void {
    if (!this.library.fault(alias)) return;
    this.library.clearFault(alias);
    this.log.info('media category readable again', { alias });
  }

  /** A file that a sync or a request could not read: out of the picks and counts until it can be, said once. */
  markUnreadable(file: MediaFile, err: NodeJS.ErrnoException): void {
    if (file.unreadable || !this.library.setUnreadable(file, err.code ?? 'EIO')) return;
    this.log.warn('media file unreadable', { file: `${file.alias}/${file.name}`, err: err.message });
  }

  /**
   * A file that could not be read at its first probe, or after it changed: indexed by name and id
   * with what its name says (its address, if handed out before, answers a failure), in no bag.
   */
  private putUnreadable(alias: string, name: string, target: string | undefined, named: MediaFormat, stat: fsSync.Stats, err: NodeJS.ErrnoException): void {
    const bytes = stat.size;
    const mtimeMs = Math.floor(stat.mtimeMs);
    const entry = { id: mediaId(alias, name, bytes, mtimeMs), alias, name, target, format: named, ext: addressExtension(named, name) };
    this.library.put({ ...entry, width: 0, height: 0, orientation: 'square', animated: false, bytes, mtimeMs, unreadable: err.code, seen: -1, anySlot: -1, orientationSlot: -1 });
    this.log.warn('media file unreadable', { file: `${alias}/${name}`, err: err.message });
  }

  /** refreshFile for many names, a bounded number at a time. */
  async refreshFiles(alias: string, names: Iterable<string>): Promise<void> {
    await forEachLimit([...names], PROBE_CONCURRENCY, (name) => this.refreshFile(alias, name), () => this.stopped);
  }

  /** Brings one file's entry up to date: added, re-probed, or removed. */
  async refreshFile(alias: string, name: string): Promise<void> {
    const category = this.library.category(alias);
    const named = formatOf(name);
    // A category that cannot be read is read again whole (syncCategory) once it can.
    if (!category || !named || this.library.fault(alias) || name.startsWith('.') || name !== path.basename(name)) return;
    const entryPath = path.join(category.dir, name);
    const file = `${alias}/${name}`;
    const known = category.files.get(name);
    let resolved: Resolved;
    try {
      resolved = this.resolve(entryPath);
    } catch (err) {
      const failure = readFailure(err);
      if (failure && known) return this.markUnreadable(known, failure);
      this.log.warn('media file skipped', { file, reason: (err as Error).message });
      return this.library.remove(alias, name);
    }
    if ('skip' in resolved) {
      if (resolved.skip === 'outside') this.reportOnce(`outside:${entryPath}`, 'media file skipped: symlink points outside MEDIA_DIR', { file });
      if (resolved.skip === 'dangling') this.reportOnce(`dangling:${entryPath}`, 'media file skipped: dangling symlink', { file });
      this.failed.delete(entryPath);
      return this.library.remove(alias, name);
    }
    const { real, stat } = resolved;
    if (!stat.isFile()) return this.library.remove(alias, name);
    const mtimeMs = Math.floor(stat.mtimeMs);
    const target = real === entryPath ? undefined : real;
    const unchanged = known !== undefined && known.target === target && known.bytes === stat.size && known.mtimeMs === mtimeMs;
    if (unchanged && !known.unreadable) {
      // A chmod changes neither size nor mtime: whether the file can still be read is asked apart.
      try {
        fsSync.accessSync(real, fsSync.constants.R_OK);
      } catch (err) {
        const failure = readFailure(err);
        if (failure) this.markUnreadable(known, failure);
      }
      return;
    }
    const signature = `${stat.size}:${mtimeMs}`;
    if (this.failed.get(real) === signature) return;
    try {
      const probed = await probeFile(real, named);
      this.failed.delete(real);
      if (probed.format !== named) this.log.warn('media file served as what its content is, not what its name says', { file, named: named.mime, served: probed.format.mime });
      this.library.put({
        id: mediaId(alias, name, probed.bytes, probed.mtimeMs),
        alias: category.alias,
        name,
        target,
        format: probed.format,
        ext: addressExtension(probed.format, name),
        width: probed.width,
        height: probed.height,
        orientation: orientationOf(probed),
        animated: probed.animated,
        bytes: probed.bytes,
        mtimeMs: probed.mtimeMs,
        unreadable: undefined,
        seen: -1,
        anySlot: -1,
        orientationSlot: -1,
      });
      if (known?.unreadable) this.log.info('media file readable again', { file });
    } catch (err) {
      const failure = readFailure(err);
      // Still unreadable and unchanged: it was said already.
      if (failure && unchanged) return;
      if (failure) return this.putUnreadable(category.alias, name, target, named, stat, failure);
      this.library.remove(alias, name);
      if (isMissing(err)) return;
      this.failed.set(real, signature);
      const msg = err instanceof MismatchedContent ? 'media file skipped: its content is not what its name says' : 'media file skipped: unreadable';
      this.log.warn(msg, { file, reason: (err as Error).message });
    }
  }
}
