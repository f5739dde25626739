// The external service's OAuth 2.0 (Laravel Passport) and the user APIs a login unlocks, as
// RFC 6749, 6750 and 7636 say: PKCE S256 on every authorization request, the client secret in
// HTTP Basic (or the form, by setting). A missing scope is missing_scope whether the API says it
// the standard way (403 with WWW-Authenticate error="insufficient_scope") or Blessing Skin's
// (HTTP 200 {code: 403}).
import { ApiError } from '../../../shared/errors.ts';
import type { UpstreamClient } from '../upstream/client.ts';

export interface OAuthSettings {
  clientId: string; clientSecret: string; redirectUrl: string; scopes: string[];
  clientAuth: 'client_secret_basic' | 'client_secret_post';
}

export interface TokenSet { accessToken: string; refreshToken: string | null; expiresAt: number }

export interface ExternalUser { id: number; name: string; email?: string }
export interface ExternalPlayer { pid: number; name: string }

export interface GameToken {
  accessToken: string;
  clientToken: string;
  selectedProfile: { id: string; name: string } | null;
  availableProfiles: { id: string; name: string }[];
}

/** Thrown when the bearer token is no longer accepted (expired, revoked): refresh or log out. */
export class TokenRejected extends Error {}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** An error code (or scope list) from the provider, reduced to the characters RFC 6749 allows there. */
export function oauthErrorCode(text: string, max = 64): string {
  return text.replace(/[^\x20-\x7e]|["\\]/g, '').slice(0, max) || 'unknown';
}

/** error and scope of a `WWW-Authenticate: Bearer ...` challenge (RFC 6750 3). */
function bearerChallenge(header: string | string[] | undefined): { error?: string; scope?: string } {
  const text = Array.isArray(header) ? header.join(', ') : header ?? '';
  if (!/^\s*bearer\b/i.test(text)) return {};
  const param = (name: string) => new RegExp(`\\b${name}="([^"]*)"`, 'i').exec(text)?.[1];
  return { error: param('error'), scope: param('scope') };
}

export class ExternalAccount {
  private readonly client: UpstreamClient;
  private readonly url: string;
  private readonly yggdrasilUrl: string;
  readonly settings: OAuthSettings;

  constructor(client: UpstreamClient, urls: { url: string; yggdrasilUrl: string }, settings: OAuthSettings) {
    this.client = client;
    this.url = urls.url;
    this.yggdrasilUrl = urls.yggdrasilUrl;
    this.settings = settings;
  }

  /** `challenge` is the S256 hash of the login's PKCE verifier. */
  authorizeUrl(state: string, challenge: string): string {
    const query = new URLSearchParams({
      client_id: this.settings.clientId,
      redirect_uri: this.settings.redirectUrl,
      response_type: 'code',
      scope: this.settings.scopes.join(' '),
      state,
      code_challenge: challenge,
      code_challenge_method: 'S256',
    });
    return `${this.url}/oauth/authorize?${query}`;
  }

  exchangeCode(code: string, verifier: string): Promise<TokenSet> {
    return this.token({ grant_type: 'authorization_code', code, redirect_uri: this.settings.redirectUrl, code_verifier: verifier });
  }

  /** New tokens; a refresh answer without a refresh token keeps the one we have (RFC 6749 6). */
  async refresh(current: TokenSet): Promise<TokenSet> {
    if (!current.refreshToken) throw new TokenRejected('no refresh token');
    const next = await this.token({ grant_type: 'refresh_token', refresh_token: current.refreshToken });
    return { ...next, refreshToken: next.refreshToken ?? current.refreshToken };
  }

  /** RFC 6749 2.3.1: Basic carries the form-encoded id and secret; _post puts them in the body. */
  private clientCredentials(): { headers: Record<string, string>; form: Record<string, string> } {
    const { clientId, clientSecret, clientAuth } = this.settings;
    if (clientAuth === 'client_secret_post') return { headers: {}, form: { client_id: clientId, client_secret: clientSecret } };
    const encode = (text: string) => new URLSearchParams({ x: text }).toString().slice(2);
    return { headers: { authorization: `Basic ${Buffer.from(`${encode(clientId)}:${encode(clientSecret)}`).toString('base64')}` }, form: {} };
  }

  private async token(grant: Record<string, string>): Promise<TokenSet> {
    const credentials = this.clientCredentials();
    const response = await this.client.json<Record<string, unknown>>(`${this.url}/oauth/token`, {
      method: 'POST',
      form: { ...grant, ...credentials.form },
      headers: credentials.headers,
      expect: [400, 401],
    });
    const body = response.body;
    if (response.status !== 200 || !isObject(body) || typeof body.access_token !== 'string') {
      throw new ApiError('oauth_failed', { detail: isObject(body) && typeof body.error === 'string' ? oauthErrorCode(body.error) : `HTTP ${response.status}` });
    }
    // Passport always sends expires_in; without it, assume an hour.
    const expiresIn = Number.isFinite(Number(body.expires_in)) && body.expires_in !== null ? Number(body.expires_in) : 3600;
    return {
      accessToken: body.access_token,
      refreshToken: typeof body.refresh_token === 'string' && body.refresh_token ? body.refresh_token : null,
      expiresAt: Date.now() + expiresIn * 1000,
    };
  }

  /**
   * A bearer call. 401: the token was rejected. 403 with RFC 6750's insufficient_scope, or
   * Blessing Skin's 200 {code: 403}: a scope not granted. Another 403 is the caller's when it
   * expects one (a Yggdrasil refusal), else a plain forbidden.
   */
  private async bearer(path: string, accessToken: string, request: { method?: 'GET' | 'POST'; json?: unknown; expect?: number[] } = {}) {
    const response = await this.client.json<unknown>(path, {
      method: request.method ?? 'GET',
      json: request.json,
      headers: { authorization: `Bearer ${accessToken}` },
      expect: [401, 403, ...(request.expect ?? [])],
    });
    if (response.status === 401) throw new TokenRejected('token rejected');
    const challenge = bearerChallenge(response.headers['www-authenticate']);
    if (response.status === 403 && challenge.error === 'insufficient_scope') {
      throw new ApiError('missing_scope', { detail: challenge.scope ? oauthErrorCode(challenge.scope, 120) : undefined });
    }
    if (response.status === 403 && !request.expect?.includes(403)) throw new ApiError('forbidden', { detail: '外部服务拒绝了请求' });
    if (isObject(response.body) && response.body.code === 403) {
      throw new ApiError('missing_scope', { detail: typeof response.body.message === 'string' ? response.body.message.slice(0, 120) : undefined });
    }
    return response;
  }

  async user(accessToken: string): Promise<ExternalUser> {
    const { body } = await this.bearer(`${this.url}/api/user`, accessToken);
    if (!isObject(body) || typeof body.uid !== 'number') throw this.client.malformed('user');
    return { id: body.uid, name: typeof body.nickname === 'string' ? body.nickname : `user ${body.uid}` };
  }

  async players(accessToken: string): Promise<ExternalPlayer[]> {
    const { body } = await this.bearer(`${this.url}/api/players`, accessToken);
    if (!Array.isArray(body)) throw this.client.malformed('players');
    return body.filter((p): p is ExternalPlayer => isObject(p) && typeof p.name === 'string').map((p) => ({ pid: p.pid, name: p.name }));
  }

  /** Premium verification: the verified official UUID, or null when not verified (404). */
  async premium(accessToken: string): Promise<string | null> {
    const response = await this.bearer(`${this.url}/api/premium-verification`, accessToken, { expect: [404] });
    const body = response.body;
    if (response.status === 404) return null;
    if (!isObject(body)) throw this.client.malformed('premium verification');
    return body.verified === true && typeof body.uuid === 'string' ? body.uuid : null;
  }

  /** Yggdrasil game token for one of the user's profiles (never stored, never logged). */
  async gameToken(accessToken: string, uuid: string): Promise<GameToken> {
    const response = await this.bearer(`${this.yggdrasilUrl}/authserver/oauth`, accessToken, { method: 'POST', json: { uuid }, expect: [400, 403] });
    const body = response.body;
    if (response.status === 400 || response.status === 403) {
      const message = isObject(body) && typeof body.errorMessage === 'string' ? body.errorMessage.slice(0, 120) : undefined;
      throw new ApiError('forbidden', { detail: message });
    }
    if (!isObject(body) || typeof body.accessToken !== 'string' || typeof body.clientToken !== 'string') throw this.client.malformed('game token');
    const profile = (p: unknown) => (isObject(p) && typeof p.id === 'string' && typeof p.name === 'string' ? { id: p.id, name: p.name } : null);
    return {
      accessToken: body.accessToken,
      clientToken: body.clientToken,
      selectedProfile: profile(body.selectedProfile),
      availableProfiles: Array.isArray(body.availableProfiles) ? body.availableProfiles.map(profile).filter((p) => p !== null) : [],
    };
  }
}
