// Media settings (config.media): every MEDIA_* variable, validated in loadConfig's one pass;
// every problem names the variable and what it accepts.
import path from 'node:path';
import { parsePasswordHash } from './password.ts';

export interface MediaSettings {
  /** Absolute MEDIA_DIR. */
  dir: string;
  /** Absolute DATA_DIR (call counter file when there is no Redis). */
  dataDir: string;
  password: string | null;
  passwordHash: string | null;
  tokenTtlSeconds: number;
  /** SESSION_SECRET; null means a random key per start (tokens end at restart). */
  secret: string | null;
  /** MEDIA_PUBLIC_URL: base of the addresses written into answers; null = the request's origin. */
  publicUrl: string | null;
  /** MEDIA_RATE_LIMIT: requests a minute per IP on /, /login and /categories. */
  rateLimit: number;
  /** MEDIA_FILE_RATE_LIMIT: requests a minute per IP on permanent addresses (video seeking makes many). */
  fileRateLimit: number;
  /** MEDIA_RESCAN_SECONDS: full rescan period behind the watcher; 0 turns it off. */
  rescanSeconds: number;
  /** MEDIA_PASSWORD_FAILURES_PER_HOUR: wrong passwords from all clients together an hour, then every new check waits for the next hour. */
  passwordFailuresPerHour: number;
  /** MEDIA_STICKY_SECONDS: how long a client's range requests on a random address keep its file; 0 = never. */
  stickySeconds: number;
}

type Env = Record<string, string | undefined>;

/**
 * Reads every MEDIA_* variable; problems go into the shared list, so loadConfig reports them with
 * all the others before anything starts (exit 78).
 */
export function readMediaSettings(env: Env, shared: { dataDir: string; secret: string | null }, problems: string[]): MediaSettings {
  const int = (name: string, fallback: number, min: number, max: number): number => {
    const raw = env[name]?.trim();
    if (!raw) return fallback;
    const value = Number(raw);
    if (/^\d+$/.test(raw) && value >= min && value <= max) return value;
    problems.push(`${name} must be an integer from ${min} to ${max} (got "${raw}")`);
    return fallback;
  };
  const optional = (name: string): string | null => env[name]?.trim() || null;
  let publicUrl = optional('MEDIA_PUBLIC_URL')?.replace(/\/+$/, '') ?? null;
  if (publicUrl) {
    try {
      if (!/^https?:$/.test(new URL(publicUrl).protocol)) throw new Error('scheme');
    } catch {
      problems.push(`MEDIA_PUBLIC_URL must be an absolute http(s) URL (got "${publicUrl}")`);
      publicUrl = null;
    }
  }
  const passwordHash = optional('MEDIA_PASSWORD_HASH');
  if (passwordHash) {
    try {
      parsePasswordHash(passwordHash);
    } catch (err) {
      problems.push((err as Error).message);
    }
  }
  return {
    dir: path.resolve(optional('MEDIA_DIR') ?? './media'),
    dataDir: path.resolve(shared.dataDir),
    password: optional('MEDIA_PASSWORD'),
    passwordHash,
    tokenTtlSeconds: int('MEDIA_TOKEN_TTL_SECONDS', 86_400, 60, 365 * 86_400),
    secret: shared.secret,
    publicUrl,
    rateLimit: int('MEDIA_RATE_LIMIT', 600, 1, 1_000_000),
    fileRateLimit: int('MEDIA_FILE_RATE_LIMIT', 2400, 1, 1_000_000),
    rescanSeconds: int('MEDIA_RESCAN_SECONDS', 300, 0, 86_400),
    stickySeconds: int('MEDIA_STICKY_SECONDS', 60, 0, 3600),
    passwordFailuresPerHour: int('MEDIA_PASSWORD_FAILURES_PER_HOUR', 100, 1, 1_000_000),
  };
}
