// Media settings: config.media from the shared configuration plus the few variables only this
// service reads, validated together; every problem names the variable and what it accepts.
import path from 'node:path';
import { ConfigError, type Config } from '../config.ts';
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
  /** MEDIA_STICKY_SECONDS: how long a client's range requests on a random address keep its file; 0 = never. */
  stickySeconds: number;
}

type Env = Record<string, string | undefined>;

export function loadMediaSettings(config: Config, env: Env = process.env): MediaSettings {
  const problems: string[] = [];
  const int = (name: string, fallback: number, min: number, max: number): number => {
    const raw = env[name]?.trim();
    if (!raw) return fallback;
    const value = Number(raw);
    if (Number.isInteger(value) && value >= min && value <= max) return value;
    problems.push(`${name} must be an integer from ${min} to ${max} (got "${raw}")`);
    return fallback;
  };
  let publicUrl = env.MEDIA_PUBLIC_URL?.trim().replace(/\/+$/, '') || null;
  if (publicUrl) {
    try {
      if (!/^https?:$/.test(new URL(publicUrl).protocol)) throw new Error('scheme');
    } catch {
      problems.push(`MEDIA_PUBLIC_URL must be an absolute http(s) URL (got "${publicUrl}")`);
      publicUrl = null;
    }
  }
  if (config.media.passwordHash) {
    try {
      parsePasswordHash(config.media.passwordHash);
    } catch (err) {
      problems.push((err as Error).message);
    }
  }
  const settings: MediaSettings = {
    dir: path.resolve(config.media.dir),
    dataDir: path.resolve(config.dataDir),
    password: config.media.password,
    passwordHash: config.media.passwordHash,
    tokenTtlSeconds: config.media.tokenTtlSeconds,
    secret: config.sessionSecret,
    publicUrl,
    rateLimit: int('MEDIA_RATE_LIMIT', 600, 1, 1_000_000),
    fileRateLimit: int('MEDIA_FILE_RATE_LIMIT', 2400, 1, 1_000_000),
    rescanSeconds: int('MEDIA_RESCAN_SECONDS', 300, 0, 86_400),
    stickySeconds: int('MEDIA_STICKY_SECONDS', 60, 0, 3600),
  };
  if (problems.length > 0) throw new ConfigError(problems);
  return settings;
}
