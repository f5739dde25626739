// Across instances sharing Redis, one cold render per key: the first instance takes a short lock
// and renders; the others wait for its result in the shared cache. The lock expires by itself,
// so a holder that dies never blocks anyone for longer than its lifetime.
import { randomUUID } from 'node:crypto';
import type { RedisClientType } from '@redis/client';

const LOCK_MS = 5000;
const POLL_MS = 20;

// Deletes the lock only if it is still ours (it may have expired and been taken by another).
const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`;

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
}
