// Back-off after the upstream says "too many requests" (429, or CloudFront's 403 for Mojang):
// no call is sent until the time it asked for, or an exponential default, has passed.

const DEFAULT_BACKOFF_S = 30;
const MAX_BACKOFF_S = 600;

export class Circuit {
  private openUntil = 0;
  private strikes = 0;

  /** Opens for `retryAfterSeconds` when the upstream said so, else 30 s doubling to 10 min. */
  trip(retryAfterSeconds?: number): number {
    const seconds = retryAfterSeconds && retryAfterSeconds > 0
      ? Math.min(retryAfterSeconds, MAX_BACKOFF_S)
      : Math.min(DEFAULT_BACKOFF_S * 2 ** this.strikes, MAX_BACKOFF_S);
    this.strikes += 1;
    this.openUntil = Date.now() + seconds * 1000;
    return seconds;
  }

  succeeded(): void {
    this.strikes = 0;
  }

  /** Milliseconds until calls may be sent again; 0 when closed. */
  remainingMs(now = Date.now()): number {
    return Math.max(0, this.openUntil - now);
  }

  snapshot() {
    const ms = this.remainingMs();
    return { state: ms > 0 ? 'open' : 'closed', retry_in_s: Math.ceil(ms / 1000), strikes: this.strikes };
  }
}
