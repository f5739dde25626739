// The audit line's query hash: an HMAC-SHA-256 under a secret, so that a log reader cannot
// recover a phone number or a name by hashing every candidate (a plain SHA-256 of a phone
// number falls to brute force in minutes). The secret is SEARCH_AUDIT_SECRET, else one made at
// the first start and kept where the keys are (Redis, or DATA_DIR), so hashes stay comparable
// across restarts and instances.
import { createHmac, randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { RedisClientType } from '@redis/client';

export const AUDIT_SECRET_FILE = 'search-audit-secret';
export const AUDIT_SECRET_REDIS_KEY = 'skinfarm:search:audit-secret';

export interface AuditSecret { secret: string; origin: 'config' | 'redis' | 'file' }

/** Keeps the secret made first: a concurrent start creates its own and then reads the winner's. */
async function fileSecret(dataDir: string): Promise<string> {
  const file = path.join(dataDir, AUDIT_SECRET_FILE);
  await fs.mkdir(dataDir, { recursive: true });
  const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  await fs.writeFile(tmp, randomBytes(32).toString('hex'), { mode: 0o600 });
  try {
    // link() fails when the file exists, so the secret is written once and never half-read.
    await fs.link(tmp, file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  } finally {
    await fs.rm(tmp, { force: true });
  }
  const secret = (await fs.readFile(file, 'utf8')).trim();
  if (secret.length < 32) throw new Error(`${file} holds no audit secret (remove it to have one made)`);
  return secret;
}

export async function loadAuditSecret(configured: string | null, dataDir: string, redis: RedisClientType | null): Promise<AuditSecret> {
  if (configured) return { secret: configured, origin: 'config' };
  if (redis) {
    await redis.set(AUDIT_SECRET_REDIS_KEY, randomBytes(32).toString('hex'), { NX: true });
    return { secret: (await redis.get(AUDIT_SECRET_REDIS_KEY))!, origin: 'redis' };
  }
  return { secret: await fileSecret(dataDir), origin: 'file' };
}

export function queryHash(secret: string, value: string): string {
  return createHmac('sha256', secret).update(value).digest('hex');
}
