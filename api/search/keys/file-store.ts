// Keys in one JSON file. Every change runs under the lock file, on the file's latest content
// (reloaded when another process changed it), and returns only after it is on disk. Operations
// that queue up while a write is in flight are applied together and written once (group commit),
// so 50 parallel uses of a key with a request limit cost a few fsyncs, not 50, and count exactly.
// A key without a limit (every plan's) is checked on the latest content without the lock, and
// its uses are counted in memory and added to the file within a second: a search then waits
// for no fsync, and a crash loses at most that long's counts of keys whose count limits nothing.
import { statSync } from 'node:fs';
import fs from 'node:fs/promises';
import { withFileLock, writeAtomic } from './durable-file.ts';
import { applyPatch, consumeRecord, generateKey, hashKey, keyState, newRecord, type ConsumeResult, type CreateKeyInput, type KeyPatch, type KeyRecord } from './model.ts';
import type { KeyStore } from './store.ts';

interface FileContent { version: 1; keys: KeyRecord[] }

// A linear scan: the file store is for a handful of operator-made keys.
const find = (keys: Map<string, KeyRecord>, hash: string) => [...keys.values()].find((r) => r.hash === hash);

/** One queued operation: reads or changes the records and says whether it changed them. */
type Op<T> = (keys: Map<string, KeyRecord>) => { result: T; changed: boolean };

interface Queued { op: Op<unknown>; resolve(value: unknown): void; reject(error: unknown): void }

/** How long uses of keys without a request limit may wait in memory before they are written. */
const USE_FLUSH_MS = 1000;

export class FileKeyStore implements KeyStore {
  readonly backend = 'file' as const;
  readonly file: string;
  private readonly lockFile: string;
  private readonly useFlushMs: number;
  private keys = new Map<string, KeyRecord>();
  /** Identity of the file content `keys` was read from; '' forces a reload. */
  private stamp = '';
  /**
   * What lock-free reads see: the file's content as of `stamp`, a copy the batches never touch
   * (a batch may be waiting for the lock while another process writes).
   */
  private view: { stamp: string; keys: Map<string, KeyRecord> } = { stamp: '', keys: new Map() };
  private queue: Queued[] = [];
  private flushing = false;
  /** Uses of keys without a limit not yet written, by key id. */
  private uses = new Map<string, number>();
  private usesTimer: NodeJS.Timeout | null = null;

  /** `useFlushMs`: how long uses of keys without a limit wait in memory (a test holds them longer). */
  constructor(file: string, useFlushMs = USE_FLUSH_MS) {
    this.file = file;
    this.useFlushMs = useFlushMs;
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
    return this.run((keys) => ({ result: [...keys.values()].map((r) => ({ ...r, used: r.used + (this.uses.get(r.id) ?? 0) })), changed: false }));
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

  async peek(key: string): Promise<ConsumeResult> {
    const record = await this.latest(hashKey(key));
    // With this instance's uses not yet written, as list() counts them.
    return record ? { state: keyState(record), record: { ...record, used: record.used + (this.uses.get(record.id) ?? 0) } } as ConsumeResult : { state: 'unknown' };
  }

  async consume(key: string, count = 1): Promise<ConsumeResult> {
    const hash = hashKey(key);
    const known = await this.latest(hash);
    if (known && known.request_limit === null) {
      const state = keyState(known);
      if (state !== 'active') return { state, record: { ...known } } as ConsumeResult;
      const pending = (this.uses.get(known.id) ?? 0) + count;
      this.uses.set(known.id, pending);
      this.writeUsesSoon();
      return { state, record: { ...known, used: known.used + pending } };
    }
    return this.run((keys) => {
      const record = find(keys, hash);
      if (!record) return { result: { state: 'unknown' }, changed: false };
      const state = consumeRecord(record, new Date(), count);
      return { result: { state, record: { ...record } } as ConsumeResult, changed: state === 'active' };
    });
  }

  /** Writes the uses counted in memory now (the service calls it when it stops); rejects when they could not be. */
  async close(): Promise<void> {
    await this.writeUses();
    // A failed write set itself a retry: a closed store retries nothing.
    this.cancelWriteUses();
    if (this.uses.size) throw new Error(`uses of ${this.uses.size} key(s) could not be written to ${this.file}`);
  }

  /**
   * The record of a key hash on the file's latest content, read without the lock: the file is
   * only ever replaced whole (writeAtomic), so it is one stat away.
   */
  private async latest(hash: string): Promise<KeyRecord | undefined> {
    const stamp = this.fileStamp();
    if (stamp !== this.view.stamp) this.view = { stamp, keys: await this.read(stamp) };
    return find(this.view.keys, hash);
  }

  /** Adds the counted uses to the file's latest content; on failure they are counted again later. */
  private async writeUses(): Promise<void> {
    this.cancelWriteUses();
    if (this.uses.size === 0) return;
    let taken = new Map<string, number>();
    try {
      await this.run((keys) => {
        // Taken when the batch applies, so uses counted meanwhile wait for the next write.
        [taken, this.uses] = [this.uses, new Map()];
        for (const [id, n] of taken) {
          const record = keys.get(id);
          if (record) record.used += n;
        }
        return { result: null, changed: true };
      });
    } catch {
      for (const [id, n] of taken) this.uses.set(id, (this.uses.get(id) ?? 0) + n);
      this.writeUsesSoon();
    }
  }

  private writeUsesSoon(): void {
    this.usesTimer ??= setTimeout(() => void this.writeUses(), this.useFlushMs).unref();
  }

  private cancelWriteUses(): void {
    if (this.usesTimer) clearTimeout(this.usesTimer);
    this.usesTimer = null;
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

  /**
   * Identity of the file's content: inode, size and time ('absent' when there is no file). A
   * synchronous stat: every search asks twice, and a stat of a local file is a few µs while the
   * promise's trip through libuv's threads cost ~4 % of a search's CPU.
   */
  private fileStamp(): string {
    const s = statSync(this.file, { bigint: true, throwIfNoEntry: false });
    return s ? `${s.ino}:${s.size}:${s.mtimeNs}` : 'absent';
  }

  private async read(stamp: string): Promise<Map<string, KeyRecord>> {
    if (stamp === 'absent') return new Map();
    // A file that does not parse is never overwritten: failing loudly beats losing every key.
    const content = JSON.parse(await fs.readFile(this.file, 'utf8')) as FileContent;
    if (content?.version !== 1 || !Array.isArray(content.keys)) throw new Error(`${this.file} is not a search key store`);
    return new Map(content.keys.map((r) => [r.id, r]));
  }

  private async reloadIfChanged(): Promise<void> {
    const stamp = this.fileStamp();
    if (stamp === this.stamp) return;
    this.keys = await this.read(stamp);
    this.stamp = stamp;
  }

  private async persist(): Promise<void> {
    const content: FileContent = { version: 1, keys: [...this.keys.values()] };
    await writeAtomic(this.file, `${JSON.stringify(content, null, 2)}\n`);
    this.stamp = this.fileStamp();
    this.view = { stamp: this.stamp, keys: new Map([...this.keys].map(([id, r]) => [id, { ...r }])) };
  }
}
