// Failures of one secret from all clients together (wrong media passwords, wrong admin tokens):
// per-client limits stop one guesser, this stops a slow guess spread over many addresses. Past the
// budget every new check is refused until the window ends, whoever asks (a right guess cannot be
// told from a wrong one then). The count lives in the limiter's store (Redis when shared); the
// end of a spent window is remembered here, so a refused check costs no store call.
import { limitedUntil, type RateLimiter, type RateLimitGroup } from './rate-limit.ts';

/** Every client together: the budget is one count. */
const EVERYONE = '*';

export class FailureBudget {
  private readonly limiter: RateLimiter;
  private readonly group: RateLimitGroup;
  private readonly detail: string;
  private spentUntil = 0;

  /** `group`: its limit is the failures allowed per window; `detail`: what a refusal says. */
  constructor(limiter: RateLimiter, group: Omit<RateLimitGroup, 'authentication'>, detail: string) {
    this.limiter = limiter;
    this.group = { ...group, authentication: true };
    this.detail = detail;
  }

  /** Throws 429 while this window's budget is spent. */
  assertOpen(): void {
    if (this.spentUntil > Date.now()) throw limitedUntil(this.spentUntil, this.detail);
  }

  /** Counts one failure. */
  async failed(): Promise<void> {
    const outcome = await this.limiter.check(this.group, EVERYONE);
    if (outcome.limited) this.spentUntil = outcome.resetAt;
  }
}
