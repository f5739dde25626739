// Who may see private media: a request brings the password (HTTP Basic with any user name, or
// X-Media-Password) or a signed token (`token` query parameter). A password in the query string
// is refused outright. Every password check counts against a per-IP budget of 10 per 10 minutes,
// except a repeat of the password this same address already proved (HTTP Basic sends it with
// every request). Past the budget the address hears 429 for any password until the window ends,
// so the answers cannot tell a right guess from a wrong one. Wrong passwords from all clients
// together have an hourly budget too (MEDIA_PASSWORD_FAILURES_PER_HOUR), so a slow guess spread over
// many addresses still ends. Past it, the wall stands only before the networks that guessed: a
// network (IPv4 /24, IPv6 /48) with more than NETWORK_FAILURES wrong passwords this hour is refused
// until the hour ends, any other (the owner's new browser) is still checked. A wall for everyone
// let two addresses lock every new login out for an hour (issue 39). And at most two checks run
// at once (a scrypt check holds one of libuv's four threads, which file reads and DNS share),
// others are answered 503 at once.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Context } from 'koa';
import { ApiError } from '../../shared/errors.ts';
import { LruMap } from '../../shared/lru-map.ts';
import { clientKey, limitedUntil, type RateLimiter, type RateLimitGroup } from '../http/rate-limit.ts';
import type { PasswordVerifier } from './password.ts';
import type { MintedToken, TokenSigner } from './token.ts';

const PASSWORD_GROUP = { name: 'media-password', limit: 10, windowMs: 10 * 60_000, authentication: true } as const;
/**
 * Wrong passwords a network may have had this hour and still be checked once the budget of all
 * clients is spent: the owner may mistype a few times; a guesser gets this many more an hour per
 * network it holds.
 */
export const NETWORK_FAILURES = 3;
/** Password checks running at once. */
const MAX_CHECKS = 2;
const REALM = 'Basic realm="Skinfarm private media", charset="UTF-8"';
/** Query parameters that would put a password into URLs, logs and browser history. */
const PASSWORD_PARAMS = ['password', 'pass', 'pwd'];

/** What a request with valid credentials gets: a token its URLs can carry. */
export type Grant = MintedToken;

export interface AccessOptions {
  verifier: PasswordVerifier | null; signer: TokenSigner; limiter: RateLimiter; tokenTtlSeconds: number;
  /** Wrong passwords an hour from all clients together. */
  failuresPerHour: number;
}

/** Addresses remembered as having proved the password; the least recently used are forgotten first. */
const MAX_PROVEN_ADDRESSES = 10_000;

const first = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value) || undefined;
const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest();
/** Every client together: the budget of all clients is one count. */
const EVERYONE = '*';

/**
 * The network an address belongs to: an IPv4 /24, an IPv6 /48 (what one site is given; its /64s
 * are clients of their own). Written without colons, so the limiter takes it as it is.
 */
export function networkKey(ip: string): string {
  const client = clientKey(ip);
  if (!client.includes(':')) return /^\d+\.\d+\.\d+\.\d+$/.test(client) ? `${client.replace(/\.\d+$/, '.0')}/24` : client;
  return `${client.split(':').slice(0, 3).join('-')}/48`;
}

function passwordOf(ctx: Context): string | undefined {
  const header = ctx.get('X-Media-Password');
  if (header) return header;
  const match = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(ctx.get('Authorization'));
  if (!match) return undefined;
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon >= 0 && colon < decoded.length - 1 ? decoded.slice(colon + 1) : undefined;
}

export class PrivateAccess {
  private readonly options: AccessOptions;
  /** Digest of the password each address proved, so HTTP Basic on every request costs no scrypt. */
  private readonly proven = new LruMap<Buffer>(MAX_PROVEN_ADDRESSES);
  /**
   * Addresses over the budget, until the end of their window (ms). Bounded like `proven`: a lock
   * forgotten early costs nothing, as the limiter still counts the window and locks again.
   */
  private readonly lockedUntil = new LruMap<number>(MAX_PROVEN_ADDRESSES);
  /** Wrong passwords from all clients an hour, and from one network once that is spent. */
  private readonly everyone: RateLimitGroup;
  private readonly network: RateLimitGroup = { name: 'media-password-network-failures', limit: NETWORK_FAILURES, windowMs: 60 * 60_000, authentication: true };
  /** The end of the hour whose budget of all clients is spent (ms), as this process last saw it. */
  private spentUntil = 0;
  private checking = 0;

  constructor(options: AccessOptions) {
    this.options = options;
    this.everyone = { name: 'media-password-failures', limit: options.failuresPerHour, windowMs: 60 * 60_000, authentication: true };
  }

  get passwordConfigured(): boolean {
    return this.options.verifier !== null;
  }

  mint(): Grant {
    return this.options.signer.mint(this.options.tokenTtlSeconds);
  }

  /** Checks a password from `ip`; throws 429 past a budget, 503 when checks are busy and 403 when wrong. */
  async login(candidate: string, ip: string): Promise<Grant> {
    const client = clientKey(ip);
    const locked = this.lockedUntil.get(client);
    if (locked !== undefined && locked > Date.now()) throw this.tooMany(locked);
    this.lockedUntil.delete(client);
    const digest = sha256(candidate);
    const proven = this.proven.get(client);
    if (proven && timingSafeEqual(digest, proven)) return this.mint();
    if (this.spentUntil > Date.now()) {
      // Cost 0: reads the network's wrong passwords this hour without counting one.
      const network = await this.options.limiter.check(this.network, networkKey(ip), Date.now(), 0);
      if (network.limited) throw limitedUntil(network.resetAt, { zh: '所有客户端本小时的错误密码已超出预算，且此网络的错误密码过多', en: 'too many wrong passwords from this network while those of all clients are over their hourly budget' });
    }
    const outcome = await this.options.limiter.check(PASSWORD_GROUP, ip);
    if (outcome.limited) {
      this.lockedUntil.set(client, outcome.resetAt);
      throw this.tooMany(outcome.resetAt);
    }
    const { verifier } = this.options;
    if (!verifier) throw new ApiError('wrong_password', { detail: { zh: '私有媒体未开启（未设置 MEDIA_PASSWORD）', en: 'private media is off (MEDIA_PASSWORD is not set)' } });
    if (this.checking >= MAX_CHECKS) throw new ApiError('overloaded', { detail: { zh: '密码校验繁忙', en: 'password checks are busy' }, retryAfter: 1 });
    this.checking += 1;
    let right: boolean;
    try {
      right = await verifier.verify(candidate);
    } finally {
      this.checking -= 1;
    }
    if (!right) {
      await this.failed(ip);
      throw new ApiError('wrong_password');
    }
    this.proven.set(client, digest);
    return this.mint();
  }

  /** Counts a wrong password, for everyone and for its network. */
  private async failed(ip: string): Promise<void> {
    const [everyone] = await Promise.all([
      this.options.limiter.check(this.everyone, EVERYONE),
      this.options.limiter.check(this.network, networkKey(ip)),
    ]);
    if (everyone.limited) this.spentUntil = everyone.resetAt;
  }

  private tooMany(resetAt: number): ApiError {
    return limitedUntil(resetAt, { zh: '此地址的密码尝试次数过多', en: 'too many password attempts from this address' });
  }

  /** The request's grant, or null when it brings no credentials at all; throws on bad ones. */
  async optional(ctx: Context): Promise<Grant | null> {
    for (const name of PASSWORD_PARAMS) {
      if (ctx.query[name] !== undefined) {
        throw new ApiError('bad_request', {
          detail: { zh: `切勿把密码放在网址中（${name}=）；请使用 HTTP Basic、X-Media-Password 请求头或来自 /login 的令牌`, en: `never put the password in a URL (${name}=); use HTTP Basic, the X-Media-Password header or a token from /login` },
        });
      }
    }
    const token = first(ctx.query.token);
    const tokenCheck = token ? this.options.signer.check(token) : undefined;
    if (token && tokenCheck === 'valid') return { token, expiresAt: Number(token.split('.')[0]) };
    const password = passwordOf(ctx);
    if (password !== undefined) return this.login(password, ctx.ip);
    if (tokenCheck === 'expired') throw new ApiError('wrong_password', { detail: { zh: '令牌已过期，请在 /login 获取新令牌', en: 'the token has expired; get a new one at /login' } });
    if (tokenCheck === 'invalid') throw new ApiError('wrong_password', { detail: { zh: '令牌无效', en: 'the token is not valid' } });
    return null;
  }

  /** The request's grant; 401 with a Basic challenge when it brings no credentials. */
  async require(ctx: Context): Promise<Grant> {
    const grant = await this.optional(ctx);
    if (!grant) {
      throw new ApiError('password_required', {
        detail: { zh: '请发送 HTTP Basic、X-Media-Password 或来自 /login 的令牌', en: 'send HTTP Basic, X-Media-Password or a token from /login' }, headers: { 'WWW-Authenticate': REALM },
      });
    }
    return grant;
  }
}
