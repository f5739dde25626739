// Cross-instance locks on Redis. `once`: one cold render per key: the first instance takes a
// short lock and renders; the others wait for its result in the shared cache, and render
// themselves when Redis is away (a second render costs time, never correctness). `exclusive`:
// for work that must never run twice at once (a refresh-token rotation): the lease covers the
// longest the work may take, and without the lock it does not run at all.
import { randomUUID } from 'node:crypto';
import type { RedisClientType } from '@redis/client';
import { ApiError } from '../../shared/errors.ts';

const LOCK_MS = 5000;
const POLL_MS = 20;
/** Retry-After (s) when `exclusive` cannot run: about the time a Redis reconnect takes. */
const RETRY_AFTER_S = 5;

// Deletes the lock only if it is still ours (it may have expired and been taken by another).
const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`;

const unavailable = (cause?: unknown) =>
  new ApiError('overloaded', { detail: { zh: '共享存储暂时不可用', en: 'the shared store is unavailable' }, retryAfter: RETRY_AFTER_S, cause });

export class RenderLock {
  private readonly redis: RedisClientType | null;

  constructor(redis: RedisClientType | null) {
    this.redis = redis;
  }

  /**
   * Runs `render` under the lock, or, when another instance holds it, waits for `lookup` to find
   * that instance's result; renders itself when the lock expires or Redis is unavailable.
   */
  async once<T>(key: string, render: () => Promise<T>, lookup: () => Promise<T | undefined>): Promise<T> {
    if (!this.redis?.isReady) return render();
    const lockKey = `skinfarm:lock:render:${key}`;
    const token = randomUUID();
    let taken: string | null;
    try {
      taken = await this.redis.set(lockKey, token, { condition: 'NX', expiration: { type: 'PX', value: LOCK_MS } });
    } catch {
      return render();
    }
    if (taken) {
      try {
        return await render();
      } finally {
        await this.redis.eval(RELEASE, { keys: [lockKey], arguments: [token] }).catch(() => {});
      }
    }
    const deadline = Date.now() + LOCK_MS;
    while (Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
      const found = await lookup();
      if (found !== undefined) return found;
      const held = await this.redis.exists(lockKey).catch(() => 0);
      if (!held) break;
    }
    return (await lookup()) ?? render();
  }

  /**
   * Runs `work` holding the lock for `leaseMs` (at least the longest `work` can take), or returns
   * what `lookup` finds once another holder is done; when a holder lets go without a result, tries
   * to take the lock again. Redis unavailable or failing, or the lock still held after a whole
   * lease of waiting: `overloaded`, and `work` does not run. Without Redis (one instance) `work`
   * runs at once: the caller keeps it to one at a time in process.
   */
  async exclusive<T>(key: string, leaseMs: number, work: () => Promise<T>, lookup: () => Promise<T | undefined>): Promise<T> {
    const redis = this.redis;
    if (!redis) return work();
    // The key `once` would use, so instances of the previous release still exclude this one.
    const lockKey = `skinfarm:lock:render:${key}`;
    const token = randomUUID();
    // A holder that took the lock just before us lets go within one lease.
    const deadline = Date.now() + leaseMs;
    const redisCall = async <R>(call: () => Promise<R>): Promise<R> => {
      if (!redis.isReady) throw unavailable();
      try {
        return await call();
      } catch (error) {
        throw unavailable(error);
      }
    };
    for (;;) {
      const taken = await redisCall(() => redis.set(lockKey, token, { condition: 'NX', expiration: { type: 'PX', value: leaseMs } }));
      if (taken) {
        try {
          return await work();
        } finally {
          await redis.eval(RELEASE, { keys: [lockKey], arguments: [token] }).catch(() => {});
        }
      }
      for (;;) {
        if (Date.now() >= deadline) {
          throw new ApiError('overloaded', { detail: { zh: '同一操作仍在另一实例上进行', en: 'the same operation is still running on another instance' }, retryAfter: RETRY_AFTER_S });
        }
        await new Promise((resolve) => setTimeout(resolve, POLL_MS));
        const found = await lookup();
        if (found !== undefined) return found;
        if (!await redisCall(() => redis.exists(lockKey))) break;
      }
    }
  }
}
