// A private redis-server for tests that need isolation (scripts/launch.ts starts it), and the
// reason when the binary is missing, so such tests skip instead of failing on a machine without it.
import { redisServerMissing } from '../../scripts/launch.ts';

export { freePort, startRedis, type RedisServer as TestRedis } from '../../scripts/launch.ts';

export function redisUnavailableReason(): string | null {
  const missing = redisServerMissing();
  return missing && `${missing}; Redis cases skipped`;
}

/**
 * For tests that count exactly across instances sharing one Redis: a Redis reply later than the
 * 200 ms default deadline (a busy CI host) sends an instance to its in-process counts for a
 * second, which is right for users but makes an exact shared total a matter of the machine's
 * speed. The stall path itself is tested with the default (faults-redis).
 */
export const SHARED_COUNT_ENV = { REDIS_COMMAND_TIMEOUT_MS: '10000' };
