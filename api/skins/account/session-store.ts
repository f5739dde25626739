// Where login sessions live (koa-session's external store, see session.ts): their own store,
// never the cache, so cache churn cannot log anyone out. In memory: a bounded map of its own; with
// Redis: plain keys with a TTL (shared by instances, no in-process copy, so a logout counts
// everywhere at once). Keys are SHA-256 of the session id: a dump of the store does not hand out
// valid cookies.
import { createHash } from 'node:crypto';
import type { RedisClientType } from '@redis/client';
import { ApiError } from '../../../shared/errors.ts';
import type { Logger } from '../../../shared/log.ts';
import { LruMap } from '../../../shared/lru-map.ts';
import type { TokenSet } from './external-account.ts';

export interface SessionData {
  user: { id: number; name: string };
  auth: TokenSet;
}

/** As stored: koa-session adds the session's end (`_expire`, set at login, never moved). */
export type StoredSession = SessionData & { _expire: number };

/** koa-session's store (get, set, destroy) and the refresh's compare-and-set. */
export interface SessionStore {
  get(id: string): Promise<StoredSession | undefined>;
  set(id: string, data: StoredSession, ttlMs: number): Promise<void>;
  destroy(id: string): Promise<void>;
  /**
   * Compare-and-set: writes `data` only while the stored session still holds the refresh token
   * `from`, so a refresh never overwrites the tokens of a later one; false when it did not write.
   */
  replaceAuth(id: string, from: string, data: StoredSession, ttlMs: number): Promise<boolean>;
}

/** The store key of a session id. */
export const keyOf = (id: string) => createHash('sha256').update(id).digest('base64url');

/** Only logins create sessions (each one a round trip through the provider); the bound is a backstop. */
const MEMORY_MAX_SESSIONS = 100_000;

export class MemorySessionStore implements SessionStore {
  /** An expired session is dropped when read; past the bound the least recently used go. */
  private readonly entries = new LruMap<{ data: StoredSession; expiresAt: number }>(MEMORY_MAX_SESSIONS);

  async get(id: string): Promise<StoredSession | undefined> {
    const key = keyOf(id);
    const entry = this.entries.get(key);
    if (entry && entry.expiresAt > Date.now()) return entry.data;
    this.entries.delete(key);
    return undefined;
  }

  async set(id: string, data: StoredSession, ttlMs: number): Promise<void> {
    this.entries.set(keyOf(id), { data, expiresAt: Date.now() + ttlMs });
  }

  async destroy(id: string): Promise<void> {
    this.entries.delete(keyOf(id));
  }

  async replaceAuth(id: string, from: string, data: StoredSession, ttlMs: number): Promise<boolean> {
    // No await between the compare and the write.
    const entry = this.entries.get(keyOf(id));
    if (!entry || entry.expiresAt <= Date.now() || entry.data.auth.refreshToken !== from) return false;
    this.entries.set(keyOf(id), { data, expiresAt: Date.now() + ttlMs });
    return true;
  }
}

// The compare and the write in one step: nothing can store tokens between them.
const REPLACE_AUTH = `local text = redis.call('GET', KEYS[1])
if not text or cjson.decode(text).auth.refreshToken ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
return 1`;

export class RedisSessionStore implements SessionStore {
  private readonly redis: RedisClientType;
  private readonly log: Logger;

  constructor(redis: RedisClientType, log: Logger) {
    this.redis = redis;
    this.log = log;
  }

  /** Redis down reads as "no session" (the user looks logged out until it is back, nothing is lost). */
  async get(id: string): Promise<StoredSession | undefined> {
    try {
      const text = await this.redis.get(`skinfarm:session:${keyOf(id)}`);
      return text ? (JSON.parse(text) as StoredSession) : undefined;
    } catch (err) {
      this.unavailable(err);
      return undefined;
    }
  }

  async set(id: string, data: StoredSession, ttlMs: number): Promise<void> {
    try {
      await this.redis.set(`skinfarm:session:${keyOf(id)}`, JSON.stringify(data), { expiration: { type: 'PX', value: Math.max(1, Math.round(ttlMs)) } });
    } catch (err) {
      throw this.unavailable(err);
    }
  }

  async destroy(id: string): Promise<void> {
    try {
      await this.redis.del(`skinfarm:session:${keyOf(id)}`);
    } catch (err) {
      throw this.unavailable(err);
    }
  }

  async replaceAuth(id: string, from: string, data: StoredSession, ttlMs: number): Promise<boolean> {
    try {
      const written = await this.redis.eval(REPLACE_AUTH, {
        keys: [`skinfarm:session:${keyOf(id)}`],
        arguments: [from, JSON.stringify(data), String(Math.max(1, Math.round(ttlMs)))],
      });
      return written === 1;
    } catch (err) {
      throw this.unavailable(err);
    }
  }

  private unavailable(err: unknown): ApiError {
    this.log.warn('session store unavailable', { err: (err as Error).message });
    return new ApiError('overloaded', { detail: '会话存储暂时不可用', retryAfter: 5 });
  }
}
