// The total number of media calls, kept across restarts: a Redis counter when the process has
// Redis (shared by every instance), else a small JSON file in DATA_DIR written atomically
// (temporary file + rename) at most once a second and on shutdown. On a full disk that file is
// overwritten in place instead, so the count survives a restart; nothing that fails to save is
// logged per write, but as a state (see StateLog).
import fs from 'node:fs/promises';
import path from 'node:path';
import type { RedisClientType } from '@redis/client';
import type { Logger } from '../../shared/log.ts';
import { StateLog } from '../../shared/log-state.ts';

export interface CallCounter {
  increment(): void;
  total(): Promise<number>;
  /** Calls counted here and not yet stored (Redis down, DATA_DIR failing), for the metrics. */
  unsaved(): number;
  close(): Promise<void>;
}

export const REDIS_CALLS_KEY = 'skinfarm:media:calls';
const CALLS_FILE = 'media-calls.json';
const WRITE_DELAY_MS = 1000;

/** Increments are batched into one INCRBY at a time; a failed batch is retried with the next. */
export class RedisCallCounter implements CallCounter {
  private readonly redis: RedisClientType;
  private readonly log: Logger;
  private pending = 0;
  private lastKnown = 0;
  private inFlight: Promise<void> | null = null;
  private failing = false;

  constructor(redis: RedisClientType, log: Logger) {
    this.redis = redis;
    this.log = log;
  }

  increment(): void {
    this.pending += 1;
    this.inFlight ??= this.flush();
  }

  private async flush(): Promise<void> {
    while (this.pending > 0) {
      const batch = this.pending;
      this.pending = 0;
      try {
        this.lastKnown = await this.redis.incrBy(REDIS_CALLS_KEY, batch);
        this.failing = false;
      } catch (err) {
        this.pending += batch;
        if (!this.failing) this.log.warn('media call counter: redis unavailable; counting in memory until it returns', { err: (err as Error).message });
        this.failing = true;
        break;
      }
    }
    this.inFlight = null;
  }

  async total(): Promise<number> {
    // Let a batch on its way land first, so a caller sees its own calls counted.
    await this.inFlight;
    try {
      this.lastKnown = Number(await this.redis.get(REDIS_CALLS_KEY)) || 0;
    } catch {
      // Redis is down: the last value seen is the best answer.
    }
    return this.lastKnown + this.pending;
  }

  unsaved(): number {
    return this.pending;
  }

  async close(): Promise<void> {
    await this.inFlight;
    if (this.pending > 0) await this.flush();
  }
}

/** Temporary files of a save (this process's or one that crashed or found the disk full). */
const TEMP_FILE = /^media-calls\.json\.\d+\.tmp$/;
/** A full disk or quota: a new file cannot be written, the existing one can still be overwritten. */
const NO_ROOM = new Set(['ENOSPC', 'EDQUOT']);
/** One line when saving starts failing, then a count a minute while it goes on. */
const FAILURE_LOG_MS = 60_000;

/** Writes over the file's existing bytes: on a full disk its block is already there to hold the new count. */
async function rewriteInPlace(file: string, text: string): Promise<void> {
  const handle = await fs.open(file, 'r+');
  try {
    await handle.write(text, 0);
    await handle.truncate(Buffer.byteLength(text));
  } finally {
    await handle.close();
  }
}

export class FileCallCounter implements CallCounter {
  private readonly file: string;
  private count: number;
  private written: number;
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> = Promise.resolve();
  /** The disk is full: saves go in place (not atomic) until a normal one works again. */
  private readonly inPlaceLog: StateLog;
  /** Nothing can be saved: calls since the last save are lost at a restart. */
  private readonly failedLog: StateLog;

  private constructor(file: string, count: number, log: Logger) {
    this.file = file;
    this.count = count;
    this.written = count;
    this.inPlaceLog = new StateLog(log, 'media call counter: DATA_DIR has no room for a new file; the count is rewritten in place', { recovered: 'media call counter: saved normally again', intervalMs: FAILURE_LOG_MS });
    this.failedLog = new StateLog(log, 'media call counter not saved: calls are counted in memory and lost at a restart until it can be', { recovered: 'media call counter saved again', intervalMs: FAILURE_LOG_MS });
  }

  /** Reads the count, removes temporary files left behind, and saves once: a DATA_DIR that cannot take the count is said at start. */
  static async open(dataDir: string, log: Logger): Promise<FileCallCounter> {
    const file = path.join(dataDir, CALLS_FILE);
    try {
      await fs.mkdir(dataDir, { recursive: true });
      for (const name of await fs.readdir(dataDir)) if (TEMP_FILE.test(name)) await fs.rm(path.join(dataDir, name), { force: true });
    } catch {
      // The save below fails too and says why.
    }
    let count = 0;
    let readable = true;
    try {
      const calls = (JSON.parse(await fs.readFile(file, 'utf8')) as { calls?: unknown }).calls;
      if (typeof calls !== 'number' || !Number.isSafeInteger(calls) || calls < 0) throw new Error('"calls" is not a count');
      count = calls;
    } catch (err) {
      readable = (err as NodeJS.ErrnoException).code === 'ENOENT';
      if (!readable) log.error('media call counter file unreadable; counting from 0', { file, err: (err as Error).message });
    }
    const counter = new FileCallCounter(file, count, log);
    // A file that could not be read stays as it is until the first call is saved over it.
    if (readable) await counter.save(count);
    return counter;
  }

  increment(): void {
    this.count += 1;
    this.timer ??= setTimeout(() => void this.write(), WRITE_DELAY_MS);
  }

  async total(): Promise<number> {
    return this.count;
  }

  unsaved(): number {
    return this.count - this.written;
  }

  private write(): Promise<void> {
    this.timer = undefined;
    this.writing = this.writing.then(() => (this.count === this.written ? undefined : this.save(this.count)));
    return this.writing;
  }

  /**
   * A temporary file renamed over the old one (never a half-written count); when the disk has no
   * room for it, the old file overwritten in place, the one write that needs no new block.
   */
  private async save(count: number): Promise<void> {
    const text = `${JSON.stringify({ calls: count })}\n`;
    const tmp = `${this.file}.${process.pid}.tmp`;
    try {
      await fs.writeFile(tmp, text);
      await fs.rename(tmp, this.file);
      this.saved(count);
      this.inPlaceLog.clear();
      return;
    } catch (err) {
      // A failed write leaves an empty or partial file behind.
      await fs.rm(tmp, { force: true }).catch(() => undefined);
      if (NO_ROOM.has((err as NodeJS.ErrnoException).code ?? '')) {
        try {
          await rewriteInPlace(this.file, text);
          this.saved(count);
          this.inPlaceLog.hit({ file: this.file, err: (err as Error).message });
          return;
        } catch {
          // No file to overwrite either (or the disk failed): not saved at all.
        }
      }
      this.failedLog.hit({ file: this.file, err: (err as Error).message, unsaved: count - this.written });
    }
  }

  private saved(count: number): void {
    this.written = count;
    this.failedLog.clear();
  }

  async close(): Promise<void> {
    clearTimeout(this.timer);
    await this.write();
  }
}

export async function createCallCounter(redis: RedisClientType | null, dataDir: string, log: Logger): Promise<CallCounter> {
  return redis ? new RedisCallCounter(redis, log) : FileCallCounter.open(dataDir, log);
}
