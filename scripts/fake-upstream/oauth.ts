// LittleSkin's OAuth 2.0 provider (Laravel Passport, docs/upstream.md B4) and the bearer APIs behind it
// (B5-B8): authorization-code flow with a consent page, single-use codes, rotating refresh tokens.
// As league/oauth2-server (under Passport): the client authenticates with HTTP Basic or in the
// form, and a code_challenge sent with the authorization binds the code to its verifier (PKCE).
import { createHash, randomBytes } from 'node:crypto';
import { normalizeUuid } from '../../shared/uuid.ts';
import { consentPage } from './consent-page.ts';
import { yggError } from './external.ts';
import { formFields, parseJson, redirect, sendBytes, sendJson } from './http.ts';
import type { FakeUser } from './players.ts';
import type { FakeContext, FakeRoute } from './state.ts';

export interface OAuthOptions {
  clientId: string;
  clientSecret: string;
  /** Exact URIs; `*` stands for any run of characters other than / ? # (e.g. any port). */
  redirectUris: string[];
  /** Skip the consent page: approve at once as user 1 with every requested scope. */
  autoApprove?: boolean;
  /** Access-token lifetime; 0 makes every token expired on arrival. */
  tokenTtlSeconds?: number;
  /** Refresh tokens are not rotated: a refresh answer has no refresh_token and the old one lives on. */
  keepRefreshTokens?: boolean;
}

export const DEFAULT_OAUTH: OAuthOptions = {
  clientId: 'skinfarm-demo',
  clientSecret: 'demo-secret',
  redirectUris: ['http://127.0.0.1:*/oauth/external/callback', 'http://localhost:*/oauth/external/callback'],
};

const SCOPES = new Set([
  'openid', 'offline_access', 'User.Read', 'Player.Read', 'Player.ReadWrite', 'Closet.Read', 'Closet.ReadWrite',
  'Notification.Read', 'PremiumVerification.Read', 'Yggdrasil.PlayerProfiles.Read', 'Yggdrasil.PlayerProfiles.Select',
  'Yggdrasil.Server.Join', 'Yggdrasil.MinecraftToken.Create',
]);
const DEFAULT_TTL_SECONDS = 259_200;
const CODE_TTL_MS = 10 * 60_000;
const REFRESH_TTL_MS = 30 * 24 * 3_600_000;

interface Grant { uid: number; scopes: string[] }
interface Pkce { challenge: string; method: 'S256' | 'plain' }
interface Authorization { redirectUri: string; scopes: string[]; state: string | null; pkce: Pkce | null }
interface Issued extends Grant { expiresAt: number; pair: string }

const secret = () => randomBytes(32).toString('base64url');

export class OAuthProvider {
  private readonly options: OAuthOptions;
  private readonly redirectPatterns: RegExp[];
  private readonly pending = new Map<string, Authorization>();
  private readonly codes = new Map<string, Grant & { redirectUri: string; expiresAt: number; pkce: Pkce | null }>();
  private readonly access = new Map<string, Issued>();
  private readonly refresh = new Map<string, Issued>();

  constructor(options: OAuthOptions) {
    this.options = options;
    this.redirectPatterns = options.redirectUris.map((uri) =>
      new RegExp(`^${uri.split('*').map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('[^/?#]*')}$`));
  }

  get autoApprove(): boolean {
    return this.options.autoApprove ?? false;
  }

  clientIs(id: string | null | undefined): boolean {
    return id === this.options.clientId;
  }

  clientAuthenticates(id: string | undefined, secretText: string | undefined): boolean {
    return this.clientIs(id) && secretText === this.options.clientSecret;
  }

  redirectAllowed(uri: string): boolean {
    return URL.canParse(uri) && this.redirectPatterns.some((p) => p.test(uri));
  }

  /** Remembers a request shown on the consent page; the id travels in the form. */
  hold(authorization: Authorization): string {
    const id = secret();
    this.pending.set(id, authorization);
    return id;
  }

  release(id: string): Authorization | undefined {
    const authorization = this.pending.get(id);
    this.pending.delete(id);
    return authorization;
  }

  issueCode(grant: Grant, redirectUri: string, pkce: Pkce | null): string {
    const code = secret();
    this.codes.set(code, { ...grant, redirectUri, pkce, expiresAt: Date.now() + CODE_TTL_MS });
    return code;
  }

  /** Single use: the code is gone whether or not the exchange succeeds. */
  redeemCode(code: string, redirectUri: string, verifier: string | undefined): Grant | undefined {
    const entry = this.codes.get(code);
    this.codes.delete(code);
    if (!entry || entry.expiresAt <= Date.now() || entry.redirectUri !== redirectUri) return undefined;
    if (entry.pkce) {
      if (!verifier) return undefined;
      const derived = entry.pkce.method === 'S256' ? createHash('sha256').update(verifier).digest('base64url') : verifier;
      if (derived !== entry.pkce.challenge) return undefined;
    }
    return { uid: entry.uid, scopes: entry.scopes };
  }

  /** Uses a refresh token up (unless refresh tokens are kept), revoking its access token at once. */
  redeemRefresh(token: string): Grant | undefined {
    const entry = this.refresh.get(token);
    if (!entry) return undefined;
    if (!this.options.keepRefreshTokens) this.refresh.delete(token);
    this.access.delete(entry.pair);
    return entry.expiresAt > Date.now() ? { uid: entry.uid, scopes: entry.scopes } : undefined;
  }

  /** A new pair; with `kept` (a refresh token that lives on) only a new access token. */
  issueTokens(grant: Grant, kept?: string) {
    const ttl = this.options.tokenTtlSeconds ?? DEFAULT_TTL_SECONDS;
    const accessToken = secret();
    const refreshToken = kept ?? secret();
    this.access.set(accessToken, { ...grant, expiresAt: Date.now() + ttl * 1000, pair: refreshToken });
    if (kept) {
      this.refresh.get(kept)!.pair = accessToken;
      return { token_type: 'Bearer', expires_in: ttl, access_token: accessToken };
    }
    this.refresh.set(refreshToken, { ...grant, expiresAt: Date.now() + REFRESH_TTL_MS, pair: accessToken });
    return { token_type: 'Bearer', expires_in: ttl, access_token: accessToken, refresh_token: refreshToken };
  }

  get keepsRefreshTokens(): boolean {
    return this.options.keepRefreshTokens ?? false;
  }

  /** The grant behind a live access token. */
  bearer(token: string): Grant | undefined {
    const entry = this.access.get(token);
    return entry && entry.expiresAt > Date.now() ? entry : undefined;
  }
}

/** Passport's JSON error body. */
function oauthError(ctx: FakeContext, error: string, description: string): void {
  sendJson(ctx.res, 400, { error, error_description: description, message: description });
}

function redirectWith(ctx: FakeContext, redirectUri: string, params: Record<string, string | null>): void {
  const target = new URL(redirectUri);
  for (const [k, v] of Object.entries(params)) if (v !== null) target.searchParams.set(k, v);
  redirect(ctx.res, target.toString());
}

function authorize(ctx: FakeContext): void {
  const { oauth, players } = ctx.state;
  const q = ctx.url.searchParams;
  const clientId = q.get('client_id');
  const redirectUri = q.get('redirect_uri') ?? '';
  if (!oauth.clientIs(clientId)) return oauthError(ctx, 'invalid_client', 'Client authentication failed');
  if (!oauth.redirectAllowed(redirectUri)) return oauthError(ctx, 'invalid_client', 'Client authentication failed');
  if (q.get('response_type') !== 'code') return oauthError(ctx, 'unsupported_response_type', 'The authorization server does not support this response type.');
  const state = q.get('state');
  const challenge = q.get('code_challenge');
  const method = q.get('code_challenge_method') ?? 'plain';
  if (challenge !== null && (!/^[A-Za-z0-9._~-]{43,128}$/.test(challenge) || (method !== 'S256' && method !== 'plain'))) {
    return redirectWith(ctx, redirectUri, { error: 'invalid_request', error_description: 'Code challenge must follow the specifications of RFC-7636.', state });
  }
  const pkce = challenge === null ? null : { challenge, method: method as Pkce['method'] };
  const scopes = (q.get('scope') ?? '').split(' ').filter(Boolean);
  if (scopes.length === 0) scopes.push('User.Read');
  const unknown = scopes.find((s) => !SCOPES.has(s));
  if (unknown !== undefined || (scopes.includes('Yggdrasil.PlayerProfiles.Read') && scopes.includes('Yggdrasil.PlayerProfiles.Select'))) {
    return redirectWith(ctx, redirectUri, { error: 'invalid_scope', error_description: `The requested scope is invalid: ${unknown ?? 'Yggdrasil.PlayerProfiles.Select'}`, state });
  }
  if (oauth.autoApprove) return redirectWith(ctx, redirectUri, { code: oauth.issueCode({ uid: 1, scopes }, redirectUri, pkce), state });
  const requestId = oauth.hold({ redirectUri, scopes, state, pkce });
  sendBytes(ctx.res, 200, 'text/html; charset=utf-8', consentPage({ requestId, clientId: clientId!, redirectUri, scopes, users: players.users }));
}

/** The consent form's answer. */
function decide(ctx: FakeContext): void {
  const { oauth, players } = ctx.state;
  const form = formFields(ctx.req, ctx.body);
  const authorization = oauth.release(form.request ?? '');
  if (!authorization) return oauthError(ctx, 'invalid_request', 'The authorization request is unknown or was already answered.');
  const { redirectUri, scopes, state, pkce } = authorization;
  const user = players.user(Number(form.user));
  if (form.decision !== 'approve' || !user) {
    return redirectWith(ctx, redirectUri, { error: 'access_denied', error_description: 'The resource owner or authorization server denied the request.', state });
  }
  redirectWith(ctx, redirectUri, { code: oauth.issueCode({ uid: user.uid, scopes }, redirectUri, pkce), state });
}

/** `Authorization: Basic` id and secret (form-decoded, as RFC 6749 2.3.1 encodes them). */
function basicCredentials(header: string | undefined): { id: string; secret: string } | undefined {
  const encoded = /^Basic\s+([A-Za-z0-9+/=]+)$/i.exec(header ?? '')?.[1];
  const decoded = encoded ? Buffer.from(encoded, 'base64').toString('utf8') : '';
  const colon = decoded.indexOf(':');
  if (colon < 0) return undefined;
  const form = (text: string) => new URLSearchParams(`x=${text}`).get('x') ?? '';
  return { id: form(decoded.slice(0, colon)), secret: form(decoded.slice(colon + 1)) };
}

function token(ctx: FakeContext): void {
  const { oauth } = ctx.state;
  const f = formFields(ctx.req, ctx.body);
  if (f.grant_type !== 'authorization_code' && f.grant_type !== 'refresh_token') {
    return oauthError(ctx, f.grant_type ? 'unsupported_grant_type' : 'invalid_request', 'The authorization grant type is not supported by the authorization server.');
  }
  // Form fields first, HTTP Basic as the fallback (league/oauth2-server's getClientCredentials).
  const basic = basicCredentials(ctx.req.headers.authorization);
  const clientId = f.client_id ?? basic?.id;
  if (!clientId) return oauthError(ctx, 'invalid_request', 'Check the `client_id` parameter');
  if (!oauth.clientAuthenticates(clientId, f.client_secret ?? basic?.secret)) return oauthError(ctx, 'invalid_client', 'Client authentication failed');
  const required = f.grant_type === 'authorization_code' ? ['code', 'redirect_uri'] : ['refresh_token'];
  const missing = required.find((k) => !f[k]);
  if (missing) return oauthError(ctx, 'invalid_request', `Check the \`${missing}\` parameter`);
  const grant = f.grant_type === 'authorization_code' ? oauth.redeemCode(f.code, f.redirect_uri, f.code_verifier) : oauth.redeemRefresh(f.refresh_token);
  if (!grant) return oauthError(ctx, 'invalid_grant', 'The provided authorization grant or refresh token is invalid, expired or revoked.');
  const kept = f.grant_type === 'refresh_token' && oauth.keepsRefreshTokens ? f.refresh_token : undefined;
  sendJson(ctx.res, 200, oauth.issueTokens(grant, kept));
}

/**
 * Blessing Skin's guards: no live token is Laravel's 401; a token without the scope is, oddly,
 * HTTP 200 with code 403 in the body. Answers and returns undefined when the request stops here.
 */
function userFor(ctx: FakeContext, anyScope: string[]): FakeUser | undefined {
  const token = /^Bearer\s+(\S+)$/i.exec(ctx.req.headers.authorization ?? '')?.[1];
  const grant = token ? ctx.state.oauth.bearer(token) : undefined;
  const user = grant && ctx.state.players.user(grant.uid);
  if (!grant || !user) return void sendJson(ctx.res, 401, { message: 'Unauthenticated.' });
  if (!anyScope.some((s) => grant.scopes.includes(s))) return void sendJson(ctx.res, 200, { code: 403, message: 'Invalid scope(s) provided.' });
  return user;
}

const STAMP = '2024-01-01 00:00:00';

function apiUser(ctx: FakeContext): void {
  const user = userFor(ctx, ['User.Read']);
  if (!user) return;
  sendJson(ctx.res, 200, {
    uid: user.uid, email: user.email, nickname: user.nickname, avatar: 0, score: 1000, permission: 0,
    last_sign_at: STAMP, register_at: STAMP, verified: true,
  });
}

function apiPlayers(ctx: FakeContext): void {
  const user = userFor(ctx, ['Player.Read', 'Player.ReadWrite']);
  if (!user) return;
  sendJson(ctx.res, 200, user.players.map(({ pid, player }) => ({
    pid, uid: user.uid, name: player.name, tid_skin: player.skin ? 100 + pid : 0, tid_cape: player.cape ? 200 + pid : 0, last_modified: STAMP,
  })));
}

function apiPremium(ctx: FakeContext): void {
  const user = userFor(ctx, ['PremiumVerification.Read']);
  if (!user) return;
  if (user.premiumUuid) sendJson(ctx.res, 200, { code: 0, verified: true, uuid: user.premiumUuid });
  else sendJson(ctx.res, 404, { code: 0, verified: false });
}

/** A Yggdrasil game token for one of the user's players, shaped as `authenticate` answers. */
function gameToken(ctx: FakeContext): void {
  const user = userFor(ctx, ['Yggdrasil.MinecraftToken.Create']);
  if (!user) return;
  const body = parseJson(ctx.body) as { uuid?: unknown } | undefined;
  const uuid = typeof body?.uuid === 'string' ? normalizeUuid(body.uuid) : null;
  if (!uuid) return yggError(ctx, 400, 'IllegalArgumentException', 'Invalid uuid.');
  const profiles = user.players.map(({ player }) => ({ id: player.uuid, name: player.name }));
  const selected = profiles.find((p) => p.id === uuid);
  if (!selected) return yggError(ctx, 403, 'ForbiddenOperationException', 'The profile does not belong to this user.');
  const hex = () => randomBytes(16).toString('hex');
  sendJson(ctx.res, 200, { accessToken: hex(), clientToken: hex(), availableProfiles: profiles, selectedProfile: selected });
}

export const oauthRoutes: FakeRoute[] = [
  { method: 'GET', pattern: /^\/external\/oauth\/authorize$/, key: 'oauth.authorize', handler: authorize },
  { method: 'POST', pattern: /^\/external\/oauth\/authorize$/, key: 'oauth.authorize', handler: decide },
  { method: 'POST', pattern: /^\/external\/oauth\/token$/, key: 'oauth.token', handler: token },
  { method: 'GET', pattern: /^\/external\/api\/user$/, key: 'api.user', handler: apiUser },
  { method: 'GET', pattern: /^\/external\/api\/players$/, key: 'api.players', handler: apiPlayers },
  { method: 'GET', pattern: /^\/external\/api\/premium-verification$/, key: 'api.premium', handler: apiPremium },
  { method: 'POST', pattern: /^\/external\/api\/yggdrasil\/authserver\/oauth$/, key: 'ygg.oauth', handler: gameToken },
];
