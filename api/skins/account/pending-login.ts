// Logins under way: their `state` and PKCE verifier (RFC 7636) travel in a signed, HttpOnly
// cookie scoped to /oauth/external, so an anonymous visitor costs the server no stored state.
// A browser holds at most MAX_PENDING of them (several tabs may log in at once); each lasts
// PENDING_MS.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Context } from 'koa';

export const LOGIN_COOKIE = 'skinfarm.login';
const MAX_PENDING = 3;
const PENDING_MS = 10 * 60_000;

interface Pending { state: string; verifier: string; at: number }

export interface LoginStart { state: string; challenge: string }

function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

function isPending(value: unknown): value is Pending {
  const p = value as Pending;
  return typeof p === 'object' && p !== null && typeof p.state === 'string' && typeof p.verifier === 'string' && typeof p.at === 'number';
}

export class PendingLogins {
  private readonly secure: boolean;

  constructor(options: { secure: boolean }) {
    this.secure = options.secure;
  }

  private read(ctx: Context): Pending[] {
    const raw = ctx.cookies.get(LOGIN_COOKIE, { signed: true });
    if (!raw) return [];
    try {
      const list: unknown = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8'));
      const now = Date.now();
      return Array.isArray(list) ? list.filter(isPending).filter((p) => now - p.at < PENDING_MS) : [];
    } catch {
      return [];
    }
  }

  private write(ctx: Context, list: Pending[]): void {
    const value = list.length ? Buffer.from(JSON.stringify(list)).toString('base64url') : null;
    ctx.cookies.set(LOGIN_COOKIE, value, {
      signed: true, httpOnly: true, sameSite: 'lax', secure: this.secure, path: '/oauth/external', maxAge: PENDING_MS, overwrite: true,
    });
  }

  /** A new login: a random state and verifier; the oldest pending one goes beyond the bound. */
  begin(ctx: Context): LoginStart {
    const pending: Pending = { state: randomBytes(24).toString('base64url'), verifier: randomBytes(48).toString('base64url'), at: Date.now() };
    this.write(ctx, [...this.read(ctx), pending].slice(-MAX_PENDING));
    return { state: pending.state, challenge: createHash('sha256').update(pending.verifier).digest('base64url') };
  }

  /** The verifier of the login this state belongs to (used up), or undefined for a forged state. */
  finish(ctx: Context, state: string | undefined): string | undefined {
    const list = this.read(ctx);
    const match = state === undefined ? undefined : list.find((p) => sameText(p.state, state));
    if (match) this.write(ctx, list.filter((p) => p !== match));
    return match?.verifier;
  }
}
