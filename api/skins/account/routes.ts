// OAuth login to the external service and the session-based account endpoints.
import { randomBytes, timingSafeEqual } from 'node:crypto';
import Router from '@koa/router';
import type { Context, Middleware } from 'koa';
import { ApiError } from '../../../shared/errors.ts';
import { readJson, queryParam } from '../../http/body.ts';
import { ok } from '../../http/envelope.ts';
import type { SkinsService } from '../service.ts';
import { isoWithOffset } from '../records.ts';
import { parseUuid } from '../validate.ts';
import { TokenRejected, type ExternalAccount } from './external-account.ts';
import { pageLanguage } from '../../http/i18n.ts';
import { renderLoginFailed } from '../pages/login-failed.ts';
import type { AccountSession } from './session.ts';

const TOKEN_NOTE = '此令牌等同于密码：不要分享、不要提交到代码仓库；它不会被本服务保存或记录。';

function sessionOf(ctx: Context): AccountSession {
  return ctx.session as unknown as AccountSession;
}

function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** Errors of the browser-facing callback: an HTML page for browsers, the envelope otherwise. */
function failLogin(ctx: Context, error: ApiError): void {
  if (ctx.accepts('html', 'json') !== 'html') throw error;
  ctx.status = error.status;
  ctx.type = 'html';
  ctx.body = renderLoginFailed(pageLanguage(ctx), error);
}

export function accountRouter(service: SkinsService, account: ExternalAccount | null, limit: Middleware): Router {
  const router = new Router();

  const configured = (): ExternalAccount => {
    if (!account) throw new ApiError('oauth_not_configured', { detail: '需要设置 OAUTH_CLIENT_ID、OAUTH_CLIENT_SECRET 和 OAUTH_REDIRECT_URL' });
    return account;
  };

  /**
   * Runs an upstream call with the session's access token: refreshes it when it is about to
   * expire or was rejected (once); when refreshing fails the user is logged out.
   */
  async function withToken<T>(ctx: Context, call: (token: string) => Promise<T>): Promise<T> {
    const api = configured();
    const session = sessionOf(ctx);
    if (!session.auth || !session.user) throw new ApiError('not_logged_in');
    const refresh = async () => {
      if (!session.auth?.refreshToken) throw new TokenRejected('no refresh token');
      session.auth = await api.refresh(session.auth.refreshToken);
    };
    try {
      if (session.auth.expiresAt < Date.now() + 30_000) await refresh();
      try {
        return await call(session.auth.accessToken);
      } catch (error) {
        if (!(error instanceof TokenRejected)) throw error;
        await refresh();
        return await call(session.auth.accessToken);
      }
    } catch (error) {
      if (error instanceof TokenRejected || (error instanceof ApiError && error.code === 'oauth_failed')) {
        ctx.session = null;
        throw new ApiError('not_logged_in', { detail: '登录已过期' });
      }
      throw error;
    }
  }

  router.get('/oauth/external', limit, (ctx) => {
    const api = configured();
    const state = randomBytes(24).toString('base64url');
    sessionOf(ctx).oauthState = state;
    ctx.set('Cache-Control', 'no-store');
    ctx.redirect(api.authorizeUrl(state));
  });

  router.get('/oauth/external/callback', limit, async (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    const api = configured();
    const session = sessionOf(ctx);
    const expected = session.oauthState;
    delete session.oauthState;
    const state = queryParam(ctx, 'state');
    try {
      if (!expected || !state || !sameText(expected, state)) throw new ApiError('oauth_state_mismatch');
      if (queryParam(ctx, 'error')) throw new ApiError('oauth_denied', { detail: queryParam(ctx, 'error')!.slice(0, 64) });
      const code = queryParam(ctx, 'code');
      if (!code) throw new ApiError('missing_param', { detail: 'code' });
      const auth = await api.exchangeCode(code);
      const user = await api.user(auth.accessToken).catch((error: unknown) => {
        throw error instanceof TokenRejected ? new ApiError('oauth_failed', { detail: 'token rejected' }) : error;
      });
      // A new session id at login, so an id planted before login is worth nothing after it.
      await ctx.session!.regenerate();
      Object.assign(ctx.session!, { user, auth } satisfies AccountSession);
      ctx.redirect('/');
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      failLogin(ctx, error);
    }
  });

  router.get('/oauth/logout', (ctx) => {
    ctx.session = null;
    ctx.set('Cache-Control', 'no-store');
    ctx.redirect('/');
  });

  router.get('/v1/me', limit, (ctx) => {
    const { user } = sessionOf(ctx);
    if (!user) return ok(ctx, { logged_in: false });
    const avatar = `${service.config.external.url}/avatar/user/${user.id}`;
    ok(ctx, { logged_in: true, user: { id: user.id, name: user.name, avatar } });
  });

  router.get('/v1/me/profiles', limit, async (ctx) => {
    if (!sessionOf(ctx).user) return ok(ctx, { logged_in: false, profiles: [] });
    const players = await withToken(ctx, (token) => configured().players(token));
    // /api/players has no UUIDs: resolve the names through the Yggdrasil bulk lookup.
    const hits = players.length > 0 ? await service.lookup.sources.external.namesToIds(players.map((p) => p.name)) : [];
    ok(ctx, { logged_in: true, profiles: hits.map((h) => ({ id: h.id, name: h.name })) });
  });

  const verification: Middleware = async (ctx) => {
    const uuid = await withToken(ctx, (token) => configured().premium(token));
    ok(ctx, { verified: uuid !== null, uuid: uuid ?? '', checked: true, logged_in: true });
  };
  router.get('/v1/me/verification', limit, verification);
  router.get('/v1/me/premium', limit, verification);

  router.post('/v1/me/token', limit, async (ctx) => {
    const body = await readJson(ctx);
    const raw = typeof body === 'object' && body !== null ? (body as { uuid?: unknown }).uuid : undefined;
    if (raw !== undefined && typeof raw !== 'string') throw new ApiError('invalid_uuid');
    const uuid = parseUuid(raw as string | undefined);
    const token = await withToken(ctx, (accessToken) => configured().gameToken(accessToken, uuid));
    ctx.set('Cache-Control', 'no-store');
    ok(ctx, { ...token, created_at: isoWithOffset(), note: TOKEN_NOTE });
  });

  return router;
}
