// Follows MEDIA_DIR while the service runs: one fs.watch on the root (categories come and go)
// and one per category directory (files come and go). Events are batched per category for a
// short quiet period, and all work runs one job at a time so two syncs never interleave.
// A periodic full rescan repairs anything the OS did not report (inotify limits, network mounts).
import { watch, type FSWatcher } from 'node:fs';
import type { Logger } from '../../shared/log.ts';
import { CATEGORY_FILE, type LibraryScanner } from './scanner.ts';
import type { Library } from './library.ts';

const QUIET_MS = 100;
/** A steady stream of events (a bulk copy) still gets flushed this often. */
const MAX_BATCH_MS = 1000;

export interface WatcherOptions { rescanSeconds: number }

interface Pending { names: Set<string>; meta: boolean; full: boolean; since: number; timer?: NodeJS.Timeout }

export class LibraryWatcher {
  private readonly scanner: LibraryScanner;
  private readonly library: Library;
  private readonly log: Logger;
  private readonly options: WatcherOptions;
  private readonly watchers = new Map<string, FSWatcher>();
  private readonly pending = new Map<string, Pending>();
  private rootTimer: NodeJS.Timeout | undefined;
  private rescanTimer: NodeJS.Timeout | undefined;
  private queue: Promise<void> = Promise.resolve();
  private closed = false;

  constructor(scanner: LibraryScanner, library: Library, log: Logger, options: WatcherOptions) {
    this.scanner = scanner;
    this.library = library;
    this.log = log;
    this.options = options;
  }

  start(): void {
    this.watchDir('', this.scanner.root, () => this.scheduleRoot());
    this.syncWatchers();
    if (this.options.rescanSeconds > 0) {
      this.rescanTimer = setInterval(() => this.enqueue(() => this.syncRoot(true)), this.options.rescanSeconds * 1000);
      this.rescanTimer.unref();
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.rootTimer);
    clearInterval(this.rescanTimer);
    for (const pending of this.pending.values()) clearTimeout(pending.timer);
    for (const watcher of this.watchers.values()) watcher.close();
    this.watchers.clear();
    await this.queue;
  }

  private enqueue(job: () => Promise<void>): void {
    this.queue = this.queue.then(() => (this.closed ? undefined : job())).catch((err: unknown) => {
      this.log.warn('media library sync failed', { err: (err as Error).message });
    });
  }

  private watchDir(key: string, dir: string, onEvent: (filename: string | null) => void): void {
    try {
      const watcher = watch(dir, { persistent: false }, (_event, filename) => onEvent(filename === null ? null : String(filename)));
      watcher.on('error', () => {
        // The directory went away (or the OS dropped the watch): forget it; the root sync decides.
        watcher.close();
        this.watchers.delete(key);
        this.scheduleRoot();
      });
      this.watchers.set(key, watcher);
    } catch (err) {
      this.log.warn('cannot watch media directory; changes there wait for the periodic rescan', { dir, err: (err as Error).message });
    }
  }

  /** Watches every indexed category and stops watching the ones that are gone. */
  private syncWatchers(): void {
    const aliases = new Set(this.library.categories().map((c) => c.alias));
    for (const [key, watcher] of this.watchers) {
      if (key !== '' && !aliases.has(key)) {
        watcher.close();
        this.watchers.delete(key);
      }
    }
    for (const alias of aliases) {
      const dir = this.scanner.categoryDir(alias);
      if (dir && !this.watchers.has(alias)) this.watchDir(alias, dir, (name) => this.scheduleCategory(alias, name));
    }
  }

  private async syncRoot(deep: boolean): Promise<void> {
    const changes = await this.scanner.syncRoot(deep);
    if (changes.added.length || changes.removed.length) this.log.info('media categories changed', { ...changes });
    this.syncWatchers();
  }

  private scheduleRoot(): void {
    if (this.closed) return;
    clearTimeout(this.rootTimer);
    this.rootTimer = setTimeout(() => this.enqueue(() => this.syncRoot(false)), QUIET_MS);
  }

  private scheduleCategory(alias: string, filename: string | null): void {
    if (this.closed) return;
    const pending = this.pending.get(alias) ?? { names: new Set<string>(), meta: false, full: false, since: Date.now() };
    // No file name (some platforms): re-read the whole directory.
    if (filename === null) pending.full = true;
    else if (filename === CATEGORY_FILE) pending.meta = true;
    else pending.names.add(filename);
    this.pending.set(alias, pending);
    if (pending.timer && Date.now() - pending.since >= MAX_BATCH_MS) return;
    clearTimeout(pending.timer);
    pending.timer = setTimeout(() => {
      this.pending.delete(alias);
      this.enqueue(() => this.flush(alias, pending));
    }, QUIET_MS);
  }

  private async flush(alias: string, batch: Pending): Promise<void> {
    if (batch.full) {
      await this.scanner.syncCategory(alias);
    } else {
      if (batch.meta) await this.scanner.reloadMeta(alias);
      await this.scanner.refreshFiles(alias, batch.names);
    }
    this.syncWatchers();
  }
}
