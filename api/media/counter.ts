// The total number of media calls, kept across restarts: a Redis counter when the process has
// Redis (shared by every instance), else a small JSON file in DATA_DIR written atomically
// (temporary file + rename) at most once a second and on shutdown.
import fs from 'node:fs/promises';
import path from 'node:path';
import type { RedisClientType } from '@redis/client';
import type { Logger } from '../../shared/log.ts';

export interface CallCounter {
  increment(): void;
  total(): Promise<number>;
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

  async close(): Promise<void> {
    await this.inFlight;
    if (this.pending > 0) await this.flush();
  }
}

export class FileCallCounter implements CallCounter {
  private readonly file: string;
  private readonly log: Logger;
  private count: number;
  private written: number;
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> = Promise.resolve();

  private constructor(file: string, count: number, log: Logger) {
    this.file = file;
    this.count = count;
    this.written = count;
    this.log = log;
  }

  static async open(dataDir: string, log: Logger): Promise<FileCallCounter> {
    const file = path.join(dataDir, CALLS_FILE);
    await fs.mkdir(dataDir, { recursive: true });
    let count = 0;
    try {
      const calls = (JSON.parse(await fs.readFile(file, 'utf8')) as { calls?: unknown }).calls;
      if (typeof calls !== 'number' || !Number.isSafeInteger(calls) || calls < 0) throw new Error('"calls" is not a count');
      count = calls;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') log.error('media call counter file unreadable; counting from 0', { file, err: (err as Error).message });
    }
    return new FileCallCounter(file, count, log);
  }

  increment(): void {
    this.count += 1;
    this.timer ??= setTimeout(() => void this.write(), WRITE_DELAY_MS);
  }

  async total(): Promise<number> {
    return this.count;
  }

  private write(): Promise<void> {
    this.timer = undefined;
    this.writing = this.writing.then(async () => {
      const count = this.count;
      if (count === this.written) return;
      const tmp = `${this.file}.${process.pid}.tmp`;
      try {
        await fs.writeFile(tmp, `${JSON.stringify({ calls: count })}\n`);
        await fs.rename(tmp, this.file);
        this.written = count;
      } catch (err) {
        this.log.warn('media call counter not saved', { file: this.file, err: (err as Error).message });
      }
    });
    return this.writing;
  }

  async close(): Promise<void> {
    clearTimeout(this.timer);
    await this.write();
  }
}

export async function createCallCounter(redis: RedisClientType | null, dataDir: string, log: Logger): Promise<CallCounter> {
  return redis ? new RedisCallCounter(redis, log) : FileCallCounter.open(dataDir, log);
}
