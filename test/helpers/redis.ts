// A private redis-server for tests that need isolation (scripts/launch.ts starts it), and the
// reason when the binary is missing, so such tests skip instead of failing on a machine without it.
import { redisServerMissing } from '../../scripts/launch.ts';

export { freePort, startRedis, type RedisServer as TestRedis } from '../../scripts/launch.ts';

export function redisUnavailableReason(): string | null {
  const missing = redisServerMissing();
  return missing && `${missing}; Redis cases skipped`;
}
