// One refresh at a time per session. Providers rotate refresh tokens (Passport revokes the old
// pair at once; oidc-provider revokes the whole grant when a spent one comes again), so requests
// that find the token expired together share one refresh, and a request that loaded the session
// before another one refreshed it takes the stored tokens instead of spending the old ones.
// Within an instance a promise per session is shared; across instances (Redis) a lock whose lease
// outlasts the token call lets one refresh while the others wait for the tokens it stores. When
// the lock cannot be had the request fails: a second refresh would cost the user the grant.
import type { RenderLock } from '../render-lock.ts';
import { TokenRejected, type ExternalAccount, type TokenSet } from './external-account.ts';
import type { Session, Sessions } from './session.ts';
import { keyOf } from './session-store.ts';

/** Tokens this close to their end are refreshed before use. */
const MARGIN_MS = 30_000;

export function expiring(auth: TokenSet): boolean {
  return auth.expiresAt < Date.now() + MARGIN_MS;
}

/**
 * The refresh lock's lease: every attempt the upstream client may make, each up to its timeout,
 * and one timeout more for the session reads and the save around the call.
 */
export function refreshLeaseMs(upstream: { timeoutMs: number; retries: number }): number {
  return upstream.timeoutMs * (upstream.retries + 2);
}

export class TokenRefresher {
  private readonly sessions: Sessions;
  private readonly lock: RenderLock;
  private readonly leaseMs: number;
  private readonly inFlight = new Map<string, Promise<TokenSet>>();

  constructor(sessions: Sessions, lock: RenderLock, upstream: { timeoutMs: number; retries: number }) {
    this.sessions = sessions;
    this.lock = lock;
    this.leaseMs = refreshLeaseMs(upstream);
  }

  /**
   * Live tokens for the session (saved before they are returned); TokenRejected or oauth_failed
   * when there are none; overloaded when the refresh cannot be coordinated with the other instances.
   */
  refreshed(session: Session, api: ExternalAccount): Promise<TokenSet> {
    let pending = this.inFlight.get(session.id);
    if (!pending) {
      pending = this.refresh(session, api).finally(() => this.inFlight.delete(session.id));
      this.inFlight.set(session.id, pending);
    }
    return pending;
  }

  private async refresh(session: Session, api: ExternalAccount): Promise<TokenSet> {
    const stored = await this.sessions.store.get(session.id);
    if (!stored) throw new TokenRejected('session ended');
    if (stored.auth.accessToken !== session.data.auth.accessToken && !expiring(stored.auth)) return stored.auth;
    const from = stored.auth.refreshToken;
    if (!from) throw new TokenRejected('no refresh token');
    // Tokens another instance stored since `stored` was read.
    const newer = async () => {
      const now = await this.sessions.store.get(session.id);
      return now && now.auth.refreshToken !== from ? now.auth : undefined;
    };
    return this.lock.exclusive(`session-refresh:${keyOf(session.id)}`, this.leaseMs, async () => {
      // Another instance may have refreshed and released the lock between our read and our lock:
      // its tokens, never a refresh with the spent ones (oidc-provider revokes the whole grant then).
      const already = await newer();
      if (already) return already;
      let auth: TokenSet;
      try {
        auth = await api.refresh(stored.auth);
      } catch (error) {
        const other = await newer();
        if (other) return other;
        throw error;
      }
      // Saved only over the tokens this refresh started from (the fence, should the lease run out),
      // under the end set at login.
      const left = stored._expire - Date.now();
      if (left > 0 && await this.sessions.store.replaceAuth(session.id, from, { ...stored, auth }, left)) return auth;
      const other = await newer();
      if (other) return other;
      throw new TokenRejected('session ended');
    }, newer);
  }
}
