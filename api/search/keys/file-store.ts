// Keys in one JSON file. Every operation runs under the lock file, on the file's latest content
// (reloaded when another process changed it), and returns only after its change is on disk.
// Operations that queue up while a write is in flight are applied together and written once
// (group commit), so 50 parallel searches cost a few fsyncs, not 50, and count exactly.
import fs from 'node:fs/promises';
import { withFileLock, writeAtomic } from './durable-file.ts';
import { applyPatch, consumeRecord, generateKey, hashKey, keyState, newRecord, type ConsumeResult, type CreateKeyInput, type KeyPatch, type KeyRecord } from './model.ts';
import type { KeyStore } from './store.ts';

interface FileContent { version: 1; keys: KeyRecord[] }

/** One queued operation: reads or changes the records and says whether it changed them. */
type Op<T> = (keys: Map<string, KeyRecord>) => { result: T; changed: boolean };

interface Queued { op: Op<unknown>; resolve(value: unknown): void; reject(error: unknown): void }

export class FileKeyStore implements KeyStore {
  readonly backend = 'file' as const;
  readonly file: string;
  private readonly lockFile: string;
  private keys = new Map<string, KeyRecord>();
  /** Identity of the file content `keys` was read from; '' forces a reload. */
  private stamp = '';
  private queue: Queued[] = [];
  private flushing = false;

  constructor(file: string) {
    this.file = file;
    this.lockFile = `${file}.lock`;
  }

  create(input: CreateKeyInput): Promise<{ key: string; record: KeyRecord }> {
    const key = generateKey();
    const record = newRecord(input, key);
    return this.run((keys) => {
      keys.set(record.id, record);
      return { result: { key, record: { ...record } }, changed: true };
    });
  }

  list(): Promise<KeyRecord[]> {
    return this.run((keys) => ({ result: [...keys.values()].map((r) => ({ ...r })), changed: false }));
  }

  update(id: string, patch: KeyPatch): Promise<KeyRecord | null> {
    return this.run((keys) => {
      const record = keys.get(id);
      if (!record) return { result: null, changed: false };
      applyPatch(record, patch);
      return { result: { ...record }, changed: true };
    });
  }

  delete(id: string): Promise<boolean> {
    return this.run((keys) => {
      const existed = keys.delete(id);
      return { result: existed, changed: existed };
    });
  }

  peek(key: string): Promise<ConsumeResult> {
    return this.lookUp(key, false);
  }

  consume(key: string): Promise<ConsumeResult> {
    return this.lookUp(key, true);
  }

  private lookUp(key: string, count: boolean): Promise<ConsumeResult> {
    const hash = hashKey(key);
    return this.run((keys) => {
      // A linear scan: the file store is for a handful of operator-made keys.
      const record = [...keys.values()].find((r) => r.hash === hash);
      if (!record) return { result: { state: 'unknown' }, changed: false };
      const state = count ? consumeRecord(record) : keyState(record);
      return { result: { state, record: { ...record } } as ConsumeResult, changed: count && state === 'active' };
    });
  }

  private run<T>(op: Op<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ op, resolve: resolve as (value: unknown) => void, reject });
      if (!this.flushing) void this.flush();
    });
  }

  private async flush(): Promise<void> {
    this.flushing = true;
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0);
      try {
        const outcomes = await withFileLock(this.lockFile, () => this.applyBatch(batch));
        batch.forEach((item, i) => {
          const outcome = outcomes[i];
          if (outcome.ok) item.resolve(outcome.value);
          else item.reject(outcome.error);
        });
      } catch (error) {
        // Nothing of this batch reached the disk: forget the in-memory changes and tell everyone.
        this.stamp = '';
        for (const item of batch) item.reject(error);
      }
    }
    this.flushing = false;
  }

  private async applyBatch(batch: Queued[]): Promise<Array<{ ok: true; value: unknown } | { ok: false; error: unknown }>> {
    await this.reloadIfChanged();
    let changed = false;
    const outcomes = batch.map((item) => {
      try {
        const { result, changed: c } = item.op(this.keys);
        changed ||= c;
        return { ok: true as const, value: result };
      } catch (error) {
        return { ok: false as const, error };
      }
    });
    if (changed) await this.persist();
    return outcomes;
  }

  private async fileStamp(): Promise<string | null> {
    try {
      const s = await fs.stat(this.file, { bigint: true });
      return `${s.ino}:${s.size}:${s.mtimeNs}`;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
  }

  private async reloadIfChanged(): Promise<void> {
    const stamp = await this.fileStamp();
    if (stamp === null) {
      this.keys = new Map();
      this.stamp = 'absent';
      return;
    }
    if (stamp === this.stamp) return;
    // A file that does not parse is never overwritten: failing loudly beats losing every key.
    const content = JSON.parse(await fs.readFile(this.file, 'utf8')) as FileContent;
    if (content?.version !== 1 || !Array.isArray(content.keys)) throw new Error(`${this.file} is not a search key store`);
    this.keys = new Map(content.keys.map((r) => [r.id, r]));
    this.stamp = stamp;
  }

  private async persist(): Promise<void> {
    const content: FileContent = { version: 1, keys: [...this.keys.values()] };
    await writeAtomic(this.file, `${JSON.stringify(content, null, 2)}\n`);
    this.stamp = (await this.fileStamp()) ?? '';
  }
}
