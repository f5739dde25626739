// The media password: MEDIA_PASSWORD in plain text or MEDIA_PASSWORD_HASH, a scrypt hash in
// the form  scrypt:<N>:<r>:<p>:<salt base64url>:<key base64url>  (make one with
// `node scripts/media-index.ts hash-password`). Comparisons are constant-time.
import { createHash, randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';

interface ScryptHash { N: number; r: number; p: number; salt: Buffer; key: Buffer }

const DEFAULT_SCRYPT = { N: 16_384, r: 8, p: 1 } as const;

function scryptKey(password: string, salt: Buffer, length: number, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(password, salt, length, { ...options, maxmem: 256 * options.N! * options.r! + 1024 * 1024 }, (err, key) => (err ? reject(err) : resolve(key)));
  });
}

export const PASSWORD_HASH_FORMAT = 'scrypt:<N power of 2>:<r>:<p>:<salt base64url, 8+ bytes>:<key base64url, 16+ bytes>';

/** Parses MEDIA_PASSWORD_HASH; the thrown message says what the format is. */
export function parsePasswordHash(text: string): ScryptHash {
  const parts = text.split(':');
  const [scheme, n, r, p, salt, key] = parts;
  const int = (s: string | undefined) => (s && /^\d+$/.test(s) ? Number(s) : NaN);
  const hash = { N: int(n), r: int(r), p: int(p), salt: Buffer.from(salt ?? '', 'base64url'), key: Buffer.from(key ?? '', 'base64url') };
  const valid = parts.length === 6 && scheme === 'scrypt'
    && hash.N >= 2 && hash.N <= 2 ** 20 && (hash.N & (hash.N - 1)) === 0
    && hash.r >= 1 && hash.r <= 32 && hash.p >= 1 && hash.p <= 16
    && hash.salt.length >= 8 && hash.key.length >= 16;
  if (!valid) throw new Error(`MEDIA_PASSWORD_HASH must look like ${PASSWORD_HASH_FORMAT}`);
  return hash;
}

export async function hashPassword(password: string, params: { N: number; r: number; p: number } = DEFAULT_SCRYPT): Promise<string> {
  const salt = randomBytes(16);
  const key = await scryptKey(password, salt, 32, params);
  return `scrypt:${params.N}:${params.r}:${params.p}:${salt.toString('base64url')}:${key.toString('base64url')}`;
}

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest();

export interface PasswordVerifier {
  verify(candidate: string): Promise<boolean>;
  /** Changes whenever the password changes; tokens are bound to it so they die with it. */
  readonly fingerprint: string;
}

export function plainPasswordVerifier(password: string): PasswordVerifier {
  const expected = sha256(password);
  return {
    fingerprint: createHash('sha256').update(`plain\0${password}`).digest('base64url'),
    verify: async (candidate) => timingSafeEqual(sha256(candidate), expected),
  };
}

export function hashedPasswordVerifier(hashText: string): PasswordVerifier {
  const hash = parsePasswordHash(hashText);
  return {
    fingerprint: createHash('sha256').update(`scrypt\0${hashText}`).digest('base64url'),
    async verify(candidate) {
      const key = await scryptKey(candidate, hash.salt, hash.key.length, { N: hash.N, r: hash.r, p: hash.p });
      return timingSafeEqual(key, hash.key);
    },
  };
}
