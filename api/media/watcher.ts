// Follows MEDIA_DIR while the service runs: one fs.watch on the root (categories come and go)
// and one per category directory (files come and go), set up before the directory is listed so
// nothing copied in meanwhile is missed. Events are batched per category for a short quiet
// period, and all work runs one job at a time so two syncs never interleave. A periodic full
// rescan repairs anything the OS did not report (inotify limits, network mounts).
import { watch, type FSWatcher } from 'node:fs';
import type { Logger } from '../../shared/log.ts';
import { readFailure } from './fs-errors.ts';
import { CATEGORY_FILE, utf8Name, type LibraryScanner } from './scanner.ts';

const QUIET_MS = 100;
/** A steady stream of events (a bulk copy) still gets flushed this often. */
const MAX_BATCH_MS = 1000;

export interface WatcherOptions { rescanSeconds: number }

/** Names changed in one category since its last flush; `full`: list the whole directory again. */
interface Pending { names: Set<string>; full: boolean; since: number; timer?: NodeJS.Timeout }

interface Watch { dir: string; watcher: FSWatcher }

export class LibraryWatcher {
  private readonly scanner: LibraryScanner;
  private readonly log: Logger;
  private readonly options: WatcherOptions;
  /** By alias; '' is the root. */
  private readonly watches = new Map<string, Watch>();
  private readonly pending = new Map<string, Pending>();
  private rootTimer: NodeJS.Timeout | undefined;
  /** Names the root's events carried since its last sync: categories whose directory itself changed. */
  private readonly rootNames = new Set<string>();
  private rescanTimer: NodeJS.Timeout | undefined;
  private queue: Promise<void> = Promise.resolve();
  private closed = false;

  constructor(scanner: LibraryScanner, log: Logger, options: WatcherOptions) {
    this.scanner = scanner;
    this.log = log;
    this.options = options;
    scanner.onDirectory = (alias, dir) => this.watchCategory(alias, dir);
  }

  /** Watches the root and indexes the whole library; resolves when that first scan is done. */
  start(): Promise<void> {
    this.watchDir('', this.scanner.root, (name) => this.scheduleRoot(name));
    const indexed = this.enqueue(() => this.syncRoot(true));
    if (this.options.rescanSeconds > 0) {
      this.rescanTimer = setInterval(() => this.enqueue(() => this.syncRoot(true)), this.options.rescanSeconds * 1000);
      this.rescanTimer.unref();
    }
    return indexed;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.scanner.stop();
    clearTimeout(this.rootTimer);
    clearInterval(this.rescanTimer);
    for (const pending of this.pending.values()) clearTimeout(pending.timer);
    for (const { watcher } of this.watches.values()) watcher.close();
    this.watches.clear();
    await this.queue;
  }

  private enqueue(job: () => Promise<void>): Promise<void> {
    this.queue = this.queue.then(() => (this.closed ? undefined : job())).catch((err: unknown) => {
      this.log.warn('media library sync failed', { err: (err as Error).message });
    });
    return this.queue;
  }

  private watchDir(key: string, dir: string, onEvent: (filename: Buffer | null) => void): void {
    try {
      // Names as bytes: a name that is not UTF-8 is reported, not silently mangled.
      const watcher = watch(dir, { persistent: false, encoding: 'buffer' }, (_event, filename) => onEvent(filename));
      watcher.on('error', () => {
        // The directory went away (or the OS dropped the watch): forget it and read it again as
        // if no name were known; that sync watches it anew or drops it.
        watcher.close();
        if (this.watches.get(key)?.watcher === watcher) this.watches.delete(key);
        onEvent(null);
      });
      this.watches.set(key, { dir, watcher });
    } catch (err) {
      // A directory this process may not read is a fault the sync reports (and retries) itself.
      if (!readFailure(err)) this.log.warn('cannot watch media directory; changes there wait for the periodic rescan', { dir, err: (err as Error).message });
    }
  }

  private watchCategory(alias: string, dir: string): void {
    if (this.closed) return;
    const current = this.watches.get(alias);
    if (current?.dir === dir) return;
    current?.watcher.close();
    this.watchDir(alias, dir, (name) => this.scheduleCategory(alias, name));
  }

  /** Stops watching category directories that are gone. */
  private dropStaleWatches(): void {
    const dirs = this.scanner.directories();
    for (const [key, { dir, watcher }] of this.watches) {
      if (key !== '' && dirs.get(key) !== dir) {
        watcher.close();
        this.watches.delete(key);
      }
    }
  }

  private async syncRoot(deep: boolean, touched?: ReadonlySet<string>): Promise<void> {
    const changes = await this.scanner.syncRoot(deep, touched);
    if (changes.added.length || changes.removed.length) this.log.info('media categories changed', { ...changes });
    this.dropStaleWatches();
  }

  private scheduleRoot(raw: Buffer | null): void {
    if (this.closed) return;
    // A chmod of a category directory is an event here naming it, and none inside it.
    const name = raw && utf8Name(raw);
    if (name) this.rootNames.add(name);
    clearTimeout(this.rootTimer);
    this.rootTimer = setTimeout(() => {
      const touched = new Set(this.rootNames);
      this.rootNames.clear();
      this.enqueue(() => this.syncRoot(false, touched));
    }, QUIET_MS);
  }

  private scheduleCategory(alias: string, raw: Buffer | null): void {
    if (this.closed) return;
    const pending = this.pending.get(alias) ?? { names: new Set<string>(), full: false, since: Date.now() };
    const name = raw === null ? null : utf8Name(raw);
    // No file name (some platforms) or category.json changed (its files may have been left out
    // while it was broken): read the whole directory again.
    if (name === null || name === CATEGORY_FILE) pending.full = true;
    else if (name === undefined) this.scanner.reportBadName(alias, raw!);
    else pending.names.add(name);
    this.pending.set(alias, pending);
    if (pending.timer && Date.now() - pending.since >= MAX_BATCH_MS) return;
    clearTimeout(pending.timer);
    pending.timer = setTimeout(() => {
      this.pending.delete(alias);
      this.enqueue(() => this.flush(alias, pending));
    }, QUIET_MS);
  }

  private async flush(alias: string, batch: Pending): Promise<void> {
    if (batch.full) await this.scanner.syncCategory(alias);
    else await this.scanner.refreshFiles(alias, batch.names);
    this.dropStaleWatches();
  }
}
