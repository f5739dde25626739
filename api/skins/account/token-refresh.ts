// One refresh at a time per session. Providers rotate refresh tokens (Passport revokes the old
// pair at once; oidc-provider revokes the whole grant when a spent one comes again), so requests
// that find the token expired together share one refresh, and a request that loaded the session
// before another one refreshed it takes the stored tokens instead of spending the old ones.
// Within an instance a promise per session is shared; across instances (Redis) a short lock
// lets one refresh while the others wait for the tokens it stores.
import type { RenderLock } from '../render-lock.ts';
import { TokenRejected, type ExternalAccount, type TokenSet } from './external-account.ts';
import type { Session, Sessions } from './session.ts';
import { keyOf } from './session-store.ts';

/** Tokens this close to their end are refreshed before use. */
const MARGIN_MS = 30_000;

export function expiring(auth: TokenSet): boolean {
  return auth.expiresAt < Date.now() + MARGIN_MS;
}

export class TokenRefresher {
  private readonly sessions: Sessions;
  private readonly lock: RenderLock;
  private readonly inFlight = new Map<string, Promise<TokenSet>>();

  constructor(sessions: Sessions, lock: RenderLock) {
    this.sessions = sessions;
    this.lock = lock;
  }

  /** Live tokens for the session (saved before they are returned); TokenRejected or oauth_failed when there are none. */
  refreshed(session: Session, api: ExternalAccount): Promise<TokenSet> {
    let pending = this.inFlight.get(session.id);
    if (!pending) {
      pending = this.refresh(session, api).finally(() => this.inFlight.delete(session.id));
      this.inFlight.set(session.id, pending);
    }
    return pending;
  }

  private async refresh(session: Session, api: ExternalAccount): Promise<TokenSet> {
    const stored = await this.sessions.store.get(session.id) as Session['data'] | undefined;
    if (!stored) throw new TokenRejected('session ended');
    if (stored.auth.accessToken !== session.data.auth.accessToken && !expiring(stored.auth)) return stored.auth;
    // Tokens another instance stored since `stored` was read.
    const newer = async () => {
      const now = await this.sessions.store.get(session.id);
      return now && now.auth.refreshToken !== stored.auth.refreshToken ? now.auth : undefined;
    };
    return this.lock.once(`session-refresh:${keyOf(session.id)}`, async () => {
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
      await this.sessions.save({ id: session.id, data: { ...stored, auth } });
      return auth;
    }, newer);
  }
}
