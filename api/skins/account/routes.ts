// OAuth login to the external service and the session-based account endpoints.
import type { Context } from 'koa';
import { ApiError } from '../../../shared/errors.ts';
import { readJson } from '../../http/body.ts';
import { ok } from '../../http/envelope.ts';
import { inQuery, text, type Params } from '../../http/params.ts';
import type { Route } from '../../http/route-table.ts';
import { data, pretty, redirect, requires } from '../../docs/fragments.ts';
import { ref } from '../../docs/schemas.ts';
import type { RenderLock } from '../render-lock.ts';
import type { SkinsService } from '../service.ts';
import { isoWithOffset } from '../records.ts';
import { parseUuid } from '../validate.ts';
import { oauthErrorCode, TokenRejected, type ExternalAccount } from './external-account.ts';
import { pageLanguage } from '../../http/i18n.ts';
import { serviceLinks } from '../../http/page.ts';
import { renderLoginFailed } from '../pages/login-failed.ts';
import type { PendingLogins } from './pending-login.ts';
import { RATE_GROUPS } from '../route-params.ts';
import { assertSameOrigin, jsonFromSameOrigin } from './request-guard.ts';
import type { Session, Sessions } from './session.ts';
import { expiring, TokenRefresher } from './token-refresh.ts';

const TOKEN_NOTE = '此令牌等同于密码：不要分享、不要提交到代码仓库；它不会被本服务保存或记录。';

/** Errors of the browser-facing callback: an HTML page for browsers, the envelope otherwise. */
function failLogin(ctx: Context, a: AccountContext, error: ApiError): void {
  if (ctx.accepts('html', 'json') !== 'html') throw error;
  ctx.status = error.status;
  ctx.type = 'html';
  ctx.body = renderLoginFailed(pageLanguage(ctx), error, serviceLinks(a.service.config, ctx, 'skins'));
}

/** The provider's error on the callback (RFC 6749 4.1.2.1): only access_denied is the user's no. */
function providerError(error: string): ApiError {
  return error === 'access_denied'
    ? new ApiError('oauth_denied')
    : new ApiError('oauth_failed', { detail: oauthErrorCode(error) });
}

export interface AccountDeps { account: ExternalAccount | null; sessions: Sessions; pending: PendingLogins; issuer: string; lock: RenderLock }

/** What the account handlers work with: the service, the OAuth client (when configured), sessions. */
export class AccountContext {
  readonly service: SkinsService;
  readonly sessions: Sessions;
  readonly pending: PendingLogins;
  readonly issuer: string;
  readonly publicOrigin: string;
  private readonly account: ExternalAccount | null;
  private readonly refresher: TokenRefresher;

  constructor(service: SkinsService, deps: AccountDeps) {
    this.service = service;
    this.account = deps.account;
    this.sessions = deps.sessions;
    this.pending = deps.pending;
    this.issuer = deps.issuer;
    this.refresher = new TokenRefresher(deps.sessions, deps.lock, service.config.upstream);
    this.publicOrigin = new URL(service.config.publicUrl).origin;
  }

  configured(): ExternalAccount {
    if (!this.account) throw new ApiError('oauth_not_configured', { detail: '需要设置 OAUTH_CLIENT_ID、OAUTH_CLIENT_SECRET 和 OAUTH_REDIRECT_URL' });
    return this.account;
  }

  /**
   * Runs an upstream call with the session's access token: refreshes it when it is about to
   * expire or was rejected (once); when refreshing fails the user is logged out.
   */
  async withToken<T>(ctx: Context, session: Session | null, call: (token: string) => Promise<T>): Promise<T> {
    const api = this.configured();
    if (!session) throw new ApiError('not_logged_in');
    const refresh = async () => {
      session.data.auth = await this.refresher.refreshed(session, api);
    };
    try {
      if (expiring(session.data.auth)) await refresh();
      try {
        return await call(session.data.auth.accessToken);
      } catch (error) {
        if (!(error instanceof TokenRejected)) throw error;
        await refresh();
        return await call(session.data.auth.accessToken);
      }
    } catch (error) {
      if (error instanceof TokenRejected || (error instanceof ApiError && error.code === 'oauth_failed')) {
        await this.sessions.end(ctx);
        throw new ApiError('not_logged_in', { detail: '登录已过期' });
      }
      throw error;
    }
  }
}

function login(ctx: Context, a: AccountContext): void {
  const api = a.configured();
  const { state, challenge } = a.pending.begin(ctx);
  ctx.redirect(api.authorizeUrl(state, challenge));
}

async function callback(ctx: Context, a: AccountContext, params: Params): Promise<void> {
  const api = a.configured();
  try {
    const verifier = a.pending.finish(ctx, params.state as string | undefined);
    if (!verifier) throw new ApiError('oauth_state_mismatch');
    // RFC 9207: an answer naming another issuer is a mix-up attack, whatever else it says.
    if (params.iss !== undefined && params.iss !== a.issuer) throw new ApiError('oauth_issuer_mismatch');
    if (params.error) throw providerError(params.error as string);
    const code = params.code as string | undefined;
    if (!code) throw new ApiError('missing_param', { detail: 'code' });
    const auth = await api.exchangeCode(code, verifier);
    const user = await api.user(auth.accessToken).catch((failure: unknown) => {
      throw failure instanceof TokenRejected ? new ApiError('oauth_failed', { detail: 'token rejected' }) : failure;
    });
    await a.sessions.start(ctx, { user, auth });
    ctx.redirect('/');
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    failLogin(ctx, a, error);
  }
}

// A GET by the spec; a page of another site must still not be able to log the user out.
async function logout(ctx: Context, a: AccountContext): Promise<void> {
  assertSameOrigin(ctx, a.publicOrigin);
  await a.sessions.end(ctx);
  ctx.redirect('/');
}

async function me(ctx: Context, a: AccountContext): Promise<void> {
  const user = (await a.sessions.load(ctx))?.data.user;
  if (!user) return ok(ctx, { logged_in: false });
  const avatar = `${a.service.config.external.url}/avatar/user/${user.id}`;
  ok(ctx, { logged_in: true, user: { id: user.id, name: user.name, avatar } });
}

async function profiles(ctx: Context, a: AccountContext): Promise<void> {
  const session = await a.sessions.load(ctx);
  if (!session) return ok(ctx, { logged_in: false, profiles: [] });
  const players = await a.withToken(ctx, session, (token) => a.configured().players(token));
  // /api/players has no UUIDs: resolve the names through the Yggdrasil bulk lookup.
  const hits = players.length > 0 ? await a.service.lookup.sources.external.namesToIds(players.map((p) => p.name)) : [];
  ok(ctx, { logged_in: true, profiles: hits.map((h) => ({ id: h.id, name: h.name })) });
}

async function verification(ctx: Context, a: AccountContext): Promise<void> {
  const uuid = await a.withToken(ctx, await a.sessions.load(ctx), (token) => a.configured().premium(token));
  ok(ctx, { verified: uuid !== null, uuid: uuid ?? '', checked: true, logged_in: true });
}

async function gameToken(ctx: Context, a: AccountContext): Promise<void> {
  const body = await readJson(ctx);
  const raw = typeof body === 'object' && body !== null ? (body as { uuid?: unknown }).uuid : undefined;
  if (raw !== undefined && typeof raw !== 'string') throw new ApiError('invalid_uuid');
  const uuid = parseUuid(raw as string | undefined);
  const token = await a.withToken(ctx, await a.sessions.load(ctx), (accessToken) => a.configured().gameToken(accessToken, uuid));
  ok(ctx, { ...token, created_at: isoWithOffset(), note: TOKEN_NOTE });
}

const { normal } = RATE_GROUPS;
const ACCOUNT_ERRORS = ['not_logged_in', 'oauth_not_configured', 'upstream_error', 'upstream_timeout'] as const;
const session = requires('session', '');
const verificationRoute: Route<AccountContext> = {
  method: 'get', path: '/v1/me/verification', limit: normal, params: [pretty], handle: verification,
  doc: {
    summary: 'Premium verification', description: 'Needs the PremiumVerification.Read permission.',
    ok: data('verification', 'Verification'), errors: [...ACCOUNT_ERRORS, 'missing_scope'], security: requires('session'),
  },
};

export const ACCOUNT_ROUTES: Route<AccountContext>[] = [
  {
    // The login steps and the game token are one user's, once: nothing may keep them.
    method: 'get', path: '/oauth/external', limit: normal, cacheControl: 'no-store', handle: login,
    doc: {
      summary: 'Log in at the external service', description: 'Redirects to the authorisation page with a random state and a PKCE S256 challenge, both kept in a signed cookie (skinfarm.login); nothing is stored server-side.',
      status: '302', ok: redirect('to the external authorisation page'), errors: ['oauth_not_configured'],
    },
  },
  {
    method: 'get', path: '/oauth/external/callback', limit: normal, cacheControl: 'no-store', handle: callback,
    params: [inQuery('code', 'from the authorisation page', text), inQuery('state', 'from the authorisation page', text),
      inQuery('error', 'set when the provider refused (access_denied: the user said no)', text), inQuery('iss', 'the issuer, when the provider names it (RFC 9207)', text)],
    doc: {
      summary: 'Login callback', description: 'Browsers get an HTML page on failure, other clients the envelope.',
      status: '302', ok: redirect('to / when logged in'),
      errors: ['oauth_state_mismatch', 'oauth_issuer_mismatch', 'oauth_denied', 'missing_param', 'oauth_failed', 'oauth_not_configured'], htmlErrors: true,
    },
  },
  { method: 'get', path: '/oauth/logout', cacheControl: 'no-store', handle: logout, doc: { summary: 'End the session', status: '302', ok: redirect('to /'), errors: ['cross_site_request'] } },
  {
    method: 'get', path: '/v1/me', limit: normal, params: [pretty], handle: me,
    doc: { summary: 'Login state and user', description: 'Anonymous is a success with logged_in false.', ok: data('current user', 'Me'), security: session },
  },
  {
    method: 'get', path: '/v1/me/profiles', limit: normal, params: [pretty], handle: profiles,
    doc: { summary: 'The account\'s players with UUIDs', description: 'Anonymous: an empty list.', ok: data('profiles', 'MeProfiles'), errors: ACCOUNT_ERRORS, security: session },
  },
  verificationRoute,
  { ...verificationRoute, path: '/v1/me/premium', doc: { ...verificationRoute.doc, summary: 'Premium verification (same as /v1/me/verification)' } },
  {
    method: 'post', path: '/v1/me/token', limit: normal, cacheControl: 'no-store', params: [pretty], handle: gameToken,
    before: (a) => [jsonFromSameOrigin(a.service.config.publicUrl)],
    doc: {
      summary: 'Game token for one of your profiles',
      description: 'Needs the Yggdrasil.MinecraftToken.Create permission. The token equals a password; it is neither stored nor logged.',
      body: { required: true, content: { 'application/json': { schema: ref('TokenRequest'), example: { uuid: '<profile uuid>' } } } },
      ok: data('game token', 'GameToken'),
      errors: [...ACCOUNT_ERRORS, 'missing_param', 'invalid_uuid', 'missing_scope', 'forbidden', 'bad_request', 'unsupported_media_type', 'cross_site_request'], security: requires('session'),
    },
  },
];
