// OAuth login to the external service and the session-based account endpoints.
import Router from '@koa/router';
import type { Context, Middleware } from 'koa';
import { ApiError } from '../../../shared/errors.ts';
import { readJson, queryParam } from '../../http/body.ts';
import { ok } from '../../http/envelope.ts';
import type { RenderLock } from '../render-lock.ts';
import type { SkinsService } from '../service.ts';
import { isoWithOffset } from '../records.ts';
import { parseUuid } from '../validate.ts';
import { oauthErrorCode, TokenRejected, type ExternalAccount } from './external-account.ts';
import { pageLanguage } from '../../http/i18n.ts';
import { renderLoginFailed } from '../pages/login-failed.ts';
import type { PendingLogins } from './pending-login.ts';
import { assertSameOrigin, jsonFromSameOrigin } from './request-guard.ts';
import type { Session, Sessions } from './session.ts';
import { expiring, TokenRefresher } from './token-refresh.ts';

const TOKEN_NOTE = '此令牌等同于密码：不要分享、不要提交到代码仓库；它不会被本服务保存或记录。';

/** Errors of the browser-facing callback: an HTML page for browsers, the envelope otherwise. */
function failLogin(ctx: Context, error: ApiError): void {
  if (ctx.accepts('html', 'json') !== 'html') throw error;
  ctx.status = error.status;
  ctx.type = 'html';
  ctx.body = renderLoginFailed(pageLanguage(ctx), error);
}

/** The provider's error on the callback (RFC 6749 4.1.2.1): only access_denied is the user's no. */
function providerError(error: string): ApiError {
  return error === 'access_denied'
    ? new ApiError('oauth_denied')
    : new ApiError('oauth_failed', { detail: oauthErrorCode(error) });
}

export interface AccountDeps { account: ExternalAccount | null; sessions: Sessions; pending: PendingLogins; issuer: string; lock: RenderLock }

export function accountRouter(service: SkinsService, deps: AccountDeps, limit: Middleware): Router {
  const router = new Router();
  const { account, sessions, pending } = deps;
  const refresher = new TokenRefresher(sessions, deps.lock);
  const publicOrigin = new URL(service.config.publicUrl).origin;
  const stateChanging = jsonFromSameOrigin(service.config.publicUrl);

  const configured = (): ExternalAccount => {
    if (!account) throw new ApiError('oauth_not_configured', { detail: '需要设置 OAUTH_CLIENT_ID、OAUTH_CLIENT_SECRET 和 OAUTH_REDIRECT_URL' });
    return account;
  };

  /**
   * Runs an upstream call with the session's access token: refreshes it when it is about to
   * expire or was rejected (once); when refreshing fails the user is logged out.
   */
  async function withToken<T>(ctx: Context, session: Session | null, call: (token: string) => Promise<T>): Promise<T> {
    const api = configured();
    if (!session) throw new ApiError('not_logged_in');
    const refresh = async () => {
      session.data.auth = await refresher.refreshed(session, api);
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
        await sessions.end(ctx, session);
        throw new ApiError('not_logged_in', { detail: '登录已过期' });
      }
      throw error;
    }
  }

  router.get('/oauth/external', limit, (ctx) => {
    const api = configured();
    const { state, challenge } = pending.begin(ctx);
    ctx.set('Cache-Control', 'no-store');
    ctx.redirect(api.authorizeUrl(state, challenge));
  });

  router.get('/oauth/external/callback', limit, async (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    const api = configured();
    try {
      const verifier = pending.finish(ctx, queryParam(ctx, 'state'));
      if (!verifier) throw new ApiError('oauth_state_mismatch');
      // RFC 9207: an answer naming another issuer is a mix-up attack, whatever else it says.
      const iss = queryParam(ctx, 'iss');
      if (iss !== undefined && iss !== deps.issuer) throw new ApiError('oauth_issuer_mismatch');
      const error = queryParam(ctx, 'error');
      if (error) throw providerError(error);
      const code = queryParam(ctx, 'code');
      if (!code) throw new ApiError('missing_param', { detail: 'code' });
      const auth = await api.exchangeCode(code, verifier);
      const user = await api.user(auth.accessToken).catch((failure: unknown) => {
        throw failure instanceof TokenRejected ? new ApiError('oauth_failed', { detail: 'token rejected' }) : failure;
      });
      await sessions.start(ctx, { user, auth });
      ctx.redirect('/');
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      failLogin(ctx, error);
    }
  });

  // A GET by the spec; a page of another site must still not be able to log the user out.
  router.get('/oauth/logout', async (ctx) => {
    assertSameOrigin(ctx, publicOrigin);
    await sessions.end(ctx);
    ctx.set('Cache-Control', 'no-store');
    ctx.redirect('/');
  });

  router.get('/v1/me', limit, async (ctx) => {
    const user = (await sessions.load(ctx))?.data.user;
    if (!user) return ok(ctx, { logged_in: false });
    const avatar = `${service.config.external.url}/avatar/user/${user.id}`;
    ok(ctx, { logged_in: true, user: { id: user.id, name: user.name, avatar } });
  });

  router.get('/v1/me/profiles', limit, async (ctx) => {
    const session = await sessions.load(ctx);
    if (!session) return ok(ctx, { logged_in: false, profiles: [] });
    const players = await withToken(ctx, session, (token) => configured().players(token));
    // /api/players has no UUIDs: resolve the names through the Yggdrasil bulk lookup.
    const hits = players.length > 0 ? await service.lookup.sources.external.namesToIds(players.map((p) => p.name)) : [];
    ok(ctx, { logged_in: true, profiles: hits.map((h) => ({ id: h.id, name: h.name })) });
  });

  const verification: Middleware = async (ctx) => {
    const uuid = await withToken(ctx, await sessions.load(ctx), (token) => configured().premium(token));
    ok(ctx, { verified: uuid !== null, uuid: uuid ?? '', checked: true, logged_in: true });
  };
  router.get('/v1/me/verification', limit, verification);
  router.get('/v1/me/premium', limit, verification);

  router.post('/v1/me/token', limit, stateChanging, async (ctx) => {
    const body = await readJson(ctx);
    const raw = typeof body === 'object' && body !== null ? (body as { uuid?: unknown }).uuid : undefined;
    if (raw !== undefined && typeof raw !== 'string') throw new ApiError('invalid_uuid');
    const uuid = parseUuid(raw as string | undefined);
    const token = await withToken(ctx, await sessions.load(ctx), (accessToken) => configured().gameToken(accessToken, uuid));
    ctx.set('Cache-Control', 'no-store');
    ok(ctx, { ...token, created_at: isoWithOffset(), note: TOKEN_NOTE });
  });

  return router;
}
