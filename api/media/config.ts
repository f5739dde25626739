// Media settings (config.media): every MEDIA_* variable, validated in loadConfig's one pass;
// every problem names the variable and what it accepts.
import path from 'node:path';
import { httpUrl, integer, quota, text, type Kind, type Settings } from '../settings.ts';
import { PASSWORD_HASH_FORMAT, parsePasswordHash } from './password.ts';

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
  /**
   * MEDIA_PASSWORD_FAILURES_PER_HOUR: wrong passwords from all clients together an hour; past it a
   * network (IPv4 /24, IPv6 /48) with more than 3 wrong passwords this hour waits for the next hour.
   */
  passwordFailuresPerHour: number;
  /** MEDIA_STICKY_SECONDS: how long a client's range requests on a random address keep its file; 0 = never. */
  stickySeconds: number;
  /** MEDIA_VARIANT_BUDGET: megapixels (read plus written) of uncached variants a minute per IP. */
  variantBudget: number;
  /** MEDIA_VARIANT_CACHE_MB: bytes of made variants kept in memory. */
  variantCacheMb: number;
  /** MEDIA_VARIANT_CONCURRENCY: variants made at once (fair between clients, one each at a time). */
  variantConcurrency: number;
}


const passwordHash: Kind<string> = {
  rule: `look like ${PASSWORD_HASH_FORMAT}`,
  parse: (value) => {
    try {
      parsePasswordHash(value);
      return value;
    } catch {
      return undefined;
    }
  },
  secret: true,
};

/**
 * Reads every MEDIA_* variable; problems go into the shared list, so loadConfig reports them with
 * all the others before anything starts (exit 78).
 */
export function readMediaSettings(s: Settings, shared: { dataDir: string; secret: string | null }): MediaSettings {
  return {
    dir: path.resolve(s.read('MEDIA_DIR', './media', text, 'library root; a small sample library is generated when it does not exist ([Media service](media.md))')),
    dataDir: path.resolve(shared.dataDir),
    password: s.optional('MEDIA_PASSWORD', text, 'password for private categories (none: they cannot be opened)'),
    passwordHash: s.optional('MEDIA_PASSWORD_HASH', passwordHash, 'scrypt hash instead of the plain password (`npm run media-index -- hash-password` makes one)'),
    tokenTtlSeconds: s.read('MEDIA_TOKEN_TTL_SECONDS', 86_400, integer(60, 365 * 86_400), 'lifetime of `/login` tokens'),
    secret: shared.secret,
    publicUrl: s.optional('MEDIA_PUBLIC_URL', httpUrl, { default: 'the request\'s origin', meaning: 'base of the addresses in JSON answers, redirects and the landing page' }),
    rateLimit: s.read('MEDIA_RATE_LIMIT', 600, quota, 'requests a minute per IP on `/`, `/categories`, `/login`'),
    fileRateLimit: s.read('MEDIA_FILE_RATE_LIMIT', 2400, quota, 'requests a minute per IP on `/f/…` (video players send many range requests)'),
    rescanSeconds: s.read('MEDIA_RESCAN_SECONDS', 300, integer(0, 86_400), 'full rescan period behind the watcher (0 = off)'),
    stickySeconds: s.read('MEDIA_STICKY_SECONDS', 60, integer(0, 3600), 'how long (from its last use) a client\'s range requests on a random address keep its file (0 = off)'),
    variantBudget: s.read('MEDIA_VARIANT_BUDGET', 600, quota, 'megapixels a minute per IP of resized/converted variants not found cached (each costs the pixels read plus those written; a 4000x3000 photo to 800 px costs 13); cached ones cost nothing ([variants](media.md#resized-and-converted-variants))'),
    variantCacheMb: s.read('MEDIA_VARIANT_CACHE_MB', 256, integer(0, 65_536), 'memory kept for made variants, least recently used dropped first (0 = none kept)'),
    variantConcurrency: s.read('MEDIA_VARIANT_CONCURRENCY', 4, integer(1, 256), 'variants made at once, one per client at a time, in turn between clients; 64 more may wait, past that 503'),
    passwordFailuresPerHour: s.read('MEDIA_PASSWORD_FAILURES_PER_HOUR', 100, quota, 'wrong passwords from all clients together an hour; past it a network (IPv4 /24, IPv6 /48) with more than 3 wrong passwords this hour is refused until the hour ends, other networks (the owner\'s new browser) are still checked ([security](security.md))'),
  };
}
