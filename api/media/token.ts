// Signed, expiring access tokens for private media, so a private file can be embedded by plain
// URL (`&token=...`) without the password ever appearing in one. A token is
// <expiry unix seconds>.<HMAC-SHA256 base64url>; the HMAC covers the expiry and the password's
// fingerprint, so changing the password (or the secret) revokes every token at once.
import { createHmac, timingSafeEqual } from 'node:crypto';

export type TokenCheck = 'valid' | 'expired' | 'invalid';

export interface MintedToken { token: string; expiresAt: number }

const TOKEN_PATTERN = /^(\d{1,12})\.([A-Za-z0-9_-]{43})$/;

export class TokenSigner {
  private readonly secret: Buffer;
  private readonly fingerprint: string;

  constructor(secret: Buffer, fingerprint: string) {
    this.secret = secret;
    this.fingerprint = fingerprint;
  }

  private sign(expiresAt: number): string {
    return createHmac('sha256', this.secret).update(`skinfarm-media-token\0${expiresAt}\0${this.fingerprint}`).digest('base64url');
  }

  mint(ttlSeconds: number, now = Date.now()): MintedToken {
    const expiresAt = Math.floor(now / 1000) + ttlSeconds;
    return { token: `${expiresAt}.${this.sign(expiresAt)}`, expiresAt };
  }

  check(token: string, now = Date.now()): TokenCheck {
    const match = TOKEN_PATTERN.exec(token);
    if (!match) return 'invalid';
    const expiresAt = Number(match[1]);
    if (!timingSafeEqual(Buffer.from(match[2]), Buffer.from(this.sign(expiresAt)))) return 'invalid';
    return expiresAt * 1000 > now ? 'valid' : 'expired';
  }
}
