// Where keys live: Redis when the process has it (shared by every instance), else a JSON file in
// DATA_DIR that the CLI and a running server can both use.
import path from 'node:path';
import type { RedisClientType } from '@redis/client';
import { FileKeyStore } from './file-store.ts';
import type { ConsumeResult, CreateKeyInput, KeyPatch, KeyRecord } from './model.ts';
import { RedisKeyStore } from './redis-store.ts';

export interface KeyStore {
  readonly backend: 'file' | 'redis';
  create(input: CreateKeyInput): Promise<{ key: string; record: KeyRecord }>;
  list(): Promise<KeyRecord[]>;
  /** The updated record; null when there is no key with that id. */
  update(id: string, patch: KeyPatch): Promise<KeyRecord | null>;
  delete(id: string): Promise<boolean>;
  /** The state of a presented key, nothing counted (a request is checked before it is read). */
  peek(key: string): Promise<ConsumeResult>;
  /**
   * Checks a presented key and, when it is active with `count` uses left, counts them, atomically;
   * with fewer left it answers `exhausted` and counts nothing (a bulk request runs whole or not).
   */
  consume(key: string, count?: number): Promise<ConsumeResult>;
  /** Writes what is still held in memory (the file store's uses of keys without a limit). */
  close?(): Promise<void>;
}

export const KEY_FILE = 'search-keys.json';

export function openKeyStore(dataDir: string, redis: RedisClientType | null): KeyStore {
  return redis ? new RedisKeyStore(redis) : new FileKeyStore(path.join(dataDir, KEY_FILE));
}
